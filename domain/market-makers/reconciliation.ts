// What the reconciliation compares (its endpoint: api/resources/market-makers/reconciliation.ts):
// per market maker, exchange, pair and bucket where it both reported and was measured, each
// metric's reported value and its wallets' trusted value over the same reported buckets.
//
// Each reported bucket is compared with the trusted values of the minutes its latest push
// covers (reporting.ts), not with the window's: a report of an open bucket covers the
// minutes ended before its push, a daily report all of its day whatever the window. A row
// over several reported buckets (`a`) compares the mean (volume: the sum) of the buckets
// both sides have (compareBuckets in values.ts).
import { LEVELS_BPS, levelIndex, levelName } from '../market/facts.ts';
import { mean } from '../market/values.ts';
import { planBuckets, type Range } from '../market/window.ts';
import type { Pair, Wallet } from '../reference/repository.ts';
import { REPORTED_INTERVALS, type ReportedInterval, type ReportedValuesOf } from './metrics.ts';
import { inAnswerOrder, type MarketMakerReadings, type MmQuery } from './readings.ts';
import { coveredMinutes } from './reporting.ts';
import { addPackedWallet, coarsestReported, compareBuckets, oneBucketComparedPacked, trustedVolume, type PackedCompared } from './values.ts';
import { TwoKeyMap, mapKey } from '../../lib/map-key.ts';
import { MINUTE_MS } from '../../lib/time.ts';

export interface ReconciledRow {
  maker: string;
  pair: Pair;
  b: number;
  /** Per metric (volume, then bid and ask at each level asked: reconciledMetrics), the reported side; NaN where unknown. */
  reported: Float64Array;
  /** Per metric, the trusted side; NaN where unknown. */
  trusted: Float64Array;
  /** Per metric, 1 where both sides cover the same buckets (only then is a difference shown and judged). */
  matched: Uint8Array;
}

/** The names of the compared metrics, in the order of ReconciledRow's arrays. */
export function reconciledMetrics(levels: readonly number[]): string[] {
  return ['volume', ...levels.map((l) => `bid_${levelName(l)}bps`), ...levels.map((l) => `ask_${levelName(l)}bps`)];
}


/** The rows: per market maker, pair and bucket of the answer, each metric's two sides over the same reported buckets; in the answers' order. */
export async function reconcile(readings: MarketMakerReadings, req: MmQuery, latenessMs: number): Promise<ReconciledRow[]> {
  const w = req.window;
  const names = req.levels.map(levelName);
  const metricIds = ['volume/volume', ...names.map((l) => `depth/bid_${l}bps`), ...names.map((l) => `depth/ask_${l}bps`)];
  const keys = [...req.makers].flatMap(([organization, m]) => m.pairs.map((p) => ({ organization, exchange: p.exchange, pair: p.pair })));
  if (keys.length === 0) return [];
  const read = await readings.metrics.reportedBuckets({ keys, metrics: metricIds, ranges: w.ranges, interval: w.interval, zone: w.zone });
  // With `a`, each market maker's coarsest interval reported in the window, as the summary.
  const buckets = w.interval === 'a' ? coarsestReported(read) : read;
  const covered = buckets.flatMap((r) => {
    const range = coveredMinutes(r.interval, r.start, r.pushedAt, latenessMs);
    return range ? [{ r, range }] : [];
  });
  const trusted = await trustedOver(
    readings,
    req,
    covered.map(({ r, range }) => ({ interval: r.interval, range, exchange: r.exchange, pair: r.pair })),
  );

  const pairs = new TwoKeyMap<string, string, Pair>(req.pairs.map((p) => [p.exchange, p.pair, p]));
  const walletsOf = new Map<string, Wallet[]>();
  for (const wallet of req.wallets.values()) walletsOf.set(wallet.organization, [...(walletsOf.get(wallet.organization) ?? []), wallet]);
  const cells = new TwoKeyMap<string, number, { maker: string; pair: Pair; b: number; both: { reported: ReportedValuesOf; trusted: Float64Array }[] }>();
  for (const { r, range } of covered) {
    const pair = pairs.get(r.exchange, r.pair);
    if (!pair || !req.makers.get(r.organization)?.pairs.includes(pair)) continue;
    // Its wallets together, in the wallets' order.
    let sum: Float64Array | undefined;
    for (const wallet of walletsOf.get(r.organization) ?? []) {
      const t = trusted.get(mapKey(r.interval, wallet.id, r.exchange, r.pair), rangeKey(range));
      if (!t) continue;
      if (!sum) sum = t.slice();
      else addPackedWallet(sum, t);
    }
    if (!sum) continue;
    const k = mapKey(r.organization, r.exchange, r.pair);
    let c = cells.get(k, r.b);
    if (!c) {
      c = { maker: r.organization, pair, b: r.b, both: [] };
      cells.set(k, r.b, c);
    }
    c.both.push({ reported: r, trusted: sum });
  }

  // Per row, each metric's two sides in arrays, not an object per metric: a month is over
  // a million comparisons. Both sides by their metric's position in metricIds, NaN unknown.
  const width = metricIds.length;
  const ordered = inAnswerOrder(cells.values());
  const all: PackedCompared = { reported: new Float64Array(ordered.length * width), trusted: new Float64Array(ordered.length * width), matched: new Uint8Array(ordered.length * width) };
  const orNull = (x: number) => (Number.isNaN(x) ? null : x);
  return ordered.map((c, row) => {
    const at = row * width;
    // One reported bucket, as every row but those of `a` has, compared packed.
    if (c.both.length === 1) oneBucketComparedPacked(c.both[0]!.reported.values, c.both[0]!.trusted, all, at);
    else {
      for (let j = 0; j < width; j++) {
        const x = compareBuckets(
          c.both.map((b) => ({ reported: orNull(b.reported.values[j]!), trusted: orNull(b.trusted[j]!) })),
          j === 0 ? 'sum' : 'mean',
        );
        all.reported[at + j] = x.reported ?? NaN;
        all.trusted[at + j] = x.trusted ?? NaN;
        all.matched[at + j] = x.matched ? 1 : 0;
      }
    }
    return {
      maker: c.maker,
      pair: c.pair,
      b: c.b,
      reported: all.reported.subarray(at, at + width),
      trusted: all.trusted.subarray(at, at + width),
      matched: all.matched.subarray(at, at + width),
    };
  });
}

/** A range of whole minutes as one number (exact: its start's minutes times 2^21, and its length in minutes, under 2^21). */
const rangeKey = ([from, to]: Range): number => (from / MINUTE_MS) * 2 ** 21 + (to - from) / MINUTE_MS;

/**
 * The trusted values of each wallet over each reported bucket's covered minutes, at the
 * levels asked, by (interval, wallet, exchange, pair) and then the range (rangeKey):
 * volume, then bid and ask at each level (reconciledMetrics' order), NaN where unknown
 * (trustedVolume's and mean's null). A read takes one range per bucket start, so buckets
 * of one start covered to different minutes (pushes at other times) are read in turns:
 * usually one read per reported interval.
 */
async function trustedOver(
  readings: MarketMakerReadings,
  req: MmQuery,
  wanted: { interval: ReportedInterval; range: Range; exchange: string; pair: string }[],
): Promise<TwoKeyMap<string, number, Float64Array>> {
  const out = new TwoKeyMap<string, number, Float64Array>();
  const wallets = [...req.wallets.keys()];
  if (wallets.length === 0) return out;
  const at = req.levels.map(levelIndex);
  const n = at.length;
  const every = n === LEVELS_BPS.length;
  for (const interval of REPORTED_INTERVALS) {
    // Per bucket start: the distinct ends wanted, and the pairs wanting each.
    const ends = new Map<number, Map<number, Set<string>>>();
    for (const x of wanted.filter((x) => x.interval === interval)) {
      const byEnd = ends.get(x.range[0]) ?? new Map<number, Set<string>>();
      byEnd.set(x.range[1], (byEnd.get(x.range[1]) ?? new Set()).add(mapKey(x.exchange, x.pair)));
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
      const pairs = req.pairs.filter((p) => pairKeys.has(mapKey(p.exchange, p.pair)));
      const q = { pairs, interval, zone: 'UTC', pieces: planBuckets(interval, ranges, 'UTC', req.window.rolledUpTo).pieces };
      const { depth, volume } = await readings.metrics.trusted(q, wallets, { depth: true, volume: true }, every ? undefined : at);
      const endOf = new Map(ranges.map(([a, b]) => [a, b]));
      const slot = (wallet: number, exchange: string, pair: string, b: number) => {
        const start = b * 1000;
        const k = mapKey(interval, wallet, exchange, pair);
        const range = rangeKey([start, endOf.get(start) ?? start]);
        let m = out.get(k, range);
        if (!m) {
          // Without a volume row no fill (0), without a depth row no depth.
          m = new Float64Array(1 + 2 * n).fill(NaN);
          m[0] = 0;
          out.set(k, range, m);
        }
        return m;
      };
      for (const d of depth) {
        const m = slot(d.wallet_id, d.exchange, d.pair, d.b);
        for (let i = 0; i < n; i++) {
          m[1 + i] = mean(d.bid_depth_sum[i], d.minutes) ?? NaN;
          m[1 + n + i] = mean(d.ask_depth_sum[i], d.minutes) ?? NaN;
        }
      }
      for (const v of volume) slot(v.wallet_id, v.exchange, v.pair, v.b)[0] = trustedVolume(v) ?? NaN;
    }
  }
  return out;
}
