// The time columns of bucketed rows: `timestamp` (the bucket's start, ISO 8601, in UTC
// with `Z`, or with the offset of market_hours_timezone when it was given) and, for `c`,
// the bucket's `interval`; none for `a`. Written two ways that must agree: by luxon for
// rows built in Node, and by SQL for rows ClickHouse writes itself (the uptime endpoints,
// see repositories/uptime.ts). test/api/timestamps.test.ts compares the two.
import { DateTime } from 'luxon';
import type { Params } from '../../lib/clickhouse.ts';
import type { MarketWindow } from './window.ts';

export type TimeColumns = Record<string, string>;

/** The names of the time columns, in row order. */
export function timeColumnNames(w: Pick<MarketWindow, 'interval'>): string[] {
  if (w.interval === 'a') return [];
  return w.interval === 'c' ? ['timestamp', 'interval'] : ['timestamp'];
}

/** The time columns of bucket `b` (epoch seconds; for `c` the bucket's index in the plan). */
export function timestampOf(w: MarketWindow, b: number): TimeColumns {
  if (w.interval === 'a') return {};
  const bucket = w.interval === 'c' ? w.plan.buckets![b]! : undefined;
  const ms = bucket ? bucket.start : b * 1000;
  const dt = DateTime.fromMillis(ms, { zone: w.zoned ? w.zone : 'utc' });
  const ts = w.zoned ? dt.toISO({ suppressMilliseconds: true })! : dt.toUTC().toISO({ suppressMilliseconds: true })!.replace('.000Z', 'Z');
  return bucket ? { timestamp: ts, interval: bucket.interval } : { timestamp: ts };
}

/**
 * The select-list items that write timestampOf's columns from a column `b`, with the
 * values they bind (names prefixed ts_). Empty for `a`. For `c` the strings of each
 * bucket are made here by timestampOf and looked up by index.
 */
export function timestampSql(w: MarketWindow): { text: string; params: Params } {
  if (w.interval === 'a') return { text: '', params: {} };
  if (w.interval === 'c') {
    const cols = w.plan.buckets!.map((_, i) => timestampOf(w, i));
    return {
      text: '{ts_strings:Array(String)}[b + 1] AS `timestamp`, {ts_intervals:Array(String)}[b + 1] AS `interval`',
      params: { ts_strings: cols.map((c) => c.timestamp!), ts_intervals: cols.map((c) => c.interval!) },
    };
  }
  const zone = w.zoned ? w.zone : 'UTC';
  // luxon writes `Z` for a fixed zero offset (UTC itself), `+00:00` for a zone that is at
  // zero only for now (Europe/London in winter).
  const probe = DateTime.fromMillis(0, { zone });
  // The offset is the local time read as UTC less the instant: the engine's timeZoneOffset
  // is a day off in zones that once moved across the date line (Pacific/Apia, Kiritimati).
  const offset = `(toInt64(toUnixTimestamp(toDateTime(formatDateTime(toDateTime(b, {ts_zone:String}), '%Y-%m-%d %H:%i:%S'), 'UTC'))) - toInt64(b))`;
  return {
    text: `concat(formatDateTime(toDateTime(b, {ts_zone:String}), '%Y-%m-%dT%H:%i:%S'),
    if({ts_fixed_zero:UInt8} = 1, 'Z', concat(if(${offset} < 0, '-', '+'),
      leftPad(toString(intDiv(abs(${offset}), 3600)), 2, '0'), ':',
      leftPad(toString(intDiv(abs(${offset}) % 3600, 60)), 2, '0')))) AS \`timestamp\``,
    params: { ts_zone: zone, ts_fixed_zero: probe.isOffsetFixed && probe.offset === 0 ? 1 : 0 },
  };
}
