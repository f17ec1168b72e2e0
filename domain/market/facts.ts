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

/** Session hours on weekdays, local time, [start, end) in minutes after midnight (addendum section 5). */
export const SESSION_HOURS: Readonly<Record<Exclude<Session, 'weekend-hours'>, readonly [number, number]>> = {
  'pre-market': [4 * 60, 9 * 60 + 30],
  'opening-bell': [9 * 60 + 30, 10 * 60],
  'market-hours': [9 * 60 + 30, 16 * 60],
  'closing-bell': [15 * 60 + 30, 16 * 60],
  'after-hours': [16 * 60, 20 * 60],
  'blue-ocean': [20 * 60, 28 * 60], // to 04:00 of the next day
};

/** A session's hours as people read them: its days, and its local start and end (`HH:MM`; an end past midnight says so). */
export function sessionHours(session: Session): { days: string; start: string; end: string } {
  if (session === 'weekend-hours') return { days: 'Saturday-Sunday', start: '00:00', end: '24:00' };
  const hhmm = (minutes: number) => `${String(Math.floor(minutes / 60) % 24).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
  const [a, b] = SESSION_HOURS[session];
  return { days: 'Monday-Friday', start: hhmm(a), end: b > 24 * 60 ? `${hhmm(b)} (next day)` : hhmm(b) };
}

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

/** Whether a metric is a percentage (uptime, coverage: 0 to 100), as a threshold or a reported value. */
export const isPercentMetric = (metric: string): boolean => metric.startsWith('uptime/') || metric.startsWith('coverage/');

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
