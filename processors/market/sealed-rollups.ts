// Rolls a family's hours and days up once an hour is sealed, rather than at every minute
// close: an hour row recomputed each minute from all of the hour's minutes is work thrown
// away a minute later, and on the embedded engine every such statement holds the one line
// requests wait in (docs/benchmarks.md, "Measurements behind the code"). Readers read an
// hour only from minute rows until the family's mark passes it (schemas/clickhouse/007).
//
// The market's families also roll the open hour up every OPEN_STEP_MS, into rows of that
// mark (schemas/clickhouse/008), and move their mark there: a window then reads at most
// those minutes and the lateness from minute rows, wherever in the hour it is asked,
// where it read up to the whole hour's, so an answer cost more as the hour filled.
//
// Minutes before the mark (a replayed recording, a late pair, a catch-up) are rolled up
// as they are written: into their hour and day, or the open hour's rows of the mark. The
// keys of the hours from the mark's on wait in memory; after a restart they are found
// again among the minutes stored from the mark's hour on.
import type { RollupKey, Rollups } from '../../domain/market/repositories/rollups.ts';
import { OPEN_STEP_MS, type RollupMarks } from '../../domain/market/repositories/rollup-marks.ts';
import { sealedBefore, type SealingOptions } from '../../domain/market/window.ts';
import { HOUR_MS } from '../../lib/time.ts';

const hourOf = (t: number) => Math.floor(t / HOUR_MS) * HOUR_MS;

export class SealedRollups {
  /** Everything before this (epoch ms) is rolled up; undefined until load(), which nothing may move it before. */
  private mark: number | undefined;
  /** Per hour start (epoch ms), the keys written into it since it was last rolled up. */
  private readonly pending = new Map<number, Map<string, RollupKey>>();
  /** How far apart marks are: OPEN_STEP_MS for a family with rows of the open hour, else whole hours. */
  private readonly step: number;

  constructor(
    private readonly rollups: Rollups,
    private readonly marks: RollupMarks,
    private readonly source: string,
    private readonly opts: SealingOptions,
  ) {
    this.step = rollups.opens ? OPEN_STEP_MS : HOUR_MS;
  }

  /** The furthest mark the clock allows: the last step it has sealed. */
  private target(): number {
    return Math.floor(sealedBefore(this.opts) / this.step) * this.step;
  }

  /**
   * The stored mark, and the keys of the hours from its hour on. A first start writes its
   * mark, a whole hour, before anything waits: until then the family's rows were rolled up
   * as written. A mark inside an hour has its open-hour rows rolled up again: a minute
   * written before it may have lost its roll-up in a crash.
   */
  async load(): Promise<void> {
    const stored = await this.marks.read(this.source);
    const mark = stored ?? hourOf(sealedBefore(this.opts));
    this.pending.clear();
    this.add(await this.rollups.hoursFrom(hourOf(mark)));
    if (stored === undefined) await this.marks.write(this.source, mark);
    else if (mark > hourOf(mark)) await this.rollups.rollOpen(this.keysOf(hourOf(mark)), mark);
    this.mark = mark;
  }

  /** After minutes are written: those before the mark are rolled up now, the others wait for the next mark. */
  async written(keys: RollupKey[]): Promise<void> {
    const mark = this.mark;
    // Before load() (never, as the pipeline runs) everything is rolled up as it is written.
    if (mark === undefined) return this.rollups.recompute(keys);
    const sealed = keys.filter((k) => k.minute < hourOf(mark));
    const open = keys.filter((k) => k.minute >= hourOf(mark) && k.minute < mark);
    const later = keys.filter((k) => k.minute >= mark);
    await this.rollups.recompute(sealed);
    await this.rollups.rollOpen(open, mark);
    await this.rollups.countWrites(later);
    this.add(open);
    this.add(later);
  }

  /** Whether the clock has sealed a step after the mark: seal() has work. */
  due(): boolean {
    return this.mark !== undefined && this.target() > this.mark;
  }

  /**
   * Rolls up the hours the clock has sealed, and the open hour to the step it has sealed,
   * then moves the mark there.
   */
  async seal(): Promise<void> {
    const to = this.target();
    if (this.mark === undefined || to <= this.mark) return;
    const hours = [...this.pending.keys()].filter((h) => h < hourOf(to));
    await this.rollups.recompute(hours.flatMap((h) => [...this.pending.get(h)!.values()]));
    if (to > hourOf(to)) await this.rollups.rollOpen(this.keysOf(hourOf(to)), to);
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

  private keysOf(hour: number): RollupKey[] {
    return [...(this.pending.get(hour)?.values() ?? [])];
  }

  private add(keys: RollupKey[]): void {
    for (const k of keys) {
      const hour = hourOf(k.minute);
      let of = this.pending.get(hour);
      if (!of) this.pending.set(hour, (of = new Map()));
      of.set(`${k.exchange}\u0000${k.pair}`, { exchange: k.exchange, pair: k.pair, minute: hour });
    }
  }
}
