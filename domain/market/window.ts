// Time windows, trading sessions and buckets of the market endpoints (specification 4.1,
// addendum sections 4-5), and how each bucket is answered from the coarsest stored rows:
// whole UTC days from day rows, whole hours from hour rows, the rest from minute rows.
// Hour and day rows are read only before the hour their processors have rolled up to
// (`rolledUpTo`, domain/market/repositories/rollup-marks.ts); a mark inside an hour adds
// that hour's rows so far, to the mark (the `open` table); after the mark, minute rows.
import { DateTime } from 'luxon';
import { DEFAULT_SESSION_ZONE, LOOKBACKS, SESSION_HOURS, type FixedInterval, type Interval, type Session } from './facts.ts';
import { DAY_MS, HOUR_MS } from '../../lib/time.ts';

/** [from, to) in epoch ms. */
export type Range = [number, number];

/**
 * `open`: the market families' rows of the hour the mark is in, each covering the hour's
 * minutes before the mark (schemas/clickhouse/008); a piece of it runs from the hour to
 * the mark, and reads the rows of that mark only.
 */
export type Table = 'minutes' | 'open' | 'hours' | 'days';

export interface Piece {
  table: Table;
  from: number;
  to: number;
  /** Index of the bucket this piece belongs to, when buckets are not an SQL expression. */
  bucket?: number;
}

const MIN = 60_000;

const floorTo = (t: number, unit: number) => Math.floor(t / unit) * unit;
const ceilTo = (t: number, unit: number) => Math.ceil(t / unit) * unit;

export interface SealingOptions {
  /** How long after its end a minute may still be written: the processors' lateness. */
  latenessMs: number;
  /** The service's clock. */
  now: () => number;
}

/**
 * Data ending before this is sealed: its lateness, and a minute for its write, have passed.
 * The API keeps answers of sealed data (api/market-caches/); the processors roll up sealed hours.
 */
export function sealedBefore(opts: SealingOptions): number {
  return opts.now() - opts.latenessMs - MIN;
}

/** A session's days: `this` or `last` week (weeks start on Sunday), day 0 (Sunday) to 6. */
export interface SessionDay {
  week: 'this' | 'last';
  day: number;
}

/** What picks a window's time (specification 4.1): explicit bounds, a lookback, a session, or none (the last 24 hours). */
export type WindowSpan =
  | { kind: 'range'; from: number; to: number }
  | { kind: 'lookback'; lookback: string }
  | { kind: 'session'; session: Session; days: SessionDay[] }
  | { kind: 'last-day' };

/** A market request's window: its ranges, bucket zone and plan of stored rows to read. */
export interface MarketWindow {
  interval: Interval;
  ranges: Range[];
  /** Zone buckets align to: market_hours_timezone when given (a session's zone for a session), else UTC. */
  zone: string;
  /** Whether buckets are zoned (timestamps are then written with the zone's offset). */
  zoned: boolean;
  /** Hour and day rows are read before this instant's hour only, the open hour's rows to it (epoch ms; Infinity: everywhere). */
  rolledUpTo: number;
  plan: BucketPlan;
}

/** The window of a span at `now`; `zone` is market_hours_timezone when given; `rolledUpTo` as in MarketWindow. */
export function marketWindow(interval: Interval, span: WindowSpan, zone: string | undefined, now: number, rolledUpTo: number): MarketWindow {
  let ranges: Range[];
  if (span.kind === 'session') ranges = sessionRanges(span.session, span.days, zone ?? DEFAULT_SESSION_ZONE, now);
  else if (span.kind === 'lookback') ranges = [lookbackRange(span.lookback, now)];
  else if (span.kind === 'range') ranges = [[span.from, span.to]];
  else ranges = [[now - DAY_MS, now]];
  // Buckets follow the session's zone too, when a session picks the window.
  const bucketZone = zone ?? (span.kind === 'session' ? DEFAULT_SESSION_ZONE : 'UTC');
  return { interval, ranges, zone: bucketZone, zoned: bucketZone !== 'UTC', rolledUpTo, plan: planBuckets(interval, ranges, bucketZone, rolledUpTo) };
}

/** From the window's first instant to its last (epoch ms); 0 for an empty window. */
export function spanOf(w: Pick<MarketWindow, 'ranges'>): number {
  return w.ranges.length === 0 ? 0 : w.ranges[w.ranges.length - 1]![1] - w.ranges[0]![0];
}

/** The window ending now for a lookback. */
export function lookbackRange(lookback: string, now: number): Range {
  return [DateTime.fromMillis(now, { zone: 'utc' }).minus(LOOKBACKS[lookback]!).toMillis(), now];
}

/**
 * A session's intervals on the selected days (`this`/`last` week, weeks starting on
 * Sunday, day 0 = Sunday), in the session's time zone, clipped to now. DST follows the zone.
 */
export function sessionRanges(session: Session, days: SessionDay[], zone: string, now: number): Range[] {
  const local = DateTime.fromMillis(now, { zone });
  // luxon weekdays: 1 = Monday ... 7 = Sunday. Sunday starts the week here.
  const sunday = local.startOf('day').minus({ days: local.weekday % 7 });
  const out: Range[] = [];
  for (const { week, day } of days) {
    const date = sunday.minus({ weeks: week === 'last' ? 1 : 0 }).plus({ days: day });
    const weekend = day === 0 || day === 6;
    let from: DateTime;
    let to: DateTime;
    if (session === 'weekend-hours') {
      if (!weekend) continue;
      from = date;
      to = date.plus({ days: 1 });
    } else {
      if (weekend) continue;
      const [a, b] = SESSION_HOURS[session];
      from = date.plus({ minutes: a });
      to = date.plus({ minutes: b });
    }
    const r: Range = [from.toMillis(), Math.min(to.toMillis(), now)];
    if (r[0] < r[1]) out.push(r);
  }
  return mergeRanges(out);
}

export function mergeRanges(ranges: Range[]): Range[] {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: Range[] = [];
  for (const r of sorted) {
    const last = out[out.length - 1];
    if (last && r[0] <= last[1]) last[1] = Math.max(last[1], r[1]);
    else out.push([r[0], r[1]]);
  }
  return out;
}

/**
 * Splits [from, to) into the coarsest stored rows that tile it: minutes up to the first
 * whole UTC hour, hours up to the first whole UTC day, days, then back down. A minute row
 * belongs to the range when it starts inside it. Hour and day rows only before
 * `rolledUpTo`'s hour: a day's row once all its hours are before it. A `rolledUpTo` inside
 * an hour adds that hour's rows so far (`open`, to the mark) when the range holds all of
 * them; minutes from the mark on.
 */
export function tile(from: number, to: number, rolledUpTo: number, bucket?: number): Piece[] {
  const s = ceilTo(from, MIN);
  const e = ceilTo(to, MIN);
  if (s >= e) return [];
  const out: Piece[] = [];
  const push = (table: Table, a: number, b: number) => {
    if (a < b) out.push(bucket === undefined ? { table, from: a, to: b } : { table, from: a, to: b, bucket });
  };
  const sealed = floorTo(rolledUpTo, HOUR_MS);
  const h1 = ceilTo(s, HOUR_MS);
  const h2 = Math.min(floorTo(e, HOUR_MS), sealed);
  // Then h2 is the open hour's start.
  const open = rolledUpTo > sealed && h1 <= sealed && e >= rolledUpTo;
  if (h1 >= h2 && !open) {
    push('minutes', s, e);
    return out;
  }
  push('minutes', s, h1);
  const d1 = ceilTo(h1, DAY_MS);
  const d2 = floorTo(h2, DAY_MS);
  if (d1 < d2) {
    push('hours', h1, d1);
    push('days', d1, d2);
    push('hours', d2, h2);
  } else {
    push('hours', h1, h2);
  }
  if (open) {
    push('open', h2, rolledUpTo);
    push('minutes', rolledUpTo, e);
  } else {
    push('minutes', h2, e);
  }
  return out;
}

/** Whether every offset of the zone over [from, to) is a whole number of hours. */
function wholeHourOffsets(zone: string, from: number, to: number): boolean {
  // Offsets change at most a few times a year; sampling each day catches every change.
  for (let t = from; t < to + DAY_MS; t += DAY_MS) if (DateTime.fromMillis(Math.min(t, to), { zone }).offset % 60 !== 0) return false;
  return true;
}

function zeroOffset(zone: string, from: number, to: number): boolean {
  for (let t = from; t < to + DAY_MS; t += DAY_MS) if (DateTime.fromMillis(Math.min(t, to), { zone }).offset !== 0) return false;
  return true;
}

export interface BucketPlan {
  /** Pieces to read, per stored table. */
  pieces: Piece[];
  /** For `c`: the buckets, by index; their interval is part of each row. */
  buckets?: { start: number; interval: '1m' | '1h' | '1d' | '1M' }[];
}

/** The stored granularity coarser than which a bucket of this interval cannot be read. */
function finestNeeded(interval: Interval, zone: string, from: number, to: number): Table {
  switch (interval) {
    case '1m':
    case '5m':
    case '15m':
    case '30m':
      return 'minutes';
    case '1h':
    case '4h':
      return wholeHourOffsets(zone, from, to) ? 'hours' : 'minutes';
    default:
      if (zeroOffset(zone, from, to)) return 'days';
      return wholeHourOffsets(zone, from, to) ? 'hours' : 'minutes';
  }
}

const ORDER: Table[] = ['minutes', 'open', 'hours', 'days'];

/**
 * The pieces to read for a window. For fixed intervals the bucket of a row is an SQL
 * expression of its start, so rows must not straddle buckets: the coarsest table used is
 * the one whose rows fit inside the buckets in this zone. For `a` everything is one bucket;
 * for `c` each calendar-aligned bucket is its own piece.
 */
export function planBuckets(interval: Interval, ranges: Range[], zone: string, rolledUpTo: number): BucketPlan {
  if (ranges.length === 0) return { pieces: [] };
  const from = ranges[0]![0];
  const to = ranges[ranges.length - 1]![1];
  if (interval === 'c') return planCalendar(from, to, zone, rolledUpTo);
  const limit = interval === 'a' ? 'days' : finestNeeded(interval, zone, from, to);
  const pieces: Piece[] = [];
  for (const [a, b] of ranges) {
    for (const p of tile(a, b, rolledUpTo)) {
      // Coarser than allowed: split back down to the allowed table.
      if (ORDER.indexOf(p.table) <= ORDER.indexOf(limit)) pieces.push(p);
      else pieces.push(...(limit === 'minutes' ? [{ table: 'minutes' as const, from: p.from, to: p.to }] : splitDaysToHours(p)));
    }
  }
  return { pieces: mergePieces(pieces) };
}

function splitDaysToHours(p: Piece): Piece[] {
  return [{ table: 'hours', from: p.from, to: p.to }];
}

function mergePieces(pieces: Piece[]): Piece[] {
  const out: Piece[] = [];
  for (const p of pieces) {
    const last = out[out.length - 1];
    if (last && last.table === p.table && last.to === p.from && last.bucket === p.bucket) last.to = p.to;
    else out.push({ ...p });
  }
  return out;
}

/**
 * `c`: the fewest calendar-aligned buckets covering [from, to) in the zone — minutes up to
 * the first whole hour, hours to the first whole day, days to the first month, months,
 * then days, hours and minutes at the end.
 */
function planCalendar(from: number, to: number, zone: string, rolledUpTo: number): BucketPlan {
  const buckets: NonNullable<BucketPlan['buckets']> = [];
  const pieces: Piece[] = [];
  const units = [
    { unit: 'month', interval: '1M' },
    { unit: 'day', interval: '1d' },
    { unit: 'hour', interval: '1h' },
    { unit: 'minute', interval: '1m' },
  ] as const;
  const add = (a: DateTime, b: DateTime, interval: '1m' | '1h' | '1d' | '1M') => {
    const idx = buckets.length;
    buckets.push({ start: a.toMillis(), interval });
    for (const p of tile(a.toMillis(), b.toMillis(), rolledUpTo, idx)) pieces.push(p);
  };
  const start = DateTime.fromMillis(ceilTo(from, MIN), { zone });
  const end = DateTime.fromMillis(ceilTo(to, MIN), { zone });
  if (start >= end) return { pieces, buckets };
  // Going up: from the start, to the next boundary of each coarser unit.
  let cur = start;
  const up: [DateTime, DateTime, '1m' | '1h' | '1d' | '1M'][] = [];
  for (const { unit, interval } of [...units].reverse()) {
    if (unit === 'month') break;
    const coarser = units[units.findIndex((u) => u.unit === unit) - 1]!.unit;
    const boundary = cur.startOf(coarser).equals(cur) ? cur : cur.startOf(coarser).plus({ [coarser]: 1 });
    while (cur < boundary && cur.plus({ [unit]: 1 }) <= end) {
      up.push([cur, cur.plus({ [unit]: 1 }), interval]);
      cur = cur.plus({ [unit]: 1 });
    }
    if (cur < boundary) break;
  }
  for (const [a, b, i] of up) add(a, b, i);
  // Then the coarsest units that fit, going down at the end.
  for (const { unit, interval } of units) {
    while (cur.plus({ [unit]: 1 }) <= end) {
      add(cur, cur.plus({ [unit]: 1 }), interval);
      cur = cur.plus({ [unit]: 1 });
    }
  }
  return { pieces, buckets };
}

/** Bucket start (epoch ms) of an instant for a fixed interval, in the zone: for checks and tests. */
export function bucketStart(interval: FixedInterval, t: number, zone: string): number {
  const d = DateTime.fromMillis(t, { zone });
  switch (interval) {
    case '1M':
      return d.startOf('month').toMillis();
    case '1w':
      return d.startOf('week').toMillis(); // luxon weeks start on Monday
    case '1d':
      return d.startOf('day').toMillis();
    default: {
      const minutes = { '4h': 240, '1h': 60, '30m': 30, '15m': 15, '5m': 5, '1m': 1 }[interval];
      const sinceMidnight = d.diff(d.startOf('day'), 'minutes').minutes;
      return d.startOf('day').plus({ minutes: Math.floor(sinceMidnight / minutes) * minutes }).toMillis();
    }
  }
}

const SUB_DAY_MS: Partial<Record<FixedInterval, number>> = { '1m': MIN, '5m': 5 * MIN, '15m': 15 * MIN, '30m': 30 * MIN, '1h': HOUR_MS, '4h': 4 * HOUR_MS };

/** A fixed interval's bucket and the minutes of the window in it (minute-aligned ranges). */
export interface WindowBucket {
  start: number;
  end: number;
  ranges: Range[];
}

/**
 * The buckets a window's ranges fall in, in time order, as the SQL of query.ts puts rows
 * in them: sub-day buckets counted in elapsed time from local midnight (the last one of a
 * day ends at the next midnight), days, weeks from Monday and months in the zone. Ranges
 * are minute-aligned the way tile() reads them: a minute belongs where it starts.
 */
export function bucketsOf(interval: FixedInterval, ranges: Range[], zone: string): WindowBucket[] {
  const out: WindowBucket[] = [];
  const step = SUB_DAY_MS[interval];
  for (const [a, b] of ranges) {
    const e = ceilTo(b, MIN);
    let t = ceilTo(a, MIN);
    while (t < e) {
      // Zone arithmetic once a day (or week, month); sub-day buckets by addition within it.
      const local = DateTime.fromMillis(t, { zone });
      const unit = interval === '1w' ? 'week' : interval === '1M' ? 'month' : 'day';
      const periodStart = local.startOf(unit).toMillis();
      const periodEnd = local.startOf(unit).plus({ [unit]: 1 }).toMillis();
      let start = step ? periodStart + Math.floor((t - periodStart) / step) * step : periodStart;
      while (t < e && start < periodEnd) {
        const end = step ? Math.min(start + step, periodEnd) : periodEnd;
        const range: Range = [t, Math.min(end, e)];
        const last = out[out.length - 1];
        if (last && last.start === start) last.ranges.push(range);
        else out.push({ start, end, ranges: [range] });
        t = range[1];
        start = end;
      }
    }
  }
  return out;
}

/** Most buckets a fixed interval may produce per pair (the span guard). */
export const MAX_SPAN_MS: Record<Interval, number> = {
  '1m': 7 * DAY_MS,
  '5m': 31 * DAY_MS,
  '15m': 93 * DAY_MS,
  '30m': 183 * DAY_MS,
  '1h': 366 * DAY_MS,
  '4h': 3 * 366 * DAY_MS,
  '1d': 10 * 366 * DAY_MS,
  '1w': 10 * 366 * DAY_MS,
  '1M': 10 * 366 * DAY_MS,
  c: 10 * 366 * DAY_MS,
  a: 10 * 366 * DAY_MS,
};
