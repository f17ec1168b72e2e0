// Reads market metrics for a set of pairs over a bucket plan. Each stored table answers the
// pieces of the plan it covers with the same partial aggregates (sums, counts, minima,
// maxima), the union is grouped by pair and bucket, and the endpoints turn partials into
// means and percentages. The SQL text is built only from the constants below; every
// value (pairs, times, levels, amounts, zone) is bound.
import { TupleParam } from '@clickhouse/client';
import type { ClickHouse, Params } from '../../lib/clickhouse.ts';
import { LEVELS_BPS, UPTIME_AMOUNTS_USD } from '../../processors/metrics/levels.ts';
import type { Interval, Piece, Table } from './window.ts';

export interface PairRef {
  exchange: string;
  pair: string;
}

export interface BookPartial {
  exchange: string;
  pair: string;
  b: number;
  minutes: number;
  samples: number;
  mid_sum: number;
  first_mid: number;
  last_mid: number;
  spread_abs_sum: number;
  spread_bps_sum: number;
  tick: number | null;
  depth_minutes: number;
  bid_depth: number[];
  ask_depth: number[];
  bid_count: number[];
  ask_count: number[];
  spread_up: number[];
  depth_up: number[];
  slip_buy_sum: number[];
  slip_buy_n: number[];
  slip_sell_sum: number[];
  slip_sell_n: number[];
}

export interface TradePartial {
  exchange: string;
  pair: string;
  b: number;
  trades: number;
  amount: number;
  notional: number;
  volume_usd: number;
  usd_trades: number;
}

export interface DerivativePartial {
  exchange: string;
  pair: string;
  b: number;
  funding_ts: number;
  funding: number;
  oi_ts: number;
  open_interest: number;
}

type Family = 'book' | 'uptime' | 'trade' | 'derivative';

/** What the uptime endpoints read: no depth, count or slippage arrays. */
export type UptimePartial = Pick<BookPartial, 'exchange' | 'pair' | 'b' | 'minutes' | 'mid_sum' | 'spread_up' | 'depth_up'>;

const BOOK_TABLES = {
  minutes: { name: 'book_minutes', start: 'minute', final: true },
  hours: { name: 'book_hours', start: 'bucket', final: true },
  days: { name: 'book_days', start: 'bucket', final: true },
};

const TABLES: Record<Family, Record<Table, { name: string; start: string; final: boolean }>> = {
  book: BOOK_TABLES,
  uptime: BOOK_TABLES,
  trade: {
    minutes: { name: 'trade_minutes', start: 'minute', final: true },
    hours: { name: 'trade_hours', start: 'bucket', final: true },
    days: { name: 'trade_days', start: 'bucket', final: true },
  },
  derivative: {
    minutes: { name: 'derivative_minutes', start: 'minute', final: true },
    hours: { name: 'derivative_hours', start: 'bucket', final: true },
    days: { name: 'derivative_days', start: 'bucket', final: true },
  },
};

// Partial aggregates per stored row kind. Aliases end in _p so none shadows a column.
const BOOK_MINUTE_PARTIALS = `count() AS minutes_p, sum(samples) AS samples_p, sum(mid) AS mid_sum_p,
  min(first_mid) AS first_p, max(last_mid) AS last_p, sum(spread_abs) AS spread_abs_p, sum(spread_bps) AS spread_bps_p,
  min(tick) AS tick_p, countIf(depth_samples > 0) AS depth_minutes_p,
  sumForEach(bid_depth) AS bid_depth_p, sumForEach(ask_depth) AS ask_depth_p,
  sumForEach(bid_count) AS bid_count_p, sumForEach(ask_count) AS ask_count_p,
  sumForEach(arrayMap(l -> toUInt64(spread_bps_max <= l), {levels:Array(Float64)})) AS spread_up_p,
  sumForEach(arrayMap((d, a) -> toUInt64(d > a),
    arrayFlatten(arrayWithConstant(length({amounts:Array(Float64)}), arrayResize(min_depth, 25, 0.))),
    arrayFlatten(arrayMap(a -> arrayWithConstant(25, a), {amounts:Array(Float64)})))) AS depth_up_p,
  sumForEach(arrayMap(x -> ifNull(x, 0.), slippage_buy)) AS slip_buy_sum_p, sumForEach(arrayMap(x -> toUInt64(isNotNull(x)), slippage_buy)) AS slip_buy_n_p,
  sumForEach(arrayMap(x -> ifNull(x, 0.), slippage_sell)) AS slip_sell_sum_p, sumForEach(arrayMap(x -> toUInt64(isNotNull(x)), slippage_sell)) AS slip_sell_n_p`;

const BOOK_ROLLUP_PARTIALS = `sum(minutes) AS minutes_p, sum(samples) AS samples_p, sum(mid_sum) AS mid_sum_p,
  min(first) AS first_p, max(last) AS last_p, sum(spread_abs_sum) AS spread_abs_p, sum(spread_bps_sum) AS spread_bps_p,
  min(tick_min) AS tick_p, sum(depth_minutes) AS depth_minutes_p,
  sumForEach(bid_depth_sum) AS bid_depth_p, sumForEach(ask_depth_sum) AS ask_depth_p,
  sumForEach(bid_count_sum) AS bid_count_p, sumForEach(ask_count_sum) AS ask_count_p,
  sumForEach(spread_up) AS spread_up_p, sumForEach(depth_up) AS depth_up_p,
  sumForEach(slip_buy_sum) AS slip_buy_sum_p, sumForEach(slip_buy_n) AS slip_buy_n_p,
  sumForEach(slip_sell_sum) AS slip_sell_sum_p, sumForEach(slip_sell_n) AS slip_sell_n_p`;

const BOOK_OUTER = `sum(minutes_p) AS minutes, sum(samples_p) AS samples, sum(mid_sum_p) AS mid_sum,
  tupleElement(min(first_p), 2) AS first_mid, tupleElement(max(last_p), 2) AS last_mid,
  sum(spread_abs_p) AS spread_abs_sum, sum(spread_bps_p) AS spread_bps_sum, min(tick_p) AS tick,
  sum(depth_minutes_p) AS depth_minutes,
  sumForEach(bid_depth_p) AS bid_depth, sumForEach(ask_depth_p) AS ask_depth,
  sumForEach(bid_count_p) AS bid_count, sumForEach(ask_count_p) AS ask_count,
  sumForEach(spread_up_p) AS spread_up, sumForEach(depth_up_p) AS depth_up,
  sumForEach(slip_buy_sum_p) AS slip_buy_sum, sumForEach(slip_buy_n_p) AS slip_buy_n,
  sumForEach(slip_sell_sum_p) AS slip_sell_sum, sumForEach(slip_sell_n_p) AS slip_sell_n`;

const TRADE_PARTIALS = `sum(trades) AS trades_p, sum(amount) AS amount_p, sum(notional) AS notional_p,
  sum(volume_usd) AS volume_p, sum(usd_trades) AS usd_trades_p`;
const TRADE_OUTER = `sum(trades_p) AS trades, sum(amount_p) AS amount, sum(notional_p) AS notional,
  sum(volume_p) AS volume_usd, sum(usd_trades_p) AS usd_trades`;

const DERIVATIVE_PARTIALS = `max(funding) AS funding_p, max(open_interest) AS oi_p`;
const DERIVATIVE_OUTER = `toUnixTimestamp64Milli(tupleElement(max(funding_p), 1)) AS funding_ts, tupleElement(max(funding_p), 2) AS funding,
  toUnixTimestamp64Milli(tupleElement(max(oi_p), 1)) AS oi_ts, tupleElement(max(oi_p), 2) AS open_interest`;

const UPTIME_MINUTE_PARTIALS = `count() AS minutes_p, sum(mid) AS mid_sum_p,
  sumForEach(arrayMap(l -> toUInt64(spread_bps_max <= l), {levels:Array(Float64)})) AS spread_up_p,
  sumForEach(arrayMap((d, a) -> toUInt64(d > a),
    arrayFlatten(arrayWithConstant(length({amounts:Array(Float64)}), arrayResize(min_depth, 25, 0.))),
    arrayFlatten(arrayMap(a -> arrayWithConstant(25, a), {amounts:Array(Float64)})))) AS depth_up_p`;
const UPTIME_ROLLUP_PARTIALS = `sum(minutes) AS minutes_p, sum(mid_sum) AS mid_sum_p,
  sumForEach(spread_up) AS spread_up_p, sumForEach(depth_up) AS depth_up_p`;
const UPTIME_OUTER = `sum(minutes_p) AS minutes, sum(mid_sum_p) AS mid_sum,
  sumForEach(spread_up_p) AS spread_up, sumForEach(depth_up_p) AS depth_up`;

const PARTIALS: Record<Family, { minutes: string; rollup: string; outer: string }> = {
  book: { minutes: BOOK_MINUTE_PARTIALS, rollup: BOOK_ROLLUP_PARTIALS, outer: BOOK_OUTER },
  uptime: { minutes: UPTIME_MINUTE_PARTIALS, rollup: UPTIME_ROLLUP_PARTIALS, outer: UPTIME_OUTER },
  trade: { minutes: TRADE_PARTIALS, rollup: TRADE_PARTIALS, outer: TRADE_OUTER },
  derivative: { minutes: DERIVATIVE_PARTIALS, rollup: DERIVATIVE_PARTIALS, outer: DERIVATIVE_OUTER },
};

/**
 * The bucket of a row from its start `t` (DateTime, UTC), as epoch seconds, in zone {tz}.
 * Sub-day buckets are counted from local midnight.
 */
const BUCKET_EXPR: Record<Exclude<Interval, 'a' | 'c'>, string> = {
  '1m': 'toUnixTimestamp(t)',
  '5m': "toUnixTimestamp(toStartOfDay(t, {tz:String})) + intDiv(toUnixTimestamp(t) - toUnixTimestamp(toStartOfDay(t, {tz:String})), 300) * 300",
  '15m': "toUnixTimestamp(toStartOfDay(t, {tz:String})) + intDiv(toUnixTimestamp(t) - toUnixTimestamp(toStartOfDay(t, {tz:String})), 900) * 900",
  '30m': "toUnixTimestamp(toStartOfDay(t, {tz:String})) + intDiv(toUnixTimestamp(t) - toUnixTimestamp(toStartOfDay(t, {tz:String})), 1800) * 1800",
  '1h': "toUnixTimestamp(toStartOfDay(t, {tz:String})) + intDiv(toUnixTimestamp(t) - toUnixTimestamp(toStartOfDay(t, {tz:String})), 3600) * 3600",
  '4h': "toUnixTimestamp(toStartOfDay(t, {tz:String})) + intDiv(toUnixTimestamp(t) - toUnixTimestamp(toStartOfDay(t, {tz:String})), 14400) * 14400",
  '1d': 'toUnixTimestamp(toStartOfDay(t, {tz:String}))',
  '1w': 'toUnixTimestamp(toDateTime(toMonday(t, {tz:String}), {tz:String}))',
  '1M': 'toUnixTimestamp(toDateTime(toStartOfMonth(t, {tz:String}), {tz:String}))',
};

export interface MarketQuery {
  pairs: PairRef[];
  interval: Interval;
  zone: string;
  pieces: Piece[];
  /** Depth-uptime amounts; anything but the standard set can be read from minutes only. */
  amounts?: number[];
}

function buildSql(family: Family, q: MarketQuery, params: Params): string | undefined {
  const parts: string[] = [];
  for (const table of ['minutes', 'hours', 'days'] as const) {
    const pieces = q.pieces.filter((p) => p.table === table);
    if (pieces.length === 0) continue;
    const t = TABLES[family][table];
    const k = table[0];
    params[`${k}_from`] = pieces.map((p) => p.from / 1000);
    params[`${k}_to`] = pieces.map((p) => p.to / 1000);
    params[`${k}_table`] = t.name;
    // One index-usable range per piece: a min..max bound would read every row between
    // the window's two edge pieces.
    const ranges = pieces.map((p, i) => {
      params[`${k}_f${i}`] = p.from / 1000;
      params[`${k}_t${i}`] = p.to / 1000;
      return `(${t.start} >= toDateTime({${k}_f${i}:UInt32}, 'UTC') AND ${t.start} < toDateTime({${k}_t${i}:UInt32}, 'UTC'))`;
    });
    params[`${k}_bucket`] = pieces.map((p) => p.bucket ?? 0);
    // `c`: the bucket index of the piece the row falls in (pieces of one bucket may be in
    // several tables; the outer GROUP BY joins them).
    const bucket =
      q.interval === 'a'
        ? '0'
        : q.interval === 'c'
          ? `{${k}_bucket:Array(UInt32)}[arrayFirstIndex((f, e) -> t >= f AND t < e, {${k}_from:Array(DateTime('UTC'))}, {${k}_to:Array(DateTime('UTC'))})]`
          : BUCKET_EXPR[q.interval];
    const partials = table === 'minutes' ? PARTIALS[family].minutes : PARTIALS[family].rollup;
    parts.push(`WITH ${t.start} AS t SELECT exchange, pair, ${bucket} AS b, ${partials}
      FROM {${k}_table:Identifier} ${t.final ? 'FINAL' : ''}
      WHERE (exchange, pair) IN {pairs:Array(Tuple(String, String))} AND (${ranges.join(' OR ')})
      GROUP BY exchange, pair, b`);
  }
  if (parts.length === 0) return undefined;
  return `SELECT exchange, pair, b, ${PARTIALS[family].outer} FROM (${parts.join('\nUNION ALL\n')}) GROUP BY exchange, pair, b`;
}

export class MarketRepository {
  constructor(private readonly ch: ClickHouse) {}

  private async run<T extends { b: number }>(family: Family, q: MarketQuery): Promise<T[]> {
    if (q.pairs.length === 0) return [];
    const params: Params = {
      pairs: q.pairs.map((p) => new TupleParam([p.exchange, p.pair])),
      tz: q.zone,
      levels: [...LEVELS_BPS],
      amounts: q.amounts ?? [...UPTIME_AMOUNTS_USD],
    };
    const sql = buildSql(family, q, params);
    if (!sql) return [];
    const rows = await this.ch.query<T>(sql, params);
    for (const r of rows) r.b = Number(r.b);
    return rows;
  }

  book(q: MarketQuery): Promise<BookPartial[]> {
    return this.run<BookPartial>('book', q);
  }

  /** Only what spread and depth uptime need: minutes, mids and the up counts. */
  uptime(q: MarketQuery): Promise<UptimePartial[]> {
    return this.run<UptimePartial>('uptime', q);
  }

  trades(q: MarketQuery): Promise<TradePartial[]> {
    return this.run<TradePartial>('trade', q);
  }

  derivatives(q: MarketQuery): Promise<DerivativePartial[]> {
    return this.run<DerivativePartial>('derivative', q);
  }
}
