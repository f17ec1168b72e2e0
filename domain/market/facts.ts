// The fixed sets of the market domain (specification 2.5, 4.1, 4.9; addendum sections 3-5),
// read by the processors, the rollups and the API alike: a fact is written here once.
import type { DurationLikeObject } from 'luxon';

/** Level set L: distances from the mid price in bps. */
export const LEVELS_BPS = [0, 0.05, 0.1, 0.15, 0.25, 0.5, 0.75, 1, 2, 3, 5, 10, 15, 20, 25, 30, 40, 50, 60, 75, 100, 150, 200, 300, 500] as const;

/** Depth-uptime amounts (USD) the rollups count at every level: the default of `amounts`. */
export const UPTIME_AMOUNTS_USD = [25_000, 50_000, 100_000, 150_000, 250_000] as const;

/** Slippage order sizes (USD). */
export const SLIPPAGE_SIZES_USD = [100, 1_000, 10_000, 50_000, 100_000, 250_000, 500_000, 1_000_000, 5_000_000, 10_000_000] as const;

/** A level (or amount, size) as written in column names: no trailing zeros (0.5 -> "0.5", 500 -> "500"). */
export const levelName = (x: number): string => String(x);

/** The index of a level in L, -1 when it is none; `10.0` and `10` are the same level. */
export const levelIndex = (bps: number): number => LEVELS_BPS.indexOf(bps as (typeof LEVELS_BPS)[number]);

export const isLevel = (bps: number): boolean => levelIndex(bps) >= 0;

/** Aggregation periods (specification 4.1). */
export const INTERVALS = ['1M', '1w', '1d', '4h', '1h', '30m', '15m', '5m', '1m', 'c', 'a'] as const;
export type Interval = (typeof INTERVALS)[number];
export type FixedInterval = Exclude<Interval, 'a' | 'c'>;

export const LOOKBACKS: Record<string, DurationLikeObject> = {
  '30-minutes': { minutes: 30 },
  '1-hour': { hours: 1 },
  '3-hours': { hours: 3 },
  '6-hours': { hours: 6 },
  '12-hours': { hours: 12 },
  '1-day': { days: 1 },
  '7-days': { days: 7 },
  '1-month': { months: 1 },
  '3-months': { months: 3 },
  '6-months': { months: 6 },
  '1-year': { years: 1 },
};

/** Trading sessions (addendum section 5). */
export const SESSIONS = ['pre-market', 'opening-bell', 'market-hours', 'closing-bell', 'after-hours', 'blue-ocean', 'weekend-hours'] as const;
export type Session = (typeof SESSIONS)[number];

export const DEFAULT_SESSION_ZONE = 'America/New_York';

const atLevels = (f: (l: string) => string) => LEVELS_BPS.map((l) => f(levelName(l)));

/** Metric identifiers of `gb` targets (specification 4.9), every level, size and amount spelled out. */
export const GB_METRICS: readonly string[] = Object.freeze([
  'volume/volume',
  'volume/twap',
  'volume/vwap',
  'spread/mid_price',
  'spread/spread_abs',
  'spread/spread_bps',
  ...(['bid', 'n_bid', 'ask', 'n_ask'] as const).flatMap((f) => atLevels((l) => `depth/${f}_${l}bps`)),
  ...(['buy', 'sell'] as const).flatMap((side) => SLIPPAGE_SIZES_USD.map((s) => `slippage/slippage_${side}_at_${levelName(s)}`)),
  ...atLevels((l) => `uptime/spread/${l}bps`),
  ...UPTIME_AMOUNTS_USD.flatMap((a) => atLevels((l) => `uptime/depth/${levelName(a)}_at_${l}bps`)),
  'top_of_book/bid_price',
  'top_of_book/bid_amount',
  'top_of_book/ask_price',
  'top_of_book/ask_amount',
]);

/** Metric identifiers of `mm` targets (specification 4.9). */
export const MM_METRICS: readonly string[] = Object.freeze([
  'volume/volume',
  'spread/spread_bps',
  ...(['bid', 'ask'] as const).flatMap((f) => atLevels((l) => `depth/${f}_${l}bps`)),
  'coverage/volume/volume_coverage',
  ...(['bid', 'ask'] as const).flatMap((f) => atLevels((l) => `coverage/depth/${f}_${l}bps_coverage`)),
  'uptime/spread/spread_uptime',
  ...(['bid', 'ask'] as const).flatMap((f) => atLevels((l) => `uptime/depth/${f}_${l}bps`)),
]);
