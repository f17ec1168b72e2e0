// The Markets view's parameters, kept in the address (?asset=...&lookback=...), and the
// query each endpoint gets from them: the window as the endpoints take it (lookback, a
// range, or a session on chosen days), the interval, the time zone. The lists are the
// document's enums (`satisfies` keeps them to it).
import type { QueryOf, Schemas } from '../../api/client';

export type Level = Schemas['Level'];
export type Lookback = Schemas['Lookback'];
export type Session = Schemas['Session'];
export type Interval = Exclude<NonNullable<QueryOf<'/v2/metrics/uptime/spread/'>['interval']>, 'a'>;

export const LEVELS = [0, 0.05, 0.1, 0.15, 0.25, 0.5, 0.75, 1, 2, 3, 5, 10, 15, 20, 25, 30, 40, 50, 60, 75, 100, 150, 200, 300, 500] as const satisfies readonly Level[];
export const AMOUNTS = [25000, 50000, 100000, 150000, 250000] as const;
export const LOOKBACKS = ['30-minutes', '1-hour', '3-hours', '6-hours', '12-hours', '1-day', '7-days', '1-month', '3-months', '6-months', '1-year'] as const satisfies readonly Lookback[];
export const INTERVALS = ['1m', '5m', '15m', '30m', '1h', '4h', '1d', '1w', '1M', 'c'] as const satisfies readonly Interval[];
export const SESSIONS = ['pre-market', 'opening-bell', 'market-hours', 'closing-bell', 'after-hours', 'blue-ocean', 'weekend-hours'] as const satisfies readonly Session[];
export const DAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** A level of the document's list, or null. */
export const levelOf = (v: string | null): Level | null => {
  const n = v === null || v === '' ? NaN : Number(v);
  return (LEVELS as readonly number[]).includes(n) ? (n as Level) : null;
};

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
  level: Level;
  amount: number;
}

const oneOf = <T extends string>(list: readonly T[], v: string | null, fallback: T): T => (v && (list as readonly string[]).includes(v) ? (v as T) : fallback);

export function readParams(q: URLSearchParams, assets: string[]): MarketParams {
  const asset = assets.includes(q.get('asset') ?? '') ? q.get('asset')! : (assets[0] ?? '');
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
    level: levelOf(q.get('bps')) ?? 10,
    amount: (AMOUNTS as readonly number[]).includes(amount) ? amount : 50000,
  };
}

export type WindowQuery = Pick<QueryOf<'/v2/metrics/summary/'>, 'lookback' | 'time_start' | 'time_end' | 'market_hours_session' | 'market_hours_days' | 'market_hours_timezone'>;

/** The window and zone as every market endpoint takes them. */
export function windowQuery(p: MarketParams): WindowQuery {
  const q: WindowQuery = {};
  if (p.mode === 'session') {
    q.market_hours_session = p.session;
    q.market_hours_days = p.days;
  } else if (p.mode === 'range') {
    q.time_start = p.start;
    if (p.end) q.time_end = p.end;
  } else q.lookback = p.lookback;
  if (p.zone) q.market_hours_timezone = p.zone;
  return q;
}

export const pairLabel = (exchange: string, pair: string) => `${exchange} ${pair}`;
