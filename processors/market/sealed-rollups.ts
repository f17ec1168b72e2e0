// Rolls a family's hours and days up once an hour is sealed, rather than at every minute
// close: an hour row recomputed each minute from all of the hour's minutes is work thrown
// away a minute later, and on the embedded engine every such statement holds the one line
// requests wait in (docs/benchmarks.md, "Rolling up sealed hours only"). Readers read an
// hour only from minute rows until the family's mark passes it (schemas/clickhouse/007).
//
// Minutes of an hour before the mark (a replayed recording, a late pair, a catch-up) are
// rolled up as they are written, as before. The keys of later hours wait in memory; after
// a restart they are found again among the minutes stored from the mark on.
import type { RollupKey, Rollups } from '../../domain/market/repositories/rollups.ts';
import type { RollupMarks } from '../../domain/market/repositories/rollup-marks.ts';
import { sealedBefore, type SealingOptions } from '../../domain/market/window.ts';

const HOUR = 3_600_000;

export class SealedRollups {
  /** Every hour before this (epoch ms) is rolled up; undefined until load(), which nothing may move it before. */
  private mark: number | undefined;
  /** Per hour start (epoch ms), the keys written into it since it was last rolled up. */
  private readonly pending = new Map<number, Map<string, RollupKey>>();

  constructor(
    private readonly rollups: Rollups,
    private readonly marks: RollupMarks,
    private readonly source: string,
    private readonly opts: SealingOptions,
  ) {}

  /** The hour before which the clock has sealed every hour. */
  private sealedHour(): number {
    return Math.floor(sealedBefore(this.opts) / HOUR) * HOUR;
  }

  /**
   * The stored mark, and the hours written from it on. A first start writes its mark
   * before anything waits: until then the family's rows were rolled up as written.
   */
  async load(): Promise<void> {
    const stored = await this.marks.read(this.source);
    const mark = stored ?? this.sealedHour();
    this.pending.clear();
    this.add(await this.rollups.hoursFrom(mark));
    if (stored === undefined) await this.marks.write(this.source, mark);
    this.mark = mark;
  }

  /** After minutes are written: those of hours before the mark are rolled up now, the others wait for their hour to be sealed. */
  async written(keys: RollupKey[]): Promise<void> {
    const now: RollupKey[] = [];
    const later: RollupKey[] = [];
    // Before load() (never, as the pipeline runs) everything is rolled up as it is written.
    for (const k of keys) (this.mark === undefined || k.minute < this.mark ? now : later).push(k);
    await this.rollups.recompute(now);
    await this.rollups.countWrites(later);
    this.add(later);
  }

  /** Whether the clock has sealed an hour after the mark: seal() has work. */
  due(): boolean {
    return this.mark !== undefined && this.sealedHour() > this.mark;
  }

  /** Rolls up the hours the clock has sealed, then moves the mark past them. */
  async seal(): Promise<void> {
    const to = this.sealedHour();
    if (this.mark === undefined || to <= this.mark) return;
    const hours = [...this.pending.keys()].filter((h) => h < to);
    await this.rollups.recompute(hours.flatMap((h) => [...this.pending.get(h)!.values()]));
    await this.marks.write(this.source, to);
    for (const h of hours) this.pending.delete(h);
    this.mark = to;
  }

  /** Keys waiting, for tests and operators. */
  waiting(): number {
    let n = 0;
    for (const keys of this.pending.values()) n += keys.size;
    return n;
  }

  private add(keys: RollupKey[]): void {
    for (const k of keys) {
      const hour = Math.floor(k.minute / HOUR) * HOUR;
      let of = this.pending.get(hour);
      if (!of) this.pending.set(hour, (of = new Map()));
      of.set(`${k.exchange}\u0000${k.pair}`, { exchange: k.exchange, pair: k.pair, minute: hour });
    }
  }
}
