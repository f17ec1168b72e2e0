// The Markets view's parameters, kept in the address (?asset=...&lookback=...), and the
// query each endpoint gets from them: the window as the endpoints take it (lookback, a
// range, or a session on chosen days), the interval, the time zone.
export const LEVELS = [0, 0.05, 0.1, 0.15, 0.25, 0.5, 0.75, 1, 2, 3, 5, 10, 15, 20, 25, 30, 40, 50, 60, 75, 100, 150, 200, 300, 500];
export const AMOUNTS = [25000, 50000, 100000, 150000, 250000];
export const LOOKBACKS = ['30-minutes', '1-hour', '3-hours', '6-hours', '12-hours', '1-day', '7-days', '1-month', '3-months', '6-months', '1-year'] as const;
export const INTERVALS = ['1m', '5m', '15m', '30m', '1h', '4h', '1d', '1w', '1M', 'c'] as const;
export const SESSIONS = ['pre-market', 'opening-bell', 'market-hours', 'closing-bell', 'after-hours', 'blue-ocean', 'weekend-hours'] as const;
export const DAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

export type Lookback = (typeof LOOKBACKS)[number];
export type Interval = (typeof INTERVALS)[number];
export type Session = (typeof SESSIONS)[number];

export interface MarketParams {
  asset: string;
  /** Exchanges shown; empty = all of the asset's. */
  exchanges: string[];
  mode: 'lookback' | 'range' | 'session';
  lookback: Lookback;
  start: string;
  end: string;
  session: Session;
  days: string[];
  interval: Interval;
  zone: string;
  level: number;
  amount: number;
}

const oneOf = <T extends string>(list: readonly T[], v: string | null, fallback: T): T => (v && (list as readonly string[]).includes(v) ? (v as T) : fallback);

export function readParams(q: URLSearchParams, assets: string[]): MarketParams {
  const asset = assets.includes(q.get('asset') ?? '') ? q.get('asset')! : (assets[0] ?? '');
  const level = Number(q.get('bps') ?? 10);
  const amount = Number(q.get('amount') ?? 50000);
  const mode = q.get('session') ? 'session' : q.get('start') ? 'range' : 'lookback';
  return {
    asset,
    exchanges: (q.get('exchanges') ?? '').split(',').filter(Boolean),
    mode,
    lookback: oneOf(LOOKBACKS, q.get('lookback'), '1-day'),
    start: q.get('start') ?? '',
    end: q.get('end') ?? '',
    session: oneOf(SESSIONS, q.get('session'), 'market-hours'),
    days: (q.get('days') ?? 'this:1,this:2,this:3,this:4,this:5,last:1,last:2,last:3,last:4,last:5').split(',').filter(Boolean),
    interval: oneOf(INTERVALS, q.get('interval'), '1h'),
    zone: q.get('tz') ?? '',
    level: LEVELS.includes(level) ? level : 10,
    amount: AMOUNTS.includes(amount) ? amount : 50000,
  };
}

export interface WindowQuery {
  lookback?: Lookback;
  time_start?: string;
  time_end?: string;
  market_hours_session?: Session;
  market_hours_days?: string;
  market_hours_timezone?: string;
}

/** The window and zone as every market endpoint takes them. */
export function windowQuery(p: MarketParams): WindowQuery {
  const q: WindowQuery = {};
  if (p.mode === 'session') {
    q.market_hours_session = p.session;
    q.market_hours_days = p.days.join(',');
  } else if (p.mode === 'range') {
    q.time_start = p.start;
    if (p.end) q.time_end = p.end;
  } else q.lookback = p.lookback;
  if (p.zone) q.market_hours_timezone = p.zone;
  return q;
}

export const pairLabel = (exchange: string, pair: string) => `${exchange} ${pair}`;
