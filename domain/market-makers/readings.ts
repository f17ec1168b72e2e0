// The values behind the market-maker endpoints, per market maker, pair and bucket: each
// wallet's trusted values, the organization's reported ones, and the whole market's for
// coverage, read for a window and computed by the domain's rules (values.ts,
// ../market/values.ts). The endpoints shape rows from these; every statement is in
// metrics.ts and ../market/repositories/partials.ts, its values bound.
import { DateTime } from 'luxon';
import type { ClickHouse } from '../../lib/clickhouse.ts';
import { levelIndex, levelName } from '../market/facts.ts';
import { depth, volume as marketVolume } from '../market/values.ts';
import type { BookPartial, TradePartial } from '../market/families/index.ts';
import { PartialsRepository } from '../market/repositories/partials.ts';
import type { MarketQuery } from '../market/repositories/stored-rows.ts';
import { bucketsOf, mergeRanges, type MarketWindow, type Range } from '../market/window.ts';
import type { Pair, Wallet } from '../reference/repository.ts';
import { MarketMakerMetrics, type ReportedBucket } from './metrics.ts';
import { coarsestReported, packedWallet, reportedValues, type PackedValues, type Values } from './values.ts';
import { TwoKeyMap, mapKey } from '../../lib/map-key.ts';

/** The buckets market-maker values are kept in; other intervals are answered daily. */
export type MmInterval = '5m' | '1h' | '1d' | 'a';

/** What is read: a window, the levels of L, the market makers with the pairs whose values count, and their wallets. */
export interface MmQuery {
  window: MarketWindow & { interval: MmInterval };
  levels: number[];
  /** Market maker -> the pairs of the assets whose values the caller sees. */
  makers: ReadonlyMap<string, { pairs: Pair[] }>;
  /** Every pair read, once. */
  pairs: Pair[];
  /** The wallets of the market makers read, by id. */
  wallets: ReadonlyMap<number, Wallet>;
}

export interface Cell {
  maker: string;
  pair: Pair;
  /** Bucket start (epoch s; 0 for `a`). */
  b: number;
  /** Trusted values per wallet of the market maker with data in the bucket, by wallet number; packed, at the levels asked. */
  trusted: { wallet: Wallet; values: PackedValues }[];
  reported: Values | undefined;
  /** Whether the reported values hold volume (4.12 lists pairs with reported volume). */
  reportedVolume: boolean;
}

export interface MmValues {
  /** In the answers' order: market maker, asset, exchange, pair, bucket; each cell's wallets by number. */
  cells: Cell[];
  /** The whole market of a pair in a bucket, for coverage. */
  market(pair: Pair, b: number): Values | undefined;
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


export class MarketMakerReadings {
  readonly metrics: MarketMakerMetrics;
  readonly partials: PartialsRepository;

  constructor(ch: ClickHouse) {
    this.metrics = new MarketMakerMetrics(ch);
    this.partials = new PartialsRepository(ch);
  }

  /** Reads what `want` names for the query's market makers, pairs and window. */
  async values(req: MmQuery, want: Want): Promise<MmValues> {
    const w = req.window;
    const q: MarketQuery = { pairs: req.pairs, interval: w.interval, zone: w.zone, pieces: w.plan.pieces };
    const at = req.levels.map(levelIndex);
    const names = req.levels.map(levelName);
    const metrics = want.reported === 'volume' ? ['volume/volume'] : ['volume/volume', ...names.map((l) => `depth/bid_${l}bps`), ...names.map((l) => `depth/ask_${l}bps`)];
    const allKeys = [...req.makers].flatMap(([organization, m]) => m.pairs.map((p) => ({ organization, exchange: p.exchange, pair: p.pair })));
    const readReported = (keys: typeof allKeys): Promise<ReportedBucket[]> =>
      keys.length === 0 ? Promise.resolve([]) : this.metrics.reported({ keys, metrics, ranges: w.ranges, interval: w.interval, zone: w.zone });
    const trustedWanted = want.trustedDepth || want.trustedVolume;
    // All asked at once; the trusted values are taken into cells while the engine still
    // reads the others (the embedded engine runs them one after the other, in this order).
    const trustedRead = this.metrics.trusted(q, trustedWanted ? [...req.wallets.keys()] : [], { depth: want.trustedDepth, volume: want.trustedVolume }, at);
    const rest = Promise.all([
      want.reported === 'all' || want.reported === 'volume' ? readReported(allKeys) : [],
      want.market ? this.partials.read('book', q) : ([] as BookPartial[]),
      want.market ? this.partials.read('trade', q) : ([] as TradePartial[]),
    ]);
    // Awaited below; a failure meanwhile is not an unhandled rejection.
    rest.catch(() => undefined);
    const trusted = await trustedRead;

    // Rows name their pair by exchange and symbol; cells and the market's values are kept
    // by the pair read (req.pairs: the makers' pairs are the same objects) and the bucket.
    const pairs = new TwoKeyMap<string, string, Pair>(req.pairs.map((p) => [p.exchange, p.pair, p]));
    const cellsOf = new Map<string, TwoKeyMap<Pair, number, Cell>>();
    const cells: Cell[] = [];
    const cellOf = (maker: string, pair: Pair, b: number) => {
      let m = cellsOf.get(maker);
      if (!m) cellsOf.set(maker, (m = new TwoKeyMap()));
      let c = m.get(pair, b);
      if (!c) {
        c = { maker, pair, b, trusted: [], reported: undefined, reportedVolume: false };
        m.set(pair, b, c);
        cells.push(c);
      }
      return c;
    };
    // A market maker's values count only on the pairs of the assets the caller sees of it.
    const seen = new Map([...req.makers].map(([slug, m]) => [slug, new Set(m.pairs)]));
    const visible = (maker: string, pair: Pair) => seen.get(maker)?.has(pair) ?? false;

    // Each wallet's values of a cell packed as a row of one array, its depth and volume rows
    // found into it: a row per row read at most, so the array never grows and the rows are
    // views of it. The trusted rows hold only the levels asked (`at` was read), in their order.
    // A row's wallet, pair and cell are found through its series (wallet, exchange, pair),
    // found once: a month at 5m is a hundred thousand rows of a thousand series.
    const n = req.levels.length;
    const width = 1 + 2 * n;
    const { depth: depthRows, volume: volumeRows } = trusted;
    const packed = new Float64Array((depthRows.length + volumeRows.length) * width);
    let used = 0;
    type Series = { wallet: Wallet; pair: Pair; rows: Map<number, PackedValues> } | null;
    const seriesOf = new Map<number, TwoKeyMap<string, string, Series>>();
    const rowOf = (walletId: number, exchange: string, pairName: string, b: number): PackedValues | undefined => {
      let ofWallet = seriesOf.get(walletId);
      if (!ofWallet) seriesOf.set(walletId, (ofWallet = new TwoKeyMap()));
      let series = ofWallet.get(exchange, pairName);
      if (series === undefined) {
        const wallet = req.wallets.get(walletId);
        const pair = pairs.get(exchange, pairName);
        series = wallet && pair && visible(wallet.organization, pair) ? { wallet, pair, rows: new Map() } : null;
        ofWallet.set(exchange, pairName, series);
      }
      if (series === null) return undefined;
      let values = series.rows.get(b);
      if (values === undefined) {
        values = packed.subarray(used, (used += width));
        packedWallet.empty(n, values, 0);
        cellOf(series.wallet.organization, series.pair, b).trusted.push({ wallet: series.wallet, values });
        series.rows.set(b, values);
      }
      return values;
    };
    for (let i = 0; i < depthRows.length; i++) {
      const values = rowOf(depthRows.wallet_id[i]!, depthRows.exchange[i]!, depthRows.pair[i]!, depthRows.b[i]!);
      if (values) packedWallet.depth(depthRows, i, n, values, 0);
    }
    for (let i = 0; i < volumeRows.length; i++) {
      const values = rowOf(volumeRows.wallet_id[i]!, volumeRows.exchange[i]!, volumeRows.pair[i]!, volumeRows.b[i]!);
      if (values) packedWallet.volume(volumeRows, i, values, 0);
    }

    // The summary shows a reported row only in a bucket without trusted values: it reads
    // reported values only for the pairs that have such a bucket (every bucket of the
    // window, or the one of `a`), once the trusted values are known.
    const untrusted = want.reported === 'untrusted' ? untrustedBuckets(w, allKeys, cells) : undefined;
    const late = untrusted && untrusted.keys.length > 0 ? this.metrics.reported({ keys: untrusted.keys, metrics, ranges: untrusted.ranges, interval: w.interval, zone: w.zone }) : undefined;
    late?.catch(() => undefined);
    const [early, books, trades] = await rest;
    const reported = late ? await late : early;

    const chosen = w.interval === 'a' ? coarsestReported(reported) : reported;
    for (const r of chosen) {
      const pair = pairs.get(r.exchange, r.pair);
      if (!pair || !visible(r.organization, pair)) continue;
      const c = cellOf(r.organization, pair, r.b);
      c.reported = reportedValues(r, names);
      c.reportedVolume = r.counts.has('volume/volume');
    }

    const market = new TwoKeyMap<Pair, number, Values>();
    const tradeOf = new TwoKeyMap<Pair, number, TradePartial>();
    for (const t of trades) {
      const pair = pairs.get(t.exchange, t.pair);
      if (pair) tradeOf.set(pair, t.b, t);
    }
    for (const bk of books) {
      const pair = pairs.get(bk.exchange, bk.pair);
      if (!pair) continue;
      market.set(pair, bk.b, {
        volume: marketVolume(tradeOf.get(pair, bk.b)),
        bid: at.map((i) => depth(bk, 'bid', i)),
        ask: at.map((i) => depth(bk, 'ask', i)),
      });
    }
    for (const t of trades) {
      const pair = pairs.get(t.exchange, t.pair);
      if (pair && !market.get(pair, t.b)) market.set(pair, t.b, { volume: marketVolume(t), bid: at.map(() => null), ask: at.map(() => null) });
    }

    const order = inAnswerOrder(cells);
    for (const c of order) c.trusted.sort((x, y) => x.wallet.number - y.wallet.number || x.wallet.id - y.wallet.id);
    return { cells: order, market: (pair, b) => market.get(pair, b) };
  }
}

/**
 * Rows in the answers' order: market maker, asset, exchange, pair (as text is compared),
 * then bucket. Each market maker's pair is compared once, the rows by its rank: comparing
 * text for every two of a month's rows is tens of times the comparisons of its pairs.
 */
export function inAnswerOrder<T extends { maker: string; pair: Pair; b: number }>(rows: readonly T[]): T[] {
  // Each row's market maker and pair by the pair object first (rows of a read share the
  // query's), its text made once per object: a month at 5m is 68,000 rows.
  const byText = new Map<string, number>();
  const byObject = new Map<string, Map<Pair, number>>();
  const distinct: T[] = [];
  const of = new Int32Array(rows.length);
  rows.forEach((r, i) => {
    let objects = byObject.get(r.maker);
    if (!objects) byObject.set(r.maker, (objects = new Map()));
    let d = objects.get(r.pair);
    if (d === undefined) {
      const k = mapKey(r.maker, r.pair.exchange, r.pair.pair);
      d = byText.get(k);
      if (d === undefined) {
        byText.set(k, (d = distinct.length));
        distinct.push(r);
      }
      objects.set(r.pair, d);
    }
    of[i] = d;
  });
  const sorted = distinct.map((_, i) => i);
  sorted.sort((x, y) => {
    const a = distinct[x]!;
    const b = distinct[y]!;
    return a.maker.localeCompare(b.maker) || a.pair.asset.localeCompare(b.pair.asset) || a.pair.exchange.localeCompare(b.pair.exchange) || a.pair.pair.localeCompare(b.pair.pair);
  });
  // The rows gathered by rank, then each rank's sorted by bucket: sorting a month's rows
  // whole took longer than the rest of putting them in order.
  const groups: T[][] = distinct.map(() => []);
  rows.forEach((r, i) => groups[of[i]!]!.push(r));
  const out: T[] = [];
  for (const d of sorted) {
    const g = groups[d]!;
    g.sort((x, y) => x.b - y.b);
    for (const r of g) out.push(r);
  }
  return out;
}

/** The bucket starts (epoch s) of a window of fixed buckets, in its zone. */
export function bucketStarts(w: MmQuery['window']): number[] {
  if (w.interval === 'a') return [0];
  const out = new Set<number>();
  for (const [from, to] of w.ranges) {
    let t = DateTime.fromMillis(from, { zone: w.zone });
    t = w.interval === '1d' ? t.startOf('day') : w.interval === '1h' ? t.startOf('hour') : t.startOf('minute').minus({ minutes: t.minute % 5 });
    if (w.interval === '1d') {
      for (; t.toMillis() < to; t = t.plus({ days: 1 })) out.add(Math.floor(t.toMillis() / 1000));
      continue;
    }
    // Hours and minutes are added as elapsed time, as luxon adds them.
    const step = w.interval === '1h' ? 3_600_000 : 300_000;
    for (let ms = t.toMillis(); ms < to; ms += step) out.add(Math.floor(ms / 1000));
  }
  return [...out].sort((a, b) => a - b);
}

/**
 * Where the summary shows reported values: the keys with a bucket of the window none of
 * whose wallets has trusted values, and the window's parts in such buckets (a reported
 * value elsewhere is never shown).
 */
function untrustedBuckets<K extends { organization: string; exchange: string; pair: string }>(
  w: MmQuery['window'],
  keys: readonly K[],
  cells: readonly Cell[],
): { keys: K[]; ranges: Range[] } {
  const buckets = bucketStarts(w);
  const inWindow = new Set(buckets);
  // Per key, its buckets with trusted values; per bucket, how many keys have them.
  const have = new Map<string, number>();
  const keysAt = new Map<number, number>();
  // A cell's key text made once per market maker and pair object, not per cell.
  const textOf = new Map<string, Map<Pair, string>>();
  for (const c of cells) {
    if (!inWindow.has(c.b)) continue;
    let texts = textOf.get(c.maker);
    if (!texts) textOf.set(c.maker, (texts = new Map()));
    let k = texts.get(c.pair);
    if (k === undefined) texts.set(c.pair, (k = mapKey(c.maker, c.pair.exchange, c.pair.pair)));
    have.set(k, (have.get(k) ?? 0) + 1);
    keysAt.set(c.b, (keysAt.get(c.b) ?? 0) + 1);
  }
  const out = keys.filter((k) => (have.get(mapKey(k.organization, k.exchange, k.pair)) ?? 0) < buckets.length);
  const missing = out.length === 0 ? [] : buckets.filter((b) => (keysAt.get(b) ?? 0) < keys.length);
  const everywhere = missing.length === buckets.length;
  if (everywhere || w.interval === 'a') return { keys: out, ranges: w.ranges };
  // The window's parts in the buckets missing somewhere; a bucket not found as planned: the whole window.
  const parts = new Map(bucketsOf(w.interval, w.ranges, w.zone).map((bk) => [Math.floor(bk.start / 1000), bk.ranges]));
  const ranges: Range[] = [];
  for (const b of missing) {
    const r = parts.get(b);
    if (!r) return { keys: out, ranges: w.ranges };
    ranges.push(...r);
  }
  return { keys: out, ranges: mergeRanges(ranges) };
}
