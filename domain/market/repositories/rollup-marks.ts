// How far each family's hours and days are rolled up (schemas/clickhouse/007_rollup_marks.sql):
// the processors write a family's mark once the hours before it are in its hour rows
// (processors/market/sealed-rollups.ts), and the market's families, whose marks also move
// into the open hour, once its rows to the mark are written (008_open_hour_rollups.sql);
// readers plan windows to read hour and day rows only before the marks
// (domain/market/window.ts), minute rows after them.
import type { ClickHouse } from '../../../lib/clickhouse.ts';
import { FAMILIES, MM_FAMILIES } from '../families/index.ts';
import { HOUR_MS } from '../../../lib/time.ts';

/** How far apart the marks of the market's families are within an hour: the most minutes a window reads from minute rows beside its lateness. */
export const OPEN_STEP_MS = 10 * 60_000;

/**
 * A mark inside an hour older than this is planned with as its whole hour: its open-hour
 * rows are deleted two hours after they were computed (008), and marks this old mean the
 * processors stand still.
 */
const OPEN_MARK_MAX_AGE_MS = HOUR_MS;

/** The minute tables whose processors roll up sealed hours only (every family but the one derived at each minute). */
export const MARKED_SOURCES: readonly string[] = [...Object.values(FAMILIES), MM_FAMILIES.trustedVolume].map((f) => f.tables.minutes);

/** Those of the market's families, which also keep rows of the open hour. */
export const MARKET_SOURCES: readonly string[] = Object.values(FAMILIES).map((f) => f.tables.minutes);

const hourOf = (t: number) => Math.floor(t / HOUR_MS) * HOUR_MS;

export class RollupMarks {
  constructor(private readonly ch: ClickHouse) {}

  /** A source's mark (epoch ms), or undefined when it has none yet. */
  async read(source: string): Promise<number | undefined> {
    return (await this.bySource([source])).get(source);
  }

  async write(source: string, through: number): Promise<void> {
    await this.ch.command(
      `INSERT INTO rollup_marks (source, through, written_at) VALUES ({source:String}, toDateTime({through:UInt32}, 'UTC'), now64(3))`,
      { source, through: Math.floor(through / 1000) },
    );
  }

  /** The lowest mark of the sources that have one (epoch ms); Infinity when none has. */
  async lowest(sources: readonly string[] = MARKED_SOURCES): Promise<number> {
    return Math.min(Infinity, ...(await this.bySource(sources)).values());
  }

  /** The mark of each of these sources that has one (epoch ms). */
  async bySource(sources: readonly string[]): Promise<Map<string, number>> {
    const rows = await this.ch.query<{ source: string; through: number }>(
      `SELECT source, toUnixTimestamp(max(through)) AS through FROM rollup_marks WHERE source IN {sources:Array(String)} GROUP BY source`,
      { sources: [...sources] },
    );
    return new Map(rows.map((r) => [r.source, Number(r.through) * 1000]));
  }
}

/** The marks readers plan with (epoch ms): see RolledUp. */
interface Planned {
  through: number;
  market: number;
}

/**
 * The marks as the readers of one process plan with them, read at most once a second,
 * and not at all while they cannot have moved: a mark moves only once its hour (its step,
 * for the market's families) has ended, so marks at the clock's hour and step hold until
 * the next one. A mark read earlier is never wrong, only slower: windows then read more
 * minute rows.
 */
export class RolledUp {
  private known: (Planned & { at: number }) | undefined;
  private reading: Promise<Planned> | undefined;

  constructor(
    private readonly marks: RollupMarks,
    private readonly now: () => number,
  ) {}

  /** Before this instant (epoch ms, a whole hour) the hour and day rows of every family are complete. */
  async through(): Promise<number> {
    return (await this.planned()).through;
  }

  /**
   * For windows over the market's families only: before this instant's hour their hour and
   * day rows are complete, and when it is inside an hour, that hour's rows to it are
   * (domain/market/window.ts). Inside an hour only when every market family's mark is that
   * same instant: each family writes the rows of each mark before the mark, so a family
   * whose mark is ahead holds rows of the lower one only if it passed it.
   */
  async market(): Promise<number> {
    return (await this.planned()).market;
  }

  private planned(): Promise<Planned> {
    const now = this.now();
    const k = this.known;
    const step = Math.floor(now / OPEN_STEP_MS) * OPEN_STEP_MS;
    // No mark (Infinity) is kept for a second only: a processor starting writes one soon.
    const standing = k !== undefined && Number.isFinite(k.through) && Number.isFinite(k.market) && k.through >= hourOf(now) && k.market >= step && k.at >= step;
    if (k && (now - k.at < 1000 || standing)) return Promise.resolve(k);
    if (!this.reading) {
      this.reading = this.marks.bySource(MARKED_SOURCES).then(
        (marks) => {
          const through = hourOf(Math.min(Infinity, ...marks.values()));
          const market = MARKET_SOURCES.map((s) => marks.get(s) ?? Infinity);
          const low = Math.min(...market);
          const open = market.every((m) => m === low) && low > hourOf(low) && low >= now - OPEN_MARK_MAX_AGE_MS;
          const planned = { through, market: open ? low : hourOf(low) };
          this.known = { ...planned, at: now };
          this.reading = undefined;
          return planned;
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
