// An asset's TWAP in USD (addendum section 7): the mean of the minute mids over all its
// USD-quoted pairs (their mids are USD prices) in [from, to). Read from the coarsest stored
// rows that tile the window (domain/market/window.ts), so a 7-day TWAP reads days and
// hours, and the open edges (and hours not yet rolled up: `rolledUpTo`, as in window.ts) read minutes. Null when no minute of the window had a mid.
import { TupleParam } from '@clickhouse/client';
import type { ClickHouse, Params } from '../../lib/clickhouse.ts';
import { tile } from '../market/window.ts';
import type { Pair } from '../reference/repository.ts';

export const USD_QUOTES = new Set(['USD', 'USDT', 'USDC', 'FDUSD', 'DAI']);

/** The pairs whose mids price an asset in USD. */
export const usdPairsOf = (asset: string, pairs: readonly Pair[]): Pair[] => pairs.filter((p) => p.asset === asset && USD_QUOTES.has(p.pair.split('/')[1] ?? ''));

const SOURCES = {
  minutes: { table: 'book_minutes', time: 'minute', sum: 'sum(mid)', n: 'count()', where: '1' },
  hours: { table: 'book_hours', time: 'bucket', sum: 'sum(mid_sum)', n: 'sum(minutes)', where: '1' },
  days: { table: 'book_days', time: 'bucket', sum: 'sum(mid_sum)', n: 'sum(minutes)', where: '1' },
} as const;

/** The TWAP of each asset over [from, to), by asset; assets without a mid are absent. */
export async function assetTwaps(ch: ClickHouse, assets: readonly string[], pairs: readonly Pair[], from: number, to: number, rolledUpTo: number): Promise<Map<string, number>> {
  const of = assets.flatMap((a) => usdPairsOf(a, pairs));
  if (of.length === 0 || from >= to) return new Map();
  const params: Params = { pairs: of.map((p) => new TupleParam([p.exchange, p.pair])) };
  const parts = tile(from, to, rolledUpTo).map((piece, i) => {
    if (piece.table === 'open') throw new Error('asset TWAPs read whole hours rolled up (RolledUp.through)');
    const s = SOURCES[piece.table];
    params[`f${i}`] = Math.floor(piece.from / 1000);
    params[`t${i}`] = Math.floor(piece.to / 1000);
    return `SELECT exchange, pair, ${s.sum} AS mid_sum, ${s.n} AS minutes FROM ${s.table} FINAL
      WHERE (exchange, pair) IN {pairs:Array(Tuple(String, String))} AND ${s.where}
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
