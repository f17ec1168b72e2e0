// rollup_marks versioned by the mark itself. 007 made it a ReplacingMergeTree(written_at)
// sorted by source, so a merge kept each source's latest-written row, while readers take
// the highest mark (max(through)): a lower mark written later (a second instance of a
// processor whose clock is behind, a clock set back) stood once the parts were merged.
// Readers would then plan with that step's open-hour rows, which lack the late minutes
// rolled into later steps' rows since (008), until the mark is an hour old. Versioned by
// `through`, a merge keeps what readers read. The engine cannot be ALTERed: the highest
// mark of each source is copied into a table of the new engine and the two are swapped in
// one step (EXCHANGE TABLES); a crash before the swap leaves the table as it was, after it
// the next run only drops the old one. Migrations run before anything writes marks
// (ops/service.ts).
import type { ClickHouse } from '../../lib/clickhouse.ts';
import type { Logger } from '../../lib/log.ts';

export const KEEP_HIGHEST = 'ReplacingMergeTree(through)';

/** Gives `table` (rollup_marks, or a test's copy) the engine that keeps each source's highest mark; false when it had it. */
export async function keepHighestMark(ch: ClickHouse, log: Logger, table = 'rollup_marks'): Promise<boolean> {
  const spare = `${table}__highest`;
  await ch.command('DROP TABLE IF EXISTS {spare:Identifier} SYNC', { spare });
  const [row] = await ch.query<{ engine_full: string }>('SELECT engine_full FROM system.tables WHERE database = currentDatabase() AND name = {t:String}', { t: table });
  if (!row) throw new Error(`no table ${table}`);
  if (row.engine_full.startsWith(KEEP_HIGHEST)) return false;
  await ch.command(
    `CREATE TABLE {spare:Identifier} (
       source LowCardinality(String),
       through DateTime('UTC'),
       written_at DateTime64(3, 'UTC')
     ) ENGINE = ${KEEP_HIGHEST}
     ORDER BY source`,
    { spare },
  );
  await ch.command('INSERT INTO {spare:Identifier} SELECT source, max(through), max(written_at) FROM {t:Identifier} GROUP BY source', { spare, t: table });
  await ch.command('EXCHANGE TABLES {t:Identifier} AND {spare:Identifier}', { t: table, spare });
  await ch.command('DROP TABLE IF EXISTS {spare:Identifier} SYNC', { spare });
  log.info('rollup marks now keep the highest mark of each source', { table });
  return true;
}

export async function up(ch: ClickHouse, log: Logger): Promise<void> {
  await keepHighestMark(ch, log);
}
