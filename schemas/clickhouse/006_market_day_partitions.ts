// The market tables partitioned by the time block that leads their sort key (a day of
// minutes, a day of hours, a month of days), each partition merged into one part once all
// its parts are 15 minutes old (see 002_market_minutes.sql, which with 003 creates them so
// on a new store): this moves the rows of a store made before, table by table
// (lib/rekey.ts), then sets the merge settings, which ALTER can change in place.
import type { ClickHouse } from '../../lib/clickhouse.ts';
import type { Logger } from '../../lib/log.ts';
import { rekeyTable, type Rekey } from '../../lib/rekey.ts';
import { MARKET_REKEYS } from './005_market_pair_order.ts';

/** Each market table's partition key before and after. */
const PARTITIONS: Record<string, [from: string, to: string]> = {
  book_minutes: ['toYYYYMM(minute)', 'toDate(minute)'],
  trade_minutes: ['toYYYYMM(minute)', 'toDate(minute)'],
  derivative_minutes: ['toYYYYMM(minute)', 'toDate(minute)'],
  book_hours: ['toYYYYMM(bucket)', 'toDate(bucket)'],
  trade_hours: ['toYYYYMM(bucket)', 'toDate(bucket)'],
  derivative_hours: ['toYYYYMM(bucket)', 'toDate(bucket)'],
  book_days: ['toYear(bucket)', 'toYYYYMM(bucket)'],
  trade_days: ['toYear(bucket)', 'toYYYYMM(bucket)'],
  derivative_days: ['toYear(bucket)', 'toYYYYMM(bucket)'],
};

export const MARKET_REPARTITIONS: Rekey[] = MARKET_REKEYS.map(({ table, to: shape }) => {
  const [from, to] = PARTITIONS[table]!;
  return { table, from: { ...shape, partitionBy: from }, to: { ...shape, partitionBy: to } };
});

export async function up(ch: ClickHouse, log: Logger): Promise<void> {
  for (const r of MARKET_REPARTITIONS) {
    await rekeyTable(ch, log, r);
    await ch.command(
      'ALTER TABLE {t:Identifier} MODIFY SETTING min_age_to_force_merge_seconds = 900, min_age_to_force_merge_on_partition_only = 1',
      { t: r.table },
      { idempotent: true },
    );
  }
}
