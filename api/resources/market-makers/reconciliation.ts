// GET /v2/organizations/market-maker-metrics/reconciliation/ (beyond the specification):
// is the market maker's report true? Per market maker, exchange, pair and bucket where it
// both reported and was measured: the reported and the trusted (its wallets together)
// volume and depth at each level, the report's difference in percent of the measurement,
// and a flag where the report exceeds the measurement by more than `tolerance_pct`.
//
// Each reported bucket is compared with the trusted values of the minutes its latest push
// covers (domain/market-makers/reporting.ts), not with the window's: a report of an open
// bucket covers the minutes ended before its push, a daily report all of its day whatever
// the window. A row over several reported buckets (`a`) compares the mean (volume: the sum)
// of the buckets both sides have.
import { presentOrganization } from '../../presenters.ts';
import { sendRows, wantsCsv } from '../../http/csv.ts';
import { timeColumnNames, timestampOf } from '../../../domain/market/timestamps.ts';
import { INTERVALS, levelIndex, levelName } from '../../../domain/market/facts.ts';
import { planBuckets, type Range } from '../../../domain/market/window.ts';
import { REPORTED_INTERVALS, type ReportedInterval, type ReportedValuesOf } from '../../../domain/market-makers/metrics.ts';
import { mean } from '../../../domain/market/values.ts';
import {
  coarsestReported,
  compareBuckets,
  DEFAULT_TOLERANCE_PCT,
  differencePct,
  overstated,
  sumWallets,
  trustedVolume,
  type Compared,
  type Values,
} from '../../../domain/market-makers/values.ts';
import { coveredMinutes } from '../../../domain/market-makers/reporting.ts';
import type { Pair, Wallet } from '../../../domain/reference/repository.ts';
import { validators } from '../market/schemas.ts';
import { parseMmRequest, type MmRequest } from './request.ts';
import type { MmHandler, MmServices } from './routes.ts';

interface Row {
  maker: string;
  pair: Pair;
  b: number;
  metrics: [string, Compared][];
}

const key = (...parts: (string | number)[]) => parts.join('\u0000');

export const reconciliation: MmHandler = (s) => async (ctx, raw) => {
  const out = wantsCsv(ctx);
  const req = await parseMmRequest(s.deps, ctx, raw, { validate: validators.any, intervals: INTERVALS });
  const tolerance = req.params.tolerance_pct ?? DEFAULT_TOLERANCE_PCT;
  const found = await reconcile(s, req);
  const metrics = ['volume', ...req.levels.map((l) => `bid_${levelName(l)}bps`), ...req.levels.map((l) => `ask_${levelName(l)}bps`)];
  const columns = [
    'organization',
    'asset',
    'exchange',
    'pair',
    ...timeColumnNames(req.window),
    'tolerance_pct',
    'flag',
    'flagged',
    ...metrics.flatMap((m) => [`${m}_reported`, `${m}_trusted`, `${m}_diff_pct`, `${m}_flag`]),
  ];
  const rows: Record<string, unknown>[] = [];
  for (const c of found) {
    const r: Record<string, unknown> = {
      organization: presentOrganization(req.makers.get(c.maker)!.organization),
      asset: c.pair.asset,
      exchange: c.pair.exchange,
      pair: c.pair.pair,
      ...timestampOf(req.window, c.b),
      tolerance_pct: tolerance,
      flag: false,
      flagged: [] as string[],
    };
    for (const [m, { reported, trusted, matched }] of c.metrics) {
      const flag = matched && overstated(reported, trusted, tolerance);
      r[`${m}_reported`] = reported;
      r[`${m}_trusted`] = trusted;
      r[`${m}_diff_pct`] = matched ? differencePct(reported, trusted) : null;
      r[`${m}_flag`] = flag;
      if (flag) (r.flagged as string[]).push(m);
    }
    r.flag = (r.flagged as string[]).length > 0;
    // CSV cells hold text: the flagged metrics space-separated.
    if (out.csv) r.flagged = (r.flagged as string[]).join(' ');
    rows.push(r);
  }
  sendRows(ctx, rows, columns, out);
};

/** The rows: per market maker, pair and bucket of the answer, each metric's two sides over the same reported buckets. */
async function reconcile(s: MmServices, req: MmRequest): Promise<Row[]> {
  const w = req.window;
  const names = req.levels.map(levelName);
  const metricIds = ['volume/volume', ...names.map((l) => `depth/bid_${l}bps`), ...names.map((l) => `depth/ask_${l}bps`)];
  const keys = [...req.makers].flatMap(([organization, m]) => m.pairs.map((p) => ({ organization, exchange: p.exchange, pair: p.pair })));
  if (keys.length === 0) return [];
  const read = await s.metrics.reportedBuckets({ keys, metrics: metricIds, ranges: w.ranges, interval: w.interval, zone: w.zone });
  // With `a`, each market maker's coarsest interval reported in the window, as the summary.
  const buckets = w.interval === 'a' ? coarsestReported(read) : read;
  const latenessMs = s.deps.config.latenessMs;
  const covered = buckets.flatMap((r) => {
    const range = coveredMinutes(r.interval, r.start, r.pushedAt, latenessMs);
    return range ? [{ r, range }] : [];
  });
  const trusted = await trustedOver(s, req, covered.map(({ r, range }) => ({ interval: r.interval, range, exchange: r.exchange, pair: r.pair })));

  const pairs = new Map(req.pairs.map((p) => [key(p.exchange, p.pair), p]));
  const walletsOf = new Map<string, Wallet[]>();
  for (const wallet of req.wallets.values()) walletsOf.set(wallet.organization, [...(walletsOf.get(wallet.organization) ?? []), wallet]);
  const at = req.levels.map(levelIndex);
  const cells = new Map<string, { maker: string; pair: Pair; b: number; both: { reported: ReportedValuesOf; trusted: Values }[] }>();
  for (const { r, range } of covered) {
    const pair = pairs.get(key(r.exchange, r.pair));
    if (!pair || !req.makers.get(r.organization)?.pairs.includes(pair)) continue;
    const own: Values[] = [];
    for (const wallet of walletsOf.get(r.organization) ?? []) {
      const t = trusted.get(key(r.interval, range[0], range[1], wallet.id, r.exchange, r.pair));
      if (t) own.push({ volume: t.volume, bid: at.map((i) => t.bid[i] ?? null), ask: at.map((i) => t.ask[i] ?? null) });
    }
    if (own.length === 0) continue;
    const k = key(r.organization, r.exchange, r.pair, r.b);
    let c = cells.get(k);
    if (!c) {
      c = { maker: r.organization, pair, b: r.b, both: [] };
      cells.set(k, c);
    }
    c.both.push({ reported: r, trusted: sumWallets(own) });
  }

  const compare = (c: { both: { reported: ReportedValuesOf; trusted: Values }[] }, id: string, side: (v: Values) => number | null, combine: 'sum' | 'mean'): Compared =>
    compareBuckets(
      c.both.map((x) => ({ reported: x.reported.values.get(id) ?? null, trusted: side(x.trusted) })),
      combine,
    );
  const rows: Row[] = [...cells.values()].map((c) => ({
    maker: c.maker,
    pair: c.pair,
    b: c.b,
    metrics: [
      ['volume', compare(c, 'volume/volume', (v) => v.volume, 'sum')],
      ...names.map((l, i): [string, Compared] => [`bid_${l}bps`, compare(c, `depth/bid_${l}bps`, (v) => v.bid[i]!, 'mean')]),
      ...names.map((l, i): [string, Compared] => [`ask_${l}bps`, compare(c, `depth/ask_${l}bps`, (v) => v.ask[i]!, 'mean')]),
    ],
  }));
  return rows.sort(
    (a, b) =>
      a.maker.localeCompare(b.maker) || a.pair.asset.localeCompare(b.pair.asset) || a.pair.exchange.localeCompare(b.pair.exchange) || a.pair.pair.localeCompare(b.pair.pair) || a.b - b.b,
  );
}

/** A wallet's trusted values over some minutes: volume, and depth at every level (null without orders). */
interface Measured {
  volume: number | null;
  bid: (number | null)[];
  ask: (number | null)[];
}

/**
 * The trusted values of each wallet over each reported bucket's covered minutes, by
 * (interval, from, to, wallet, exchange, pair). A read takes one range per bucket start, so
 * buckets of one start covered to different minutes (pushes at other times) are read in
 * turns: usually one read per reported interval.
 */
async function trustedOver(s: MmServices, req: MmRequest, wanted: { interval: ReportedInterval; range: Range; exchange: string; pair: string }[]): Promise<Map<string, Measured>> {
  const out = new Map<string, Measured>();
  const wallets = [...req.wallets.keys()];
  if (wallets.length === 0) return out;
  for (const interval of REPORTED_INTERVALS) {
    // Per bucket start: the distinct ends wanted, and the pairs wanting each.
    const ends = new Map<number, Map<number, Set<string>>>();
    for (const x of wanted.filter((x) => x.interval === interval)) {
      const byEnd = ends.get(x.range[0]) ?? new Map<number, Set<string>>();
      byEnd.set(x.range[1], (byEnd.get(x.range[1]) ?? new Set()).add(key(x.exchange, x.pair)));
      ends.set(x.range[0], byEnd);
    }
    for (let turn = 0; ; turn++) {
      const ranges: Range[] = [];
      const pairKeys = new Set<string>();
      for (const [start, byEnd] of ends) {
        const end = [...byEnd.keys()].sort((a, b) => a - b)[turn];
        if (end === undefined) continue;
        ranges.push([start, end]);
        for (const p of byEnd.get(end)!) pairKeys.add(p);
      }
      if (ranges.length === 0) break;
      ranges.sort((a, b) => a[0] - b[0]);
      const pairs = req.pairs.filter((p) => pairKeys.has(key(p.exchange, p.pair)));
      const q = { pairs, interval, zone: 'UTC', pieces: planBuckets(interval, ranges, 'UTC', req.window.rolledUpTo).pieces };
      const { depth, volume } = await s.metrics.trusted(q, wallets);
      const endOf = new Map(ranges.map(([a, b]) => [a, b]));
      const slot = (wallet: number, exchange: string, pair: string, b: number) => {
        const start = b * 1000;
        const k = key(interval, start, endOf.get(start) ?? start, wallet, exchange, pair);
        let m = out.get(k);
        if (!m) {
          m = { volume: 0, bid: [], ask: [] };
          out.set(k, m);
        }
        return m;
      };
      for (const d of depth) {
        const m = slot(d.wallet_id, d.exchange, d.pair, d.b);
        m.bid = d.bid_depth_sum.map((x) => mean(x, d.minutes));
        m.ask = d.ask_depth_sum.map((x) => mean(x, d.minutes));
      }
      for (const v of volume) slot(v.wallet_id, v.exchange, v.pair, v.b).volume = trustedVolume(v);
    }
  }
  return out;
}
