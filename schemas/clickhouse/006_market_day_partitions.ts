// The market tables partitioned by day (minutes and hours) and by month (days), and each
// sealed partition merged into one part (see "Partitions" in 002_market_minutes.sql, which
// with 003 creates them so on a new store): this moves the rows of a store made before,
// table by table (lib/rekey.ts), then sets the merge by age on every one.
import type { ClickHouse } from '../../lib/clickhouse.ts';
import type { Logger } from '../../lib/log.ts';
import { rekeyTable, type Rekey } from '../../lib/rekey.ts';

/** Each market table, its sort key, and its partition key before and after. */
const TABLES: [table: string, orderBy: string, from: string, to: string][] = [
  ['book_minutes', 'toStartOfHour(minute), pair, exchange, minute', 'toYYYYMM(minute)', 'toDate(minute)'],
  ['trade_minutes', 'toStartOfHour(minute), pair, exchange, minute', 'toYYYYMM(minute)', 'toDate(minute)'],
  ['derivative_minutes', 'toStartOfHour(minute), pair, exchange, minute', 'toYYYYMM(minute)', 'toDate(minute)'],
  ['book_hours', 'toStartOfDay(bucket), pair, exchange, bucket', 'toYYYYMM(bucket)', 'toDate(bucket)'],
  ['trade_hours', 'toStartOfDay(bucket), pair, exchange, bucket', 'toYYYYMM(bucket)', 'toDate(bucket)'],
  ['derivative_hours', 'toStartOfDay(bucket), pair, exchange, bucket', 'toYYYYMM(bucket)', 'toDate(bucket)'],
  ['book_days', 'toStartOfMonth(bucket), pair, exchange, bucket', 'toYear(bucket)', 'toYYYYMM(bucket)'],
  ['trade_days', 'toStartOfMonth(bucket), pair, exchange, bucket', 'toYear(bucket)', 'toYYYYMM(bucket)'],
  ['derivative_days', 'toStartOfMonth(bucket), pair, exchange, bucket', 'toYear(bucket)', 'toYYYYMM(bucket)'],
];

export const MARKET_REPARTITIONS: Rekey[] = TABLES.map(([table, orderBy, from, to]) => ({
  table,
  from: { orderBy, indexGranularity: 256, partitionBy: from },
  to: { orderBy, indexGranularity: 256, partitionBy: to },
}));

/** A partition whose parts are all this old (s) is merged into one part. */
export const SEALED_AFTER_SECONDS = 900;

export async function up(ch: ClickHouse, log: Logger): Promise<void> {
  for (const r of MARKET_REPARTITIONS) {
    await rekeyTable(ch, log, r);
    await ch.command(
      `ALTER TABLE {t:Identifier} MODIFY SETTING min_age_to_force_merge_seconds = ${SEALED_AFTER_SECONDS}, min_age_to_force_merge_on_partition_only = 1`,
      { t: r.table },
    );
  }
}
