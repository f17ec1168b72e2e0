// How many times each hour of a family's data was written (schemas/clickhouse/004): the
// rollups add one for every hour they recompute. Readers that keep sealed data between
// requests compare counts to know nothing was written since.
import type { ClickHouse } from '../../../lib/clickhouse.ts';
import { FAMILIES, type FamilyName } from '../families/index.ts';
import { HOUR_MS } from '../../../lib/time.ts';

export class WriteCounts {
  constructor(private readonly ch: ClickHouse) {}

  /** Per family and hour start (epoch ms) in [from, to) widened to whole hours; hours never written are absent. */
  async read(families: FamilyName[], from: number, to: number): Promise<Record<FamilyName, Map<number, number>>> {
    const rows = await this.ch.query<{ source: string; hour: number; writes: number }>(
      `SELECT source, toUnixTimestamp(hour) AS hour, sum(writes) AS writes FROM market_writes
       WHERE source IN {sources:Array(String)} AND hour >= toDateTime({from:UInt32}, 'UTC') AND hour < toDateTime({to:UInt32}, 'UTC')
       GROUP BY source, hour`,
      { sources: families.map((f) => FAMILIES[f].tables.minutes), from: Math.floor(from / HOUR_MS) * (HOUR_MS / 1000), to: Math.ceil(to / HOUR_MS) * (HOUR_MS / 1000) },
    );
    const out = Object.fromEntries(Object.keys(FAMILIES).map((f) => [f, new Map<number, number>()])) as Record<FamilyName, Map<number, number>>;
    const bySource = new Map(Object.entries(FAMILIES).map(([f, def]) => [def.tables.minutes, f as FamilyName]));
    for (const r of rows) out[bySource.get(r.source)!].set(Number(r.hour) * 1000, Number(r.writes));
    return out;
  }
}
