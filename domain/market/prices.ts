// Prices in USD (addendum section 1; the asset's TWAP: section 7). A USD value is price x
// amount x the quote currency's rate: USD and the listed stablecoins count 1, another quote
// is converted with the latest mid of <QUOTE>/USDT or <QUOTE>/USD seen on any exchange, and
// with none known USD values are null. An asset's TWAP in USD is the mean minute mid of its
// USD-quoted pairs, whose mids are USD prices. Read by the processors (quote rates), the
// target evaluator (price scaling), the loans and the RFQ comparison.
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

/** Whether a pair's prices are USD prices (its quote currency counts 1). */
export const isUsdQuoted = (pair: string): boolean => USD_QUOTES.has(splitPair(pair).quote);

/** The pairs whose mids price an asset in USD. */
export const usdPairsOf = (asset: string, pairs: readonly Pair[]): Pair[] => pairs.filter((p) => p.asset === asset && isUsdQuoted(p.pair));

/** The quote rates a process has seen: each pair's latest mid makes its base convertible. */
export class QuoteRates {
  private readonly mids = new Map<string, number>();

  /** Records a pair's mid: X/USDT and X/USD make X convertible. */
  observe(pair: string, mid: number): void {
    // As splitPair, without its object: this runs for every snapshot.
    const i = pair.indexOf('/');
    if (i < 0) return;
    const quote = pair.slice(i + 1);
    if (quote === 'USDT' || quote === 'USD') this.mids.set(pair.slice(0, i), mid);
  }

  /** USD per unit of the pair's quote currency, or null when unknown. */
  rate(pair: string): number | null {
    const i = pair.indexOf('/');
    const quote = i < 0 ? '' : pair.slice(i + 1);
    if (USD_QUOTES.has(quote)) return 1;
    return this.mids.get(quote) ?? null;
  }
}

const SOURCES = {
  minutes: { table: 'book_minutes', time: 'minute', sum: 'sum(mid)', n: 'count()' },
  hours: { table: 'book_hours', time: 'bucket', sum: 'sum(mid_sum)', n: 'sum(minutes)' },
  days: { table: 'book_days', time: 'bucket', sum: 'sum(mid_sum)', n: 'sum(minutes)' },
} as const;

/**
 * The USD TWAP of each asset over [from, to), by asset; assets without a mid are absent.
 * Read from the coarsest stored rows that tile the window (domain/market/window.ts): days
 * and hours inside it, minutes at its edges and after `rolledUpTo` (a whole hour).
 */
export async function assetTwaps(ch: ClickHouse, assets: Iterable<string>, pairs: readonly Pair[], from: number, to: number, rolledUpTo: number): Promise<Map<string, number>> {
  const of = [...new Set(assets)].flatMap((a) => usdPairsOf(a, pairs));
  if (of.length === 0 || from >= to) return new Map();
  const params: Params = { pairs: of.map((p) => new TupleParam([p.exchange, p.pair])) };
  const parts = tile(from, to, rolledUpTo).map((piece, i) => {
    if (piece.table === 'open') throw new Error('asset TWAPs read whole hours rolled up (RolledUp.through)');
    const s = SOURCES[piece.table];
    params[`f${i}`] = Math.floor(piece.from / 1000);
    params[`t${i}`] = Math.floor(piece.to / 1000);
    return `SELECT exchange, pair, ${s.sum} AS mid_sum, ${s.n} AS minutes FROM ${s.table} FINAL
      WHERE (exchange, pair) IN {pairs:Array(Tuple(String, String))}
        AND ${s.time} >= toDateTime({f${i}:UInt32}, 'UTC') AND ${s.time} < toDateTime({t${i}:UInt32}, 'UTC')
      GROUP BY exchange, pair`;
  });
  if (parts.length === 0) return new Map();
  const rows = await ch.query<{ exchange: string; pair: string; mid_sum: number; minutes: string | number }>(parts.join(' UNION ALL '), params);
  const assetOf = new Map(of.map((p) => [`${p.exchange}\u0000${p.pair}`, p.asset]));
  const sums = new Map<string, { s: number; n: number }>();
  for (const r of rows) {
    const a = assetOf.get(`${r.exchange}\u0000${r.pair}`);
    if (a === undefined) continue;
    const x = sums.get(a) ?? { s: 0, n: 0 };
    x.s += Number(r.mid_sum);
    x.n += Number(r.minutes);
    sums.set(a, x);
  }
  return new Map([...sums].filter(([, x]) => x.n > 0).map(([a, x]) => [a, x.s / x.n]));
}

export async function assetTwap(ch: ClickHouse, asset: string, pairs: readonly Pair[], from: number, to: number, rolledUpTo: number): Promise<number | null> {
  return (await assetTwaps(ch, [asset], pairs, from, to, rolledUpTo)).get(asset) ?? null;
}
