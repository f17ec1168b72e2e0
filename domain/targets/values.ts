// A target's value over its window from the aggregates of the window's minute rows, for
// every metric identifier of part 4.9: the market's values (domain/market/values.ts) and a
// market maker's (domain/market-makers/values.ts), as the endpoints answer them. Null when
// the window holds no data for it, or the metric is not measured (a market maker's own
// spread and uptime).
import { LEVELS_BPS, SLIPPAGE_SIZES_USD, UPTIME_AMOUNTS_USD, levelName } from '../market/facts.ts';
import { depth, levelCount, mean, twap, volume, vwap } from '../market/values.ts';
import { coverage, type Values } from '../market-makers/values.ts';

/** The book family's aggregates over a window (domain/market/families/book.ts), as read. */
export interface BookWindow {
  minutes: number;
  mid_sum: number;
  spread_abs_sum: number;
  spread_bps_sum: number;
  last_top: [number, number, number, number, number];
  depth_minutes: number;
  bid_depth_sum: number[];
  ask_depth_sum: number[];
  bid_count_sum: number[];
  ask_count_sum: number[];
  spread_up: number[];
  depth_up: number[];
  slip_buy_sum: number[];
  slip_buy_n: number[];
  slip_sell_sum: number[];
  slip_sell_n: number[];
}

export interface TradeWindow {
  trades: number;
  amount: number;
  notional: number;
  volume_usd: number;
  usd_trades: number;
}

/** A market maker's trusted values over the window at every level of L, its wallets on the pair together. */
export type TrustedWindow = Values;

const L = new Map(LEVELS_BPS.map((l, i) => [levelName(l), i]));
const SIZES = new Map(SLIPPAGE_SIZES_USD.map((s, i) => [levelName(s), i]));
const AMOUNTS = new Map(UPTIME_AMOUNTS_USD.map((a, i) => [levelName(a), i]));

/** The value of a `gb` metric. */
export function gbValue(metric: string, b: BookWindow | undefined, t: TradeWindow | undefined): number | null {
  let m: RegExpExecArray | null;
  switch (metric) {
    case 'volume/volume':
      return volume(t);
    case 'volume/twap':
    case 'spread/mid_price':
      return twap(b);
    case 'volume/vwap':
      return vwap(t);
    case 'spread/spread_abs':
      return mean(b?.spread_abs_sum, b?.minutes);
    case 'spread/spread_bps':
      return mean(b?.spread_bps_sum, b?.minutes);
    case 'top_of_book/bid_price':
      return b && b.minutes > 0 ? b.last_top[1] : null;
    case 'top_of_book/bid_amount':
      return b && b.minutes > 0 ? b.last_top[2] : null;
    case 'top_of_book/ask_price':
      return b && b.minutes > 0 ? b.last_top[3] : null;
    case 'top_of_book/ask_amount':
      return b && b.minutes > 0 ? b.last_top[4] : null;
  }
  if (!b) return null;
  if ((m = /^depth\/(n_)?(bid|ask)_(.+)bps$/.exec(metric))) {
    const i = L.get(m[3]!)!;
    const side = m[2] === 'bid' ? 'bid' : 'ask';
    return m[1] ? levelCount(b, side, i) : depth(b, side, i);
  }
  if ((m = /^slippage\/slippage_(buy|sell)_at_(.+)$/.exec(metric))) {
    const j = SIZES.get(m[2]!)!;
    return m[1] === 'buy' ? mean(b.slip_buy_sum[j], b.slip_buy_n[j]) : mean(b.slip_sell_sum[j], b.slip_sell_n[j]);
  }
  if ((m = /^uptime\/spread\/(.+)bps$/.exec(metric))) {
    const v = mean(b.spread_up[L.get(m[1]!)!], b.minutes);
    return v === null ? null : 100 * v;
  }
  if ((m = /^uptime\/depth\/(.+)_at_(.+)bps$/.exec(metric))) {
    const v = mean(b.depth_up[AMOUNTS.get(m[1]!)! * LEVELS_BPS.length + L.get(m[2]!)!], b.minutes);
    return v === null ? null : 100 * v;
  }
  return null;
}

/** The value of an `mm` metric: trusted values, and their coverage of the whole market. */
export function mmValue(metric: string, own: TrustedWindow | undefined, b: BookWindow | undefined, t: TradeWindow | undefined): number | null {
  let m: RegExpExecArray | null;
  if (metric === 'volume/volume') return own ? own.volume : null;
  if (metric === 'coverage/volume/volume_coverage') return coverage(own?.volume ?? null, volume(t));
  if ((m = /^depth\/(bid|ask)_(.+)bps$/.exec(metric))) {
    const i = L.get(m[2]!)!;
    return own ? (m[1] === 'bid' ? own.bid : own.ask)[i] ?? null : null;
  }
  if ((m = /^coverage\/depth\/(bid|ask)_(.+)bps_coverage$/.exec(metric))) {
    const i = L.get(m[2]!)!;
    const mine = own ? (m[1] === 'bid' ? own.bid : own.ask)[i] ?? null : null;
    const whole = depth(b, m[1] === 'bid' ? 'bid' : 'ask', i);
    return coverage(mine, whole);
  }
  // spread/spread_bps and the uptime metrics of a market maker are not measured yet.
  return null;
}
