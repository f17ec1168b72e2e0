// The values behind the market-maker endpoints, per market maker, pair and bucket: each
// wallet's trusted values, the organization's reported ones, and the whole market's for
// coverage, read for the caller's window and computed by the domain's rules
// (domain/market-makers/values.ts, domain/market/values.ts). The endpoints shape rows from these.
import { DateTime } from 'luxon';
import { levelIndex, levelName } from '../../../domain/market/facts.ts';
import { depth, volume as marketVolume } from '../../../domain/market/values.ts';
import type { BookPartial, TradePartial } from '../../../domain/market/families/index.ts';
import type { PartialsRepository } from '../../../domain/market/repositories/partials.ts';
import type { MarketQuery } from '../../../domain/market/repositories/stored-rows.ts';
import type { MarketMakerMetrics } from '../../../domain/market-makers/metrics.ts';
import { coarsestReported, reportedValues, walletValuesOf, type Values } from '../../../domain/market-makers/values.ts';
import type { Pair, Wallet } from '../../../domain/reference/repository.ts';
import type { MmRequest } from './request.ts';

export type { Values };

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

  for (const t of walletValuesOf(trusted.depth, trusted.volume, at)) {
    const wallet = req.wallets.get(t.wallet_id);
    const pair = pairs.get(key(t.exchange, t.pair));
    if (!wallet || !pair || !visible(wallet.organization, t.exchange, t.pair)) continue;
    cellOf(wallet.organization, pair, t.b).trusted.push({ wallet, values: t.values });
  }

  // The summary shows a reported row only in a bucket without trusted values: it reads
  // reported values only for the pairs that have such a bucket (every bucket of the
  // window, or the one of `a`), once the trusted values are known.
  let reported = early;
  if (want.reported === 'untrusted') {
    const buckets = bucketStarts(w);
    reported = await readReported(allKeys.filter((k) => buckets.some((b) => !cells.has(key(k.organization, k.exchange, k.pair, b)))));
  }

  const chosen = w.interval === 'a' ? coarsestReported(reported) : reported;
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
      bid: at.map((i) => depth(bk, 'bid', i)),
      ask: at.map((i) => depth(bk, 'ask', i)),
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
