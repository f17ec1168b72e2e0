// Synthetic market history written straight into the minute tables, for the benchmarks
// that need weeks of data in minutes rather than hours of feeding (bench:api,
// bench:targets): per pair and minute, deterministic from the pair's shape and the minute.
import type { ClickHouse } from '../lib/clickhouse.ts';
import { LEVELS_BPS, SLIPPAGE_SIZES_USD } from '../domain/market/facts.ts';
import type { BenchPair } from './common.ts';

/** Settings of the loading inserts: small blocks keep the engine's memory (and page faults) down. */
const LOAD_SETTINGS = 'SETTINGS max_block_size = 4096, min_insert_block_size_rows = 16384, min_insert_block_size_bytes = 0';

// Per pair p and minute: a slowly wandering mid around the pair's price, a spread around
// its half-spread, levels every `step` bps with `usd` each (so depth within L bps is the
// number of levels inside L times the level size), slippage growing with the order size.
const BOOK_SQL = `INSERT INTO book_minutes (exchange, pair, minute, samples, mid, first_mid, last_mid, spread_abs, spread_bps,
    spread_bps_max, top, tick, depth_samples, bid_depth, ask_depth, bid_count, ask_count, min_depth, slippage_buy, slippage_sell, closed_at)
  SELECT {ex:Array(String)}[p + 1], {pr:Array(String)}[p + 1], minute, 60, mid,
    (toDateTime64(minute, 3, 'UTC'), mid * (1 + (u2 - 0.5) * 2e-4)),
    (toDateTime64(minute, 3, 'UTC') + 59, mid * (1 + (u3 - 0.5) * 2e-4)),
    mid * sbps / 1e4, sbps, sbps * (1.05 + u2),
    (toDateTime64(minute, 3, 'UTC') + 59, mid * (1 - sbps / 2e4), round(usd / mid, 6), mid * (1 + sbps / 2e4), round(usd / mid * (0.5 + u3), 6)),
    mid * step / 2e4, 60,
    arrayMap(c -> round(c * usd * (0.8 + 0.4 * u2)), counts) AS bd,
    arrayMap(c -> round(c * usd * (0.8 + 0.4 * u3)), counts) AS ad,
    counts, counts,
    arrayMap((b, a) -> round(least(b, a) * 0.6), bd, ad),
    arrayMap(s -> if(s > 20 * usd, NULL, round(sbps / 2 + s / usd * step * (0.9 + 0.2 * u2), 3)), {sizes:Array(Float64)}),
    arrayMap(s -> if(s > 20 * usd, NULL, round(sbps / 2 + s / usd * step * (0.9 + 0.2 * u3), 3)), {sizes:Array(Float64)}),
    now64(3)
  FROM (
    SELECT number % {np:UInt32} AS p, toDateTime({start:UInt32} + intDiv(number, {np:UInt32}) * 60, 'UTC') AS minute,
      (cityHash64(p, toUInt32(minute), 1) % 1000000) / 1e6 AS u1,
      (cityHash64(p, toUInt32(minute), 2) % 1000000) / 1e6 AS u2,
      (cityHash64(p, toUInt32(minute), 3) % 1000000) / 1e6 AS u3,
      {price:Array(Float64)}[p + 1] * (1 + 0.03 * sin(toUInt32(minute) / 120000 + p)) AS mid,
      {hs:Array(Float64)}[p + 1] * 2 * (0.6 + 0.8 * u1) AS sbps,
      {st:Array(Float64)}[p + 1] AS step,
      {usd:Array(Float64)}[p + 1] AS usd,
      arrayMap(l -> toFloat64(least(20, greatest(0, floor((l - sbps / 2) / step) + 1))), {levels:Array(Float64)}) AS counts
    FROM numbers({n:UInt64}))
  ${LOAD_SETTINGS}`;

// Nine minutes in ten have trades: a few to a few dozen, for a fraction of a level's size each.
const TRADE_SQL = `INSERT INTO trade_minutes (exchange, pair, minute, trades, amount, notional, volume_usd, usd_trades, closed_at)
  SELECT {ex:Array(String)}[p + 1], {pr:Array(String)}[p + 1], minute, trades, round(notional / {price:Array(Float64)}[p + 1], 6), notional, notional, trades, now64(3)
  FROM (
    SELECT number % {np:UInt32} AS p, toDateTime({start:UInt32} + intDiv(number, {np:UInt32}) * 60, 'UTC') AS minute,
      (cityHash64(p, toUInt32(minute), 4) % 1000000) / 1e6 AS u,
      toUInt32(1 + u * 40) AS trades,
      round(trades * {usd:Array(Float64)}[p + 1] * 0.2 * (0.5 + u), 2) AS notional
    FROM numbers({n:UInt64}))
  WHERE u < 0.9
  ${LOAD_SETTINGS}`;

const DERIVATIVE_SQL = `INSERT INTO derivative_minutes (exchange, pair, minute, funding, open_interest, closed_at)
  SELECT {ex:Array(String)}[p + 1], {pr:Array(String)}[p + 1], minute,
    (toDateTime64(minute, 3, 'UTC') + 50, round((u - 0.4) * 5e-4, 8)),
    (toDateTime64(minute, 3, 'UTC') + 50, round({usd:Array(Float64)}[p + 1] * 1000 * (0.9 + 0.2 * u))),
    now64(3)
  FROM (
    SELECT number % {np:UInt32} AS p, toDateTime({start:UInt32} + intDiv(number, {np:UInt32}) * 60, 'UTC') AS minute,
      (cityHash64(p, toUInt32(minute), 5) % 1000000) / 1e6 AS u
    FROM numbers({n:UInt64}))
  ${LOAD_SETTINGS}`;

/** The per-pair arrays the statements bind. */
export function pairArrays(ps: readonly BenchPair[]) {
  return {
    ex: ps.map((p) => p.exchange),
    pr: ps.map((p) => p.pair),
    price: ps.map((p) => p.price),
    usd: ps.map((p) => Math.round(p.levelUsd)),
    hs: ps.map((p) => p.halfSpreadBps),
    st: ps.map((p) => p.stepBps),
    np: ps.length,
  };
}

/**
 * Book, trade and (for perpetuals) derivative minute rows of the pairs for [start, end)
 * (epoch s, whole minutes); returns the milliseconds the book and the other inserts took.
 */
export async function writeMinutes(conn: ClickHouse, pairs: readonly BenchPair[], start: number, end: number): Promise<{ booksMs: number; restMs: number }> {
  const A = pairArrays(pairs);
  const D = pairArrays(pairs.filter((p) => p.market_type === 'perp'));
  const minutes = (end - start) / 60;
  const t = performance.now();
  await conn.command(BOOK_SQL, { ...A, start, n: minutes * A.np, levels: [...LEVELS_BPS], sizes: [...SLIPPAGE_SIZES_USD] });
  const tb = performance.now();
  await conn.command(TRADE_SQL, { ...A, start, n: minutes * A.np });
  if (D.np > 0) await conn.command(DERIVATIVE_SQL, { ...D, start, n: minutes * D.np });
  return { booksMs: tb - t, restMs: performance.now() - tb };
}
