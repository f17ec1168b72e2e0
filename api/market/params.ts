// The shared parameters of the market endpoints (specification 4.1, addendum 3): parsed
// from a query string or a JSON body (lists as arrays or comma-separated strings), checked,
// and turned into a window, a bucket plan and the pairs to read. Every problem is a 400
// naming its field; conflicting window parameters are non_field_errors.
import { DateTime, IANAZone } from 'luxon';
import { badRequest, nonFieldError, type FieldErrors } from '../http/errors.ts';
import { LEVELS_BPS, UPTIME_AMOUNTS_USD } from '../../processors/metrics/levels.ts';
import {
  DEFAULT_SESSION_ZONE,
  INTERVALS,
  LOOKBACKS,
  MAX_SPAN_MS,
  SESSIONS,
  lookbackRange,
  planBuckets,
  sessionRanges,
  type BucketPlan,
  type Interval,
  type Range,
  type Session,
} from './window.ts';

export type RawParams = Record<string, unknown>;

export interface WindowParams {
  interval: Interval;
  ranges: Range[];
  /** Zone buckets align to: market_hours_timezone when given, else UTC. */
  zone: string;
  /** Whether the zone was given (timestamps are then written with its offset). */
  zoned: boolean;
  plan: BucketPlan;
}

const DAY = 86_400_000;
const MAX_ASSETS = 100;
const MAX_LEVELS = 25;

/** Collects field errors; throws them together. */
export class Problems {
  readonly fields: FieldErrors = {};
  add(field: string, message: string): void {
    const list = (this.fields[field] as string[] | undefined) ?? [];
    list.push(message);
    this.fields[field] = list;
  }
  get any(): boolean {
    return Object.keys(this.fields).length > 0;
  }
  throwIfAny(): void {
    if (this.any) throw badRequest(this.fields);
  }
}

function str(raw: RawParams, name: string, p: Problems): string | undefined {
  const v = raw[name];
  if (v === undefined || v === null || v === '') return undefined;
  if (Array.isArray(v)) {
    if (v.length === 1 && typeof v[0] === 'string') return v[0];
    p.add(name, 'Not a valid string.');
    return undefined;
  }
  if (typeof v !== 'string') {
    p.add(name, 'Not a valid string.');
    return undefined;
  }
  return v.trim();
}

/** A list given as an array or a comma-separated string (or repeated query keys). */
export function list(raw: RawParams, name: string, p: Problems): string[] | undefined {
  const v = raw[name];
  if (v === undefined || v === null || v === '') return undefined;
  const items = Array.isArray(v) ? v.flatMap((x) => (typeof x === 'string' ? x.split(',') : [x])) : typeof v === 'string' ? v.split(',') : [v];
  const out: string[] = [];
  for (const item of items) {
    if (typeof item === 'number' && Number.isFinite(item)) out.push(String(item));
    else if (typeof item === 'string') {
      if (item.trim() !== '') out.push(item.trim());
    } else {
      p.add(name, 'Expected a list of values or a comma-separated string.');
      return undefined;
    }
  }
  return out;
}

function oneOf<T extends string>(raw: RawParams, name: string, allowed: readonly T[], p: Problems): T | undefined {
  const v = str(raw, name, p);
  if (v === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(v)) {
    p.add(name, `"${v}" is not a valid choice; expected one of: ${allowed.join(', ')}.`);
    return undefined;
  }
  return v as T;
}

function isoTime(raw: RawParams, name: string, p: Problems): number | undefined {
  let v = str(raw, name, p);
  if (v === undefined) return undefined;
  // An unencoded "+05:30" in a query string arrives as " 05:30".
  v = v.replace(/ (\d{2}(?::?\d{2})?)$/, '+$1');
  const d = DateTime.fromISO(v, { zone: 'utc', setZone: true });
  if (!d.isValid) {
    p.add(name, 'Enter a valid ISO 8601 date-time, e.g. 2026-06-25T10:00:00Z.');
    return undefined;
  }
  return d.toMillis();
}

function sessionDays(raw: RawParams, p: Problems): { week: 'this' | 'last'; day: number }[] | undefined {
  const v = raw.market_hours_days;
  if (v === undefined || v === null || v === '') return undefined;
  const out: { week: 'this' | 'last'; day: number }[] = [];
  const items: unknown[] = Array.isArray(v) ? v : typeof v === 'string' ? v.split(',') : [v];
  for (const item of items) {
    let week: unknown;
    let day: unknown;
    if (typeof item === 'string') {
      const m = /^\s*(\w+)\s*:\s*(-?\d+)\s*$/.exec(item);
      if (!m) {
        p.add('market_hours_days', `"${item}" is not <week>:<day>, e.g. this:1.`);
        return undefined;
      }
      week = m[1];
      day = Number(m[2]);
    } else if (item && typeof item === 'object') {
      week = (item as { week?: unknown }).week;
      day = typeof (item as { day?: unknown }).day === 'string' ? Number((item as { day: string }).day) : (item as { day?: unknown }).day;
    }
    if (week !== 'this' && week !== 'last') {
      p.add('market_hours_days', 'week must be "this" or "last".');
      return undefined;
    }
    if (typeof day !== 'number' || !Number.isInteger(day) || day < 0 || day > 6) {
      p.add('market_hours_days', 'day must be 0 (Sunday) to 6 (Saturday).');
      return undefined;
    }
    out.push({ week, day });
  }
  if (out.length === 0) p.add('market_hours_days', 'This list may not be empty.');
  return out;
}

/**
 * The window: time_start/time_end, or a lookback, or a trading session on selected days;
 * the last 24 hours when none is given. Checked against the span guard of the interval.
 */
export function parseWindow(raw: RawParams, now: number, opts: { allowed?: readonly Interval[]; defaultInterval?: Interval } = {}): WindowParams {
  const p = new Problems();
  const interval = oneOf(raw, 'interval', opts.allowed ?? INTERVALS, p) ?? opts.defaultInterval ?? 'a';
  const start = isoTime(raw, 'time_start', p);
  const end = isoTime(raw, 'time_end', p);
  const lookback = oneOf(raw, 'lookback', Object.keys(LOOKBACKS), p);
  const session = oneOf<Session>(raw, 'market_hours_session', SESSIONS, p);
  const days = sessionDays(raw, p);
  const zoneRaw = str(raw, 'market_hours_timezone', p);
  if (zoneRaw !== undefined && !IANAZone.isValidZone(zoneRaw)) p.add('market_hours_timezone', `"${zoneRaw}" is not a known time zone name (e.g. America/New_York).`);
  p.throwIfAny();

  const explicit = start !== undefined || end !== undefined;
  if (lookback && explicit) throw nonFieldError('lookback cannot be combined with time_start or time_end.');
  if (session && (explicit || lookback)) throw nonFieldError('market_hours_session cannot be combined with time_start, time_end or lookback.');
  if (session && !days) throw badRequest({ market_hours_days: ['This field is required with market_hours_session.'] });
  if (days && !session) throw badRequest({ market_hours_session: ['This field is required with market_hours_days.'] });

  const zone = zoneRaw ?? 'UTC';
  let ranges: Range[];
  if (session) {
    ranges = sessionRanges(session, days!, zoneRaw ?? DEFAULT_SESSION_ZONE, now);
  } else if (lookback) {
    ranges = [lookbackRange(lookback, now)];
  } else if (explicit) {
    const to = end ?? now;
    const from = start ?? to - DAY;
    if (from >= to) throw badRequest({ time_start: ['Must be before time_end.'] });
    ranges = [[from, to]];
  } else {
    ranges = [[now - DAY, now]];
  }
  if (ranges.length > 0) {
    const span = ranges[ranges.length - 1]![1] - ranges[0]![0];
    if (span > MAX_SPAN_MS[interval]) {
      throw badRequest({
        interval: [`A window of ${Math.ceil(span / DAY)} days is too long for interval "${interval}" (at most ${Math.round(MAX_SPAN_MS[interval] / DAY)} days); use a larger interval.`],
      });
    }
  }
  // Buckets follow the session's zone too, when a session picks the window.
  const bucketZone = zoneRaw ?? (session ? DEFAULT_SESSION_ZONE : zone);
  return { interval, ranges, zone: bucketZone, zoned: bucketZone !== 'UTC', plan: planBuckets(interval, ranges, bucketZone) };
}

/** bps levels: each must be a level of L; default all 25. */
export function parseLevels(raw: RawParams, p: Problems): number[] {
  const items = list(raw, 'bps', p);
  if (!items) return [...LEVELS_BPS];
  if (items.length > MAX_LEVELS) p.add('bps', `Ensure this field has no more than ${MAX_LEVELS} elements.`);
  const out: number[] = [];
  for (const item of items) {
    const n = Number(item);
    if (!Number.isFinite(n) || !(LEVELS_BPS as readonly number[]).includes(n)) {
      p.add('bps', `"${item}" is not a supported level; supported: ${LEVELS_BPS.join(', ')}.`);
    } else if (!out.includes(n)) out.push(n);
  }
  return out.sort((a, b) => a - b);
}

/** Depth-uptime order sizes in USD; default the five standard ones. */
export function parseAmounts(raw: RawParams, p: Problems): number[] {
  const items = list(raw, 'amounts', p);
  if (!items) return [...UPTIME_AMOUNTS_USD];
  if (items.length > MAX_LEVELS) p.add('amounts', `Ensure this field has no more than ${MAX_LEVELS} elements.`);
  const out: number[] = [];
  for (const item of items) {
    const n = Number(item);
    if (!Number.isFinite(n) || n <= 0) p.add('amounts', `"${item}" is not a positive number of USD.`);
    else if (!out.includes(n)) out.push(n);
  }
  return out;
}

export const ASSET_MESSAGE = (symbol: string) => `"${symbol}" is not one of your assets.`;

/**
 * The assets asked for, each one the caller's (unknown and unauthorized get the same
 * message); all of the caller's when none are given.
 */
export function parseAssets(raw: RawParams, allowed: string[], p: Problems, opts: { max?: number } = {}): string[] {
  const items = list(raw, 'assets', p);
  if (!items) return allowed;
  const max = opts.max ?? MAX_ASSETS;
  if (items.length > max) p.add('assets', `Ensure this field has no more than ${max} elements.`);
  const set = new Set(allowed);
  const out: string[] = [];
  for (const a of items) {
    if (!set.has(a)) p.add('assets', ASSET_MESSAGE(a));
    else if (!out.includes(a)) out.push(a);
  }
  return out;
}
