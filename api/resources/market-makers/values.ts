// The values behind the market-maker endpoints, per market maker, pair and bucket: each
// wallet's trusted values, the organization's reported ones, and the whole market's for
// coverage (addendum section 4). The endpoints shape rows from these.
import { DateTime } from 'luxon';
import { levelIndex, levelName } from '../../../domain/market/facts.ts';
import type { BookPartial, TradePartial } from '../../../domain/market/families/index.ts';
import type { PartialsRepository } from '../../../domain/market/repositories/partials.ts';
import type { MarketQuery } from '../../../domain/market/repositories/stored-rows.ts';
import { REPORTED_INTERVALS, type MarketMakerMetrics, type ReportedBucket } from '../../../domain/market-makers/metrics.ts';
import type { Pair, Wallet } from '../../../domain/reference/repository.ts';
import { volume as marketVolume } from '../market/rows.ts';
import type { MmRequest } from './request.ts';

/** Volume and depth at the requested levels (null where unknown). */
export interface Values {
  volume: number | null;
  bid: (number | null)[];
  ask: (number | null)[];
}

export interface Cell {
  maker: string;
  pair: Pair;
  /** Bucket start (epoch s; 0 for `a`). */
  b: number;
  /** Trusted values per wallet of the market maker with data in the bucket, by wallet number. */
  trusted: { wallet: Wallet; values: Values }[];
  reported: Values | undefined;
  /** Whether the reported values hold volume (4.12 lists pairs with reported volume). */
  reportedVolume: boolean;
}

export interface MmValues {
  cells: Cell[];
  /** The whole market of a pair in a bucket, for coverage. */
  market(pair: Pair, b: number): Values | undefined;
}

const key = (...parts: (string | number)[]) => parts.join('\u0000');
const div = (a: number | undefined, n: number) => (a !== undefined && n > 0 ? a / n : null);

export interface Sources {
  metrics: MarketMakerMetrics;
  partials: PartialsRepository;
}

/**
 * What an endpoint reads. Reported values: `all` the requested levels and volume, `volume`
 * volume only, `untrusted` as `all` but only for the market makers' pairs with a bucket
 * none of whose wallets has trusted values (where the summary shows reported values).
 */
export interface Want {
  trustedDepth: boolean;
  trustedVolume: boolean;
  reported: 'no' | 'all' | 'volume' | 'untrusted';
  market: boolean;
}

/** Reads what `want` names for the request's market makers, pairs and window. */
export async function readValues(src: Sources, req: MmRequest, want: Want): Promise<MmValues> {
  const w = req.window;
  const q: MarketQuery = { pairs: req.pairs, interval: w.interval, zone: w.zone, pieces: w.plan.pieces };
  const at = req.levels.map(levelIndex);
  const names = req.levels.map(levelName);
  const metrics = want.reported === 'volume' ? ['volume/volume'] : ['volume/volume', ...names.map((l) => `depth/bid_${l}bps`), ...names.map((l) => `depth/ask_${l}bps`)];
  const allKeys = [...req.makers].flatMap(([organization, m]) => m.pairs.map((p) => ({ organization, exchange: p.exchange, pair: p.pair })));
  const readReported = (keys: typeof allKeys) =>
    keys.length === 0 ? Promise.resolve([]) : src.metrics.reported({ keys, metrics, ranges: w.ranges, interval: w.interval, zone: w.zone });
  const trustedWanted = want.trustedDepth || want.trustedVolume;
  const [trusted, early, books, trades] = await Promise.all([
    trustedWanted ? src.metrics.trusted(q, [...req.wallets.keys()], { depth: want.trustedDepth, volume: want.trustedVolume }) : { depth: [], volume: [] },
    want.reported === 'all' || want.reported === 'volume' ? readReported(allKeys) : [],
    want.market ? src.partials.read('book', q) : ([] as BookPartial[]),
    want.market ? src.partials.read('trade', q) : ([] as TradePartial[]),
  ]);

  const pairs = new Map(req.pairs.map((p) => [key(p.exchange, p.pair), p]));
  const cells = new Map<string, Cell>();
  const cellOf = (maker: string, pair: Pair, b: number) => {
    const k = key(maker, pair.exchange, pair.pair, b);
    let c = cells.get(k);
    if (!c) {
      c = { maker, pair, b, trusted: [], reported: undefined, reportedVolume: false };
      cells.set(k, c);
    }
    return c;
  };
  // A market maker's values count only on the pairs of the assets the caller sees of it.
  const seen = new Map([...req.makers].map(([slug, m]) => [slug, new Set(m.pairs.map((p) => key(p.exchange, p.pair)))]));
  const visible = (maker: string, exchange: string, pair: string) => seen.get(maker)?.has(key(exchange, pair)) ?? false;

  // Trusted, per wallet: depth means over minutes with orders; volume the fills' USD sum
  // (0 with orders but no fill; null when no fill had a USD rate).
  const byWallet = new Map<string, Values>();
  for (const d of trusted.depth) {
    byWallet.set(key(d.wallet_id, d.exchange, d.pair, d.b), {
      volume: 0,
      bid: at.map((i) => div(d.bid_depth_sum[i], d.minutes)),
      ask: at.map((i) => div(d.ask_depth_sum[i], d.minutes)),
    });
  }
  for (const v of trusted.volume) {
    const k = key(v.wallet_id, v.exchange, v.pair, v.b);
    const values = byWallet.get(k) ?? { volume: 0, bid: at.map(() => null), ask: at.map(() => null) };
    values.volume = v.fills === 0 ? 0 : v.usd_fills > 0 ? v.volume_usd : null;
    byWallet.set(k, values);
  }
  for (const [k, values] of byWallet) {
    const [walletId, exchange, pairName, b] = k.split('\u0000') as [string, string, string, string];
    const wallet = req.wallets.get(Number(walletId));
    const pair = pairs.get(key(exchange, pairName));
    if (!wallet || !pair || !visible(wallet.organization, exchange, pairName)) continue;
    cellOf(wallet.organization, pair, Number(b)).trusted.push({ wallet, values });
  }

  // The summary shows a reported row only in a bucket without trusted values: it reads
  // reported values only for the pairs that have such a bucket (every bucket of the
  // window, or the one of `a`), once the trusted values are known.
  let reported = early;
  if (want.reported === 'untrusted') {
    const buckets = bucketStarts(w);
    reported = await readReported(allKeys.filter((k) => buckets.some((b) => !cells.has(key(k.organization, k.exchange, k.pair, b)))));
  }

  // Reported: with `a`, each market maker's coarsest interval that has values in the window.
  let chosen = reported;
  if (w.interval === 'a') {
    const best = new Map<string, number>();
    for (const r of reported) {
      const k = key(r.organization, r.exchange, r.pair);
      best.set(k, Math.min(best.get(k) ?? Infinity, REPORTED_INTERVALS.indexOf(r.interval)));
    }
    chosen = reported.filter((r) => best.get(key(r.organization, r.exchange, r.pair)) === REPORTED_INTERVALS.indexOf(r.interval));
  }
  for (const r of chosen) {
    const pair = pairs.get(key(r.exchange, r.pair));
    if (!pair || !visible(r.organization, r.exchange, r.pair)) continue;
    const c = cellOf(r.organization, pair, r.b);
    c.reported = reportedValues(r, names);
    c.reportedVolume = r.counts.has('volume/volume');
  }

  const market = new Map<string, Values>();
  const tradeOf = new Map(trades.map((t) => [key(t.exchange, t.pair, t.b), t]));
  for (const bk of books) {
    market.set(key(bk.exchange, bk.pair, bk.b), {
      volume: marketVolume(tradeOf.get(key(bk.exchange, bk.pair, bk.b))),
      bid: at.map((i) => div(bk.bid_depth_sum[i], bk.depth_minutes)),
      ask: at.map((i) => div(bk.ask_depth_sum[i], bk.depth_minutes)),
    });
  }
  for (const t of trades) {
    const k = key(t.exchange, t.pair, t.b);
    if (!market.has(k)) market.set(k, { volume: marketVolume(t), bid: at.map(() => null), ask: at.map(() => null) });
  }

  const order = [...cells.values()].sort(
    (a, b) =>
      a.maker.localeCompare(b.maker) || a.pair.asset.localeCompare(b.pair.asset) || a.pair.exchange.localeCompare(b.pair.exchange) || a.pair.pair.localeCompare(b.pair.pair) || a.b - b.b,
  );
  for (const c of order) c.trusted.sort((x, y) => x.wallet.number - y.wallet.number || x.wallet.id - y.wallet.id);
  return { cells: order, market: (pair, b) => market.get(key(pair.exchange, pair.pair, b)) };
}

/** Volume is a sum over the bucket's reported values; depth their mean. */
function reportedValues(r: ReportedBucket, names: string[]): Values {
  const mean = (m: string) => div(r.sums.get(m), r.counts.get(m) ?? 0);
  return {
    volume: r.sums.get('volume/volume') ?? null,
    bid: names.map((l) => mean(`depth/bid_${l}bps`)),
    ask: names.map((l) => mean(`depth/ask_${l}bps`)),
  };
}

/** The trusted values of a market maker's wallets together (sums; null only when every wallet's is). */
export function sumWallets(trusted: Cell['trusted']): Values {
  const add = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : a + b);
  const first = trusted[0]!.values;
  const out: Values = { volume: first.volume, bid: [...first.bid], ask: [...first.ask] };
  for (const t of trusted.slice(1)) {
    out.volume = add(out.volume, t.values.volume);
    out.bid = out.bid.map((v, i) => add(v, t.values.bid[i]!));
    out.ask = out.ask.map((v, i) => add(v, t.values.ask[i]!));
  }
  return out;
}

/** 100 x the market maker's value / the whole market's, at most 100; null when either is unknown or the market had nothing. */
export function coverage(value: number | null, whole: number | null | undefined): number | null {
  if (value === null || whole === null || whole === undefined || whole <= 0) return null;
  return Math.min(100, (100 * value) / whole);
}

/** The bucket starts (epoch s) of a window of fixed buckets, in its zone. */
export function bucketStarts(w: MmRequest['window']): number[] {
  if (w.interval === 'a') return [0];
  const unit = w.interval === '1d' ? { days: 1 } : w.interval === '1h' ? { hours: 1 } : { minutes: 5 };
  const out = new Set<number>();
  for (const [from, to] of w.ranges) {
    let t = DateTime.fromMillis(from, { zone: w.zone });
    t = w.interval === '1d' ? t.startOf('day') : w.interval === '1h' ? t.startOf('hour') : t.startOf('minute').minus({ minutes: t.minute % 5 });
    for (; t.toMillis() < to; t = t.plus(unit)) out.add(Math.floor(t.toMillis() / 1000));
  }
  return [...out].sort((a, b) => a - b);
}

export const depthNames = (levels: number[], side: 'bid' | 'ask', suffix = '') => levels.map((l) => `${side}_${levelName(l)}bps${suffix}`);
