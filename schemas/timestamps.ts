// Event time as the ingest contract writes it (addendum section 1), read alike by the
// processors and by the push endpoint.
import { DateTime } from 'luxon';

/** An event time as messages carry it: ISO 8601 text or epoch milliseconds. */
export type Timestamp = string | number;

/** Event time in epoch ms: ISO 8601 (UTC when no offset is given) or epoch milliseconds. */
export function parseTimestamp(ts: Timestamp): number | undefined {
  if (typeof ts === 'number') return Number.isSafeInteger(ts) && ts >= 0 ? ts : undefined;
  const fast = utcZulu(ts);
  if (fast !== undefined) return fast;
  const dt = DateTime.fromISO(ts, { zone: 'utc', setZone: true });
  return dt.isValid ? dt.toMillis() : undefined;
}

// The form Date#toISOString writes, which most feeds send. Luxon's parse is a cost per
// message (docs/benchmarks.md, "Measurements behind the code"); this form, with every field in its range, means exactly what
// Date.UTC computes from it. Anything else is left to luxon.
const ZULU = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{3})?Z$/;
const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function utcZulu(ts: string): number | undefined {
  // test() and the digits read in place: no match array, no substrings.
  if (!ZULU.test(ts)) return undefined;
  const year = digits(ts, 0, 4);
  const month = digits(ts, 5, 2);
  const day = digits(ts, 8, 2);
  const hour = digits(ts, 11, 2);
  const minute = digits(ts, 14, 2);
  const second = digits(ts, 17, 2);
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 && leap ? 29 : MONTH_DAYS[month - 1];
  // Years below 1000 too: Date.UTC reads 0-99 as 1900-1999.
  if (year < 1000 || days === undefined || day < 1 || day > days || hour > 23 || minute > 59 || second > 59) return undefined;
  return Date.UTC(year, month - 1, day, hour, minute, second, ts.length === 24 ? digits(ts, 20, 3) : 0);
}

/** The number written by the `n` ASCII digits of `s` from `at`. */
function digits(s: string, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) v = v * 10 + (s.charCodeAt(i) - 48);
  return v;
}
