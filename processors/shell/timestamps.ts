import { DateTime } from 'luxon';
import type { Timestamp } from '../../schemas/index.ts';

/** Event time in epoch ms: ISO 8601 (UTC when no offset is given) or epoch milliseconds. */
export function parseTimestamp(ts: Timestamp): number | undefined {
  if (typeof ts === 'number') return Number.isSafeInteger(ts) && ts >= 0 ? ts : undefined;
  const dt = DateTime.fromISO(ts, { zone: 'utc', setZone: true });
  return dt.isValid ? dt.toMillis() : undefined;
}
