// How far each family's hours and days are rolled up (schemas/clickhouse/007_rollup_marks.sql):
// the processors write a family's mark once the hours before it are in its hour rows
// (processors/market/sealed-rollups.ts); readers plan windows to read hour and day rows only
// before the lowest mark (domain/market/window.ts), minute rows after it.
import type { ClickHouse } from '../../../lib/clickhouse.ts';
import { FAMILIES, MM_FAMILIES } from '../families/index.ts';

const HOUR = 3_600_000;

/** The minute tables whose processors roll up sealed hours only (every family but the one derived at each minute). */
export const MARKED_SOURCES: readonly string[] = [...Object.values(FAMILIES), MM_FAMILIES.trustedVolume].map((f) => f.tables.minutes);

export class RollupMarks {
  constructor(private readonly ch: ClickHouse) {}

  /** A source's mark (epoch ms), or undefined when it has none yet. */
  async read(source: string): Promise<number | undefined> {
    const rows = await this.ch.query<{ through: number }>(
      `SELECT toUnixTimestamp(max(through)) AS through FROM rollup_marks WHERE source = {source:String} HAVING count() > 0`,
      { source },
    );
    return rows.length === 0 ? undefined : Number(rows[0]!.through) * 1000;
  }

  async write(source: string, through: number): Promise<void> {
    await this.ch.command(
      `INSERT INTO rollup_marks (source, through, written_at) VALUES ({source:String}, toDateTime({through:UInt32}, 'UTC'), now64(3))`,
      { source, through: Math.floor(through / 1000) },
    );
  }

  /** The lowest mark of the sources that have one (epoch ms); Infinity when none has. */
  async lowest(sources: readonly string[] = MARKED_SOURCES): Promise<number> {
    const rows = await this.ch.query<{ through: number }>(
      `SELECT toUnixTimestamp(max(through)) AS through FROM rollup_marks WHERE source IN {sources:Array(String)} GROUP BY source`,
      { sources: [...sources] },
    );
    return rows.reduce((low, r) => Math.min(low, Number(r.through) * 1000), Infinity);
  }
}

/**
 * The lowest mark as the readers of one process plan with it, read at most once a second,
 * and not at all while it cannot have moved: marks are whole hours, written shortly after
 * an hour ends, so a mark at the current hour holds until the next one. A mark read earlier
 * is never wrong, only slower: windows then read more minute rows.
 */
export class RolledUp {
  private known: { through: number; at: number } | undefined;
  private reading: Promise<number> | undefined;

  constructor(
    private readonly marks: RollupMarks,
    private readonly now: () => number,
  ) {}

  /** Before this instant (epoch ms) the hour and day rows of every family are complete. */
  through(): Promise<number> {
    const now = this.now();
    const k = this.known;
    const hour = Math.floor(now / HOUR) * HOUR;
    // No mark (Infinity) is kept for a second only: a processor starting writes one soon.
    if (k && (now - k.at < 1000 || (Number.isFinite(k.through) && k.through >= hour && k.at >= hour))) {
      return Promise.resolve(k.through);
    }
    if (!this.reading) {
      this.reading = this.marks.lowest().then(
        (through) => {
          this.known = { through, at: now };
          this.reading = undefined;
          return through;
        },
        (e: unknown) => {
          this.reading = undefined;
          throw e;
        },
      );
    }
    return this.reading;
  }
}
