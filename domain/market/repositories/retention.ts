// How long minute rows are kept (MINUTE_RETENTION_DAYS; docs/operations.md, "Disk"): a TTL on
// every minute table, set at each start, removed when the setting is 0 (keep all). Hours and
// days are kept forever: rollups are computed seconds after their minutes are written, so a
// minute row older than the retention has long been counted in its hour and day. The TTL
// applies as parts merge (at the latest every few hours), not by rewriting the tables at
// start.
import type { ClickHouse } from '../../../lib/clickhouse.ts';
import { book, derivative, trade, trustedDepth, trustedVolume } from '../families/index.ts';

/** Every table of minute rows: the families' and a market maker's own order levels. */
export const MINUTE_TABLES = [book, trade, derivative, trustedDepth, trustedVolume].map((f) => f.tables.minutes).concat('mm_order_minutes');

export async function applyMinuteRetention(ch: ClickHouse, days: number): Promise<void> {
  const rows = await ch.query<{ name: string; engine_full: string }>(
    'SELECT name, engine_full FROM system.tables WHERE database = currentDatabase() AND name IN {tables:Array(String)}',
    { tables: MINUTE_TABLES },
  );
  const hasTtl = new Map(rows.map((r) => [r.name, / TTL /.test(r.engine_full)]));
  for (const t of MINUTE_TABLES) {
    if (days > 0) {
      await ch.command('ALTER TABLE {t:Identifier} MODIFY TTL minute + toIntervalDay({days:UInt32}) SETTINGS materialize_ttl_after_modify = 0', { t, days }, { idempotent: true });
    } else if (hasTtl.get(t)) {
      await ch.command('ALTER TABLE {t:Identifier} REMOVE TTL', { t });
    }
  }
}

/** The retention each minute table has now (days; 0 for none), by table. */
export async function minuteRetention(ch: ClickHouse): Promise<Map<string, number>> {
  const rows = await ch.query<{ name: string; engine_full: string }>(
    'SELECT name, engine_full FROM system.tables WHERE database = currentDatabase() AND name IN {tables:Array(String)}',
    { tables: MINUTE_TABLES },
  );
  return new Map(rows.map((r) => [r.name, Number(/TTL minute \+ toIntervalDay\(_CAST\((\d+)/.exec(r.engine_full)?.[1] ?? 0)]));
}
