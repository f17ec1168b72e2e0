// The market's values over a bucket or window from the partial aggregates of its minute rows
// (addendum section 4): means over the minutes with data, volume a sum, price change from
// the first and last mid, funding and open interest the latest. Every reader takes them from
// here: the market endpoints, the market-maker endpoints (coverage), the target evaluator.
import type { BookPartial, DerivativePartial, TradePartial } from './families/index.ts';

/** A sum over a count, null when the count is 0 (or the sum is missing). */
export const mean = (sum: number | undefined, n: number | undefined): number | null => (sum !== undefined && n !== undefined && n > 0 ? sum / n : null);

/** mean, NaN where it is null (an unknown sum, read as null, too): for packed values, none boxed. */
export const meanPacked = (sum: number | null | undefined, n: number): number => (sum !== undefined && sum !== null && n > 0 ? sum / n : NaN);

type Trades = Pick<TradePartial, 'trades' | 'volume_usd' | 'usd_trades'>;

/**
 * The USD volume. A window without a trade row traded nothing: 0, as a sum over no trades
 * (the trades processor writes rows only for minutes with trades, so no row and no trade
 * are the same thing). Null only when trades were seen and none had a USD rate.
 */
export function volume(t: Trades | undefined): number | null {
  if (!t || t.trades === 0) return 0;
  return t.usd_trades > 0 ? t.volume_usd : null;
}

/** The mean minute mid. */
export const twap = (b: Pick<BookPartial, 'mid_sum' | 'minutes'> | undefined): number | null => (b ? mean(b.mid_sum, b.minutes) : null);

export const vwap = (t: Pick<TradePartial, 'notional' | 'amount'> | undefined): number | null => (t && t.amount > 0 ? t.notional / t.amount : null);

/** 100 x (last mid / first mid - 1). */
export const priceChange = (b: Pick<BookPartial, 'first' | 'last'> | undefined): number | null => (b && b.first[1] > 0 ? 100 * (b.last[1] / b.first[1] - 1) : null);

/** USD depth at the level of index `i` of L on one side: the mean over the minutes whose snapshots all had a USD rate. */
export const depth = (b: Pick<BookPartial, 'bid_depth_sum' | 'ask_depth_sum' | 'depth_minutes'> | undefined, side: 'bid' | 'ask', i: number): number | null =>
  b ? mean((side === 'bid' ? b.bid_depth_sum : b.ask_depth_sum)[i], b.depth_minutes) : null;

/** The number of levels within the level of index `i` of L on one side: the mean over minutes. */
export const levelCount = (b: Pick<BookPartial, 'bid_count_sum' | 'ask_count_sum' | 'minutes'> | undefined, side: 'bid' | 'ask', i: number): number | null =>
  b ? mean((side === 'bid' ? b.bid_count_sum : b.ask_count_sum)[i], b.minutes) : null;

export function derivatives(d: DerivativePartial | undefined): { funding_rate_8h: number | null; usd_open_interest: number | null } {
  return {
    funding_rate_8h: d && d.funding[0] > 0 ? d.funding[1] : null,
    usd_open_interest: d && d.open_interest[0] > 0 ? d.open_interest[1] : null,
  };
}

/** Snapshots a tick size needs to be `ok`. */
export const TICK_MIN_SAMPLES = 10;

/** Tick size in bps of the mean mid; its status needs enough snapshots. */
export function tick(b: BookPartial | undefined): { tick_bps: number | null; tick_bps_status: string; tick_bps_samples: number } {
  const mid = twap(b);
  const samples = b?.samples ?? 0;
  return {
    tick_bps: b && b.tick_min !== null && mid ? (b.tick_min / mid) * 1e4 : null,
    tick_bps_status: samples >= TICK_MIN_SAMPLES ? 'ok' : 'insufficient_data',
    tick_bps_samples: samples,
  };
}
