// Order-book metrics (addendum section 4): per minute the mean mid, depth and counts at
// every level of L, the widest spread and the least depth (which decide spread-up and
// depth-up), slippage and top of book, from processors/orderbook/minute.ts. The rollups
// keep sums and counts, so any window's means come out exact.
import { LEVELS_BPS, UPTIME_AMOUNTS_USD } from '../facts.ts';
import type { Family, PartialKey, TimeValue } from './family.ts';

const LEVELS = '{levels:Array(Float64)}';
const AMOUNTS = '{amounts:Array(Float64)}';

export const book: Family = {
  name: 'book',
  tables: { minutes: 'book_minutes', hours: 'book_hours', days: 'book_days', open: 'book_open_hours' },
  params: { levels: [...LEVELS_BPS], amounts: [...UPTIME_AMOUNTS_USD] },
  aggregates: [
    { name: 'minutes', type: 'UInt64', minute: 'count()', combine: 'sum', partial: 'value' },
    { name: 'samples', type: 'UInt64', minute: 'sum(samples)', combine: 'sum', partial: 'value' },
    { name: 'mid_sum', type: 'Float64', minute: 'sum(mid)', combine: 'sum', partial: 'value' },
    { name: 'first', type: "Tuple(DateTime64(3, 'UTC'), Float64)", minute: 'min(first_mid)', combine: 'min', partial: 'time-value' },
    { name: 'last', type: "Tuple(DateTime64(3, 'UTC'), Float64)", minute: 'max(last_mid)', combine: 'max', partial: 'time-value' },
    { name: 'spread_abs_sum', type: 'Float64', minute: 'sum(spread_abs)', combine: 'sum' },
    { name: 'spread_bps_sum', type: 'Float64', minute: 'sum(spread_bps)', combine: 'sum' },
    { name: 'spread_max', type: 'Float64', minute: 'max(spread_bps_max)', combine: 'max' },
    { name: 'last_top', type: "Tuple(DateTime64(3, 'UTC'), Float64, Float64, Float64, Float64)", minute: 'max(top)', combine: 'max' },
    { name: 'tick_min', type: 'Nullable(Float64)', minute: 'min(tick)', combine: 'min', partial: 'value' },
    { name: 'depth_minutes', type: 'UInt64', minute: 'countIf(depth_samples > 0)', combine: 'sum', partial: 'value' },
    { name: 'bid_depth_sum', type: 'Array(Float64)', minute: 'sumForEach(bid_depth)', combine: 'sumEach', partial: 'value' },
    { name: 'ask_depth_sum', type: 'Array(Float64)', minute: 'sumForEach(ask_depth)', combine: 'sumEach', partial: 'value' },
    { name: 'bid_count_sum', type: 'Array(Float64)', minute: 'sumForEach(bid_count)', combine: 'sumEach', partial: 'value' },
    { name: 'ask_count_sum', type: 'Array(Float64)', minute: 'sumForEach(ask_count)', combine: 'sumEach', partial: 'value' },
    // Up minutes per level of L: the minute's widest spread within the level.
    { name: 'spread_up', type: 'Array(UInt64)', minute: `sumForEach(arrayMap(l -> toUInt64(spread_bps_max <= l), ${LEVELS}))`, combine: 'sumEach' },
    // Up minutes per amount and level, amount-major: the minute's least depth above the
    // amount (a book with fewer levels stored reads 0 beyond them: not up).
    {
      name: 'depth_up',
      type: 'Array(UInt64)',
      minute: `sumForEach(arrayMap((d, a) -> toUInt64(d > a),
        arrayFlatten(arrayWithConstant(length(${AMOUNTS}), arrayResize(min_depth, length(${LEVELS}), 0.))),
        arrayFlatten(arrayMap(a -> arrayWithConstant(length(${LEVELS}), a), ${AMOUNTS}))))`,
      combine: 'sumEach',
    },
    { name: 'slip_buy_sum', type: 'Array(Float64)', minute: 'sumForEach(arrayMap(x -> ifNull(x, 0.), slippage_buy))', combine: 'sumEach' },
    { name: 'slip_buy_n', type: 'Array(UInt64)', minute: 'sumForEach(arrayMap(x -> toUInt64(isNotNull(x)), slippage_buy))', combine: 'sumEach' },
    { name: 'slip_sell_sum', type: 'Array(Float64)', minute: 'sumForEach(arrayMap(x -> ifNull(x, 0.), slippage_sell))', combine: 'sumEach' },
    { name: 'slip_sell_n', type: 'Array(UInt64)', minute: 'sumForEach(arrayMap(x -> toUInt64(isNotNull(x)), slippage_sell))', combine: 'sumEach' },
    // The minutes' mids in USD (an asset's price over all its pairs, domain/market/prices.ts).
    { name: 'usd_mid_sum', type: 'Float64', minute: 'sum(ifNull(mid_usd, 0.))', combine: 'sum' },
    { name: 'usd_mid_minutes', type: 'UInt64', minute: 'count(mid_usd)', combine: 'sum' },
  ],
};

/** What summary and leaderboard read of the books over a window or bucket. */
export interface BookPartial extends PartialKey {
  minutes: number;
  samples: number;
  mid_sum: number;
  /** The first and last snapshot mids, with their times. */
  first: TimeValue;
  last: TimeValue;
  tick_min: number | null;
  /** Minutes whose snapshots all had a USD rate: the depth means' denominator. */
  depth_minutes: number;
  bid_depth_sum: number[];
  ask_depth_sum: number[];
  bid_count_sum: number[];
  ask_count_sum: number[];
}
