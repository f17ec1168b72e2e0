// The market tables sorted by pair before exchange, in granules of 256 rows (see the sort
// order in 002_market_minutes.sql, which with 003 creates them so on a new store): this
// moves the rows of a store made before, table by table (lib/rekey.ts).
import type { ClickHouse } from '../../lib/clickhouse.ts';
import type { Logger } from '../../lib/log.ts';
import { rekeyTable, type Rekey } from '../../lib/rekey.ts';

/** Each market table, the leading time block of its key, and its time column. */
const TABLES: [table: string, block: string, time: string][] = [
  ['book_minutes', 'toStartOfHour(minute)', 'minute'],
  ['trade_minutes', 'toStartOfHour(minute)', 'minute'],
  ['derivative_minutes', 'toStartOfHour(minute)', 'minute'],
  ['book_hours', 'toStartOfDay(bucket)', 'bucket'],
  ['trade_hours', 'toStartOfDay(bucket)', 'bucket'],
  ['derivative_hours', 'toStartOfDay(bucket)', 'bucket'],
  ['book_days', 'toStartOfMonth(bucket)', 'bucket'],
  ['trade_days', 'toStartOfMonth(bucket)', 'bucket'],
  ['derivative_days', 'toStartOfMonth(bucket)', 'bucket'],
];

export const MARKET_REKEYS: Rekey[] = TABLES.map(([table, block, time]) => ({
  table,
  from: { orderBy: `${block}, exchange, pair, ${time}`, indexGranularity: 1024 },
  to: { orderBy: `${block}, pair, exchange, ${time}`, indexGranularity: 256 },
}));

export async function up(ch: ClickHouse, log: Logger): Promise<void> {
  for (const r of MARKET_REKEYS) await rekeyTable(ch, log, r);
}
