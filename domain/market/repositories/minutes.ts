// Writes closed minute rows of a family and the processor's progress; reads back what is
// written when a processor starts. The table is the family's, bound as an Identifier.
import crypto from 'node:crypto';
import type { ClickHouse } from '../../../lib/clickhouse.ts';
import { keyColumns, seriesOf, type MinuteTable } from '../families/family.ts';

/** A pair's closed minute and its row of the family's minute table. */
export interface MinuteRow<Row> {
  exchange: string;
  pair: string;
  /** The series within the pair (families/family.ts seriesOf); its key columns are in `row`. */
  series: string;
  /** Minute start, epoch ms. */
  minute: number;
  row: Row;
}

export class MinuteRepository<Row extends object> {
  private readonly table: string;

  constructor(
    private readonly ch: ClickHouse,
    private readonly family: MinuteTable,
    private readonly now: () => number,
  ) {
    this.table = family.tables.minutes;
  }

  /**
   * Inserts closed minutes as one block. The deduplication token is derived from the
   * minutes' keys, so a retried insert of the same batch is dropped by ClickHouse.
   */
  async insert(minutes: MinuteRow<Row>[]): Promise<void> {
    if (minutes.length === 0) return;
    const closed_at = this.now();
    const rows = minutes.map((m) => ({ exchange: m.exchange, pair: m.pair, minute: Math.floor(m.minute / 1000), ...m.row, closed_at }));
    const token = crypto.createHash('sha256');
    token.update(this.table);
    for (const m of minutes) token.update(`\u0000${m.exchange}\u0000${m.pair}${m.series === '' ? '' : `\u0000${m.series}`}\u0000${m.minute}`);
    await this.ch.insert(this.table, rows, { dedupToken: token.digest('hex') });
  }

  /** Newest written minute per pair and series (epoch ms). */
  async lastMinutes(): Promise<{ exchange: string; pair: string; series: string; minute: number }[]> {
    const keys = keyColumns(this.family).join(', ');
    const rows = await this.ch.query<{ exchange: string; pair: string; minute: string | number }>(
      `SELECT ${keys}, toUnixTimestamp(max(minute)) AS minute FROM {table:Identifier} GROUP BY ${keys}`,
      { table: this.table },
    );
    return rows.map((r) => ({ exchange: r.exchange, pair: r.pair, series: seriesOf(this.family, r), minute: Number(r.minute) * 1000 }));
  }

  /** The hours (as their first minute) of the pairs' minutes written at or after `since` (epoch ms; 0: all). */
  async hoursWrittenSince(since: number): Promise<{ exchange: string; pair: string; minute: number }[]> {
    const rows = await this.ch.query<{ exchange: string; pair: string; hour: number }>(
      `SELECT DISTINCT exchange, pair, toUnixTimestamp(toStartOfHour(minute)) AS hour
       FROM {table:Identifier} WHERE closed_at >= fromUnixTimestamp64Milli({since:Int64}, 'UTC')`,
      { table: this.table, since },
    );
    return rows.map((r) => ({ exchange: r.exchange, pair: r.pair, minute: Number(r.hour) * 1000 }));
  }

  async progress(groupId: string, topic: string): Promise<Map<number, bigint>> {
    const rows = await this.ch.query<{ partition: number; offset: string }>(
      `SELECT partition, toString(max(offset)) AS offset FROM processor_progress FINAL
       WHERE group_id = {group:String} AND topic = {topic:String} GROUP BY partition`,
      { group: groupId, topic },
    );
    return new Map(rows.map((r) => [Number(r.partition), BigInt(r.offset)]));
  }

  /** When this processor last recorded its progress (epoch ms; 0 when never). */
  async lastProgressAt(groupId: string, topic: string): Promise<number> {
    const rows = await this.ch.query<{ at: number }>(
      `SELECT toUnixTimestamp64Milli(max(updated_at)) AS at FROM processor_progress FINAL
       WHERE group_id = {group:String} AND topic = {topic:String}`,
      { group: groupId, topic },
    );
    return Number(rows[0]?.at ?? 0);
  }

  async saveProgress(groupId: string, topic: string, processed: Map<number, bigint>): Promise<void> {
    const updated_at = this.now();
    const rows = [...processed].map(([partition, next]) => ({ group_id: groupId, topic, partition, offset: String(next), updated_at }));
    await this.ch.insert('processor_progress', rows);
  }
}
