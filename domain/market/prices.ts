// Prices in USD (addendum section 1; the asset's TWAP: section 7). A USD value is price x
// amount x the quote currency's rate: USD and the listed stablecoins count 1, another quote
// is converted with the latest mid of <QUOTE>/USDT or <QUOTE>/USD seen on any exchange, and
// with none known USD values are null. An asset's TWAP in USD is the mean of the minute mids
// in USD over all its pairs. Read by the processors (quote rates), the target evaluator
// (price scaling), the loans and the RFQ comparison.
import { TupleParam } from '@clickhouse/client';
import type { ClickHouse, Params } from '../../lib/clickhouse.ts';
import type { Pair } from '../reference/repository.ts';
import { tile } from './window.ts';

/** Quote currencies that count 1 USD. */
export const USD_QUOTES: ReadonlySet<string> = new Set(['USD', 'USDT', 'USDC', 'FDUSD', 'DAI']);

/** The window of "the asset's 24-hour TWAP". */
export const ASSET_TWAP_MS = 86_400_000;

export function splitPair(pair: string): { base: string; quote: string } {
  const i = pair.indexOf('/');
  return i < 0 ? { base: pair, quote: '' } : { base: pair.slice(0, i), quote: pair.slice(i + 1) };
}

/** A pair's quote currency ('' without one): as splitPair's, without its object, for what runs per message. */
const quoteOf = (pair: string): string => {
  const i = pair.indexOf('/');
  return i < 0 ? '' : pair.slice(i + 1);
};

/** Whether a pair's prices are USD prices (its quote currency counts 1). */
export const isUsdQuoted = (pair: string): boolean => USD_QUOTES.has(quoteOf(pair));

/** One mid of a source pair (<QUOTE>/USDT or <QUOTE>/USD) at its snapshot's event time. */
export interface QuoteMid {
  exchange: string;
  pair: string;
  ts: number;
  mid: number;
}

/** A source pair's mids, oldest first. */
interface Source {
  ts: number[];
  mid: number[];
}

/**
 * The quote rates a process has seen, by event time: a value at time t is converted with
 * the latest mid of a source pair at or before t, whatever order the topics' partitions were
 * read in (a replay, a partition behind another). `through(quote)` says how far its sources
 * have been seen, so a message newer than that can wait for its rate
 * (processors/market/windowed-pipeline.ts). Each source pair's mids are kept for `keepMs`
 * of event time behind its newest, and the last one before that.
 */
export class QuoteRates {
  /** Per currency, its sources by `exchange:pair`. */
  private readonly sources = new Map<string, Map<string, Source>>();
  /** Quote currencies of the known pairs that need a rate, with whether a source pair is known; none: every currency (tests). */
  private needed: Map<string, boolean> | undefined;

  /** Mids observed here and not yet saved (takeUnsaved); none when this table does not save. */
  private unsaved: QuoteMid[] | undefined;

  /** `keepMs`: a week, as long as md.orderbook keeps its messages: a partition read far behind another still finds the mids of its time. */
  constructor(private readonly keepMs = 7 * 86_400_000) {}

  /** From now on, keeps every mid observed for takeUnsaved: the table of the process that reads the books, whose mids are saved (quote_mids) for a restart to load. */
  saving(): this {
    this.unsaved ??= [];
    return this;
  }

  takeUnsaved(): QuoteMid[] {
    const out = this.unsaved ?? [];
    if (this.unsaved) this.unsaved = [];
    return out;
  }

  /** Mids taken whose save failed: saved with the next. */
  returnUnsaved(mids: QuoteMid[]): void {
    if (this.unsaved) this.unsaved = mids.concat(this.unsaved);
  }

  /** The known pairs, as `exchange:pair` keys: only their quote currencies' sources are kept. */
  learnPairs(keys: Iterable<string>): void {
    const pairs = [...keys].map((k) => splitPair(k.slice(k.indexOf(':') + 1)));
    const needed = new Map<string, boolean>();
    for (const { quote } of pairs) if (quote !== '' && !USD_QUOTES.has(quote)) needed.set(quote, false);
    for (const { base, quote } of pairs) if ((quote === 'USDT' || quote === 'USD') && needed.has(base)) needed.set(base, true);
    this.needed = needed;
  }

  /** Records a pair's mid at event time `ts`: X/USDT and X/USD make X convertible. Whether it was kept. */
  observe(pair: string, mid: number, ts: number, exchange = ''): boolean {
    if (!this.record(pair, mid, ts, exchange)) return false;
    this.unsaved?.push({ exchange, pair, ts, mid });
    return true;
  }

  /** Mids saved before (QuoteMidRepository.recent), oldest first: kept as observed, not saved again. */
  load(mids: readonly QuoteMid[]): void {
    for (const m of mids) this.record(m.pair, m.mid, m.ts, m.exchange);
  }

  /** How much event time behind a source's newest mid is kept. */
  get keeps(): number {
    return this.keepMs;
  }

  private record(pair: string, mid: number, ts: number, exchange: string): boolean {
    // As splitPair, without its object: this runs for every snapshot.
    const i = pair.indexOf('/');
    if (i < 0) return false;
    const quote = pair.slice(i + 1);
    if (quote !== 'USDT' && quote !== 'USD') return false;
    const currency = pair.slice(0, i);
    if (this.needed && !this.needed.has(currency)) return false;
    let of = this.sources.get(currency);
    if (!of) this.sources.set(currency, (of = new Map()));
    const key = `${exchange}:${pair}`;
    let s = of.get(key);
    if (!s) of.set(key, (s = { ts: [], mid: [] }));
    const n = s.ts.length;
    if (n === 0 || s.ts[n - 1]! <= ts) {
      s.ts.push(ts);
      s.mid.push(mid);
      if (n > 1024 && s.ts[0]! < ts - 2 * this.keepMs) prune(s, ts - this.keepMs);
    } else {
      // Out of order within its pair: after the mids of the same time, as if seen last.
      const at = upperBound(s.ts, ts);
      s.ts.splice(at, 0, ts);
      s.mid.splice(at, 0, mid);
    }
    return true;
  }

  /** USD per unit of the pair's quote currency at event time `ts`, or null when unknown. */
  rate(pair: string, ts: number): number | null {
    const quote = quoteOf(pair);
    if (USD_QUOTES.has(quote)) return 1;
    const of = this.sources.get(quote);
    if (!of) return null;
    let bestTs = -Infinity;
    let best: number | null = null;
    // Sources in the order first seen; at one time the first source's mid counts.
    for (const s of of.values()) {
      const at = upperBound(s.ts, ts) - 1;
      if (at >= 0 && s.ts[at]! > bestTs) {
        bestTs = s.ts[at]!;
        best = s.mid[at]!;
      }
    }
    return best;
  }

  /** How far (event time) the sources of a pair's quote currency have been seen: a message of the pair newer than this may not have its rate yet. +Infinity when it needs none or has no known source. */
  through(pair: string): number {
    const quote = quoteOf(pair);
    if (USD_QUOTES.has(quote)) return Infinity;
    if (this.needed && !this.needed.get(quote)) return Infinity;
    const of = this.sources.get(quote);
    if (!of) return this.needed ? -Infinity : Infinity;
    let newest = -Infinity;
    for (const s of of.values()) newest = Math.max(newest, s.ts[s.ts.length - 1] ?? -Infinity);
    return newest;
  }
}

/** The first index whose time is after `ts`. */
function upperBound(ts: readonly number[], t: number): number {
  let lo = 0;
  let hi = ts.length;
  while (lo < hi) {
    const m = (lo + hi) >>> 1;
    if (ts[m]! <= t) lo = m + 1;
    else hi = m;
  }
  return lo;
}

/** Drops the mids before `from`, but the last of them (the rate at `from`). */
function prune(s: Source, from: number): void {
  const drop = upperBound(s.ts, from) - 1;
  if (drop > 0) {
    s.ts.splice(0, drop);
    s.mid.splice(0, drop);
  }
}

const SOURCES = {
  minutes: { table: 'book_minutes', time: 'minute', sum: 'sum(mid)', n: 'count()', usdSum: 'sum(ifNull(mid_usd, 0.))', usdN: 'count(mid_usd)' },
  hours: { table: 'book_hours', time: 'bucket', sum: 'sum(mid_sum)', n: 'sum(minutes)', usdSum: 'sum(usd_mid_sum)', usdN: 'sum(usd_mid_minutes)' },
  days: { table: 'book_days', time: 'bucket', sum: 'sum(mid_sum)', n: 'sum(minutes)', usdSum: 'sum(usd_mid_sum)', usdN: 'sum(usd_mid_minutes)' },
} as const;

/**
 * The USD TWAP of each asset over [from, to), by asset: the mean of the minute mids in USD
 * over all its pairs (addendum section 7). A USD-quoted pair's mids are USD prices; another
 * pair's minute mid in USD is the mean over its snapshots of mid x the quote rate of their
 * time (processors/orderbook/minute.ts), and its minutes without a rate do not count. Assets
 * without a mid are absent. Read from the coarsest stored rows that tile the window
 * (domain/market/window.ts): days and hours inside it, minutes at its edges and after
 * `rolledUpTo` (a whole hour).
 */
export async function assetTwaps(ch: ClickHouse, assets: Iterable<string>, pairs: readonly Pair[], from: number, to: number, rolledUpTo: number): Promise<Map<string, number>> {
  const wanted = new Set(assets);
  const of = pairs.filter((p) => wanted.has(p.asset));
  if (of.length === 0 || from >= to) return new Map();
  const params: Params = { pairs: of.map((p) => new TupleParam([p.exchange, p.pair])) };
  const parts = tile(from, to, rolledUpTo).map((piece, i) => {
    if (piece.table === 'open') throw new Error('asset TWAPs read whole hours rolled up (RolledUp.through)');
    const s = SOURCES[piece.table];
    params[`f${i}`] = Math.floor(piece.from / 1000);
    params[`t${i}`] = Math.floor(piece.to / 1000);
    return `SELECT exchange, pair, ${s.sum} AS mid_sum, ${s.n} AS minutes, ${s.usdSum} AS usd_sum, ${s.usdN} AS usd_minutes FROM ${s.table} FINAL
      WHERE (exchange, pair) IN {pairs:Array(Tuple(String, String))}
        AND ${s.time} >= toDateTime({f${i}:UInt32}, 'UTC') AND ${s.time} < toDateTime({t${i}:UInt32}, 'UTC')
      GROUP BY exchange, pair`;
  });
  if (parts.length === 0) return new Map();
  const rows = await ch.query<{ exchange: string; pair: string; mid_sum: number; minutes: string | number; usd_sum: number; usd_minutes: string | number }>(parts.join(' UNION ALL '), params);
  const assetOf = new Map(of.map((p) => [`${p.exchange}\u0000${p.pair}`, p.asset]));
  const sums = new Map<string, { s: number; n: number }>();
  for (const r of rows) {
    const a = assetOf.get(`${r.exchange}\u0000${r.pair}`);
    if (a === undefined) continue;
    const x = sums.get(a) ?? { s: 0, n: 0 };
    // A USD-quoted pair's mids are its USD mids, also in rows written before mid_usd was.
    if (isUsdQuoted(r.pair)) {
      x.s += Number(r.mid_sum);
      x.n += Number(r.minutes);
    } else {
      x.s += Number(r.usd_sum);
      x.n += Number(r.usd_minutes);
    }
    sums.set(a, x);
  }
  return new Map([...sums].filter(([, x]) => x.n > 0).map(([a, x]) => [a, x.s / x.n]));
}

export async function assetTwap(ch: ClickHouse, asset: string, pairs: readonly Pair[], from: number, to: number, rolledUpTo: number): Promise<number | null> {
  return (await assetTwaps(ch, [asset], pairs, from, to, rolledUpTo)).get(asset) ?? null;
}
