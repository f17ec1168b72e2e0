// Per-minute windows in event time, per (exchange, pair) and series (a market maker's
// wallet on that pair; '' for market data). A message is added to its
// minute's accumulator; a minute closes once the pair's newest event time has passed the
// minute's end by the allowed lateness (or the pair has gone quiet, see closeIdle), and its
// row is then written once. Offsets are committed only up to the first message of the
// oldest minute not yet written, so a restart re-reads exactly what it needs to rebuild
// every open minute, and nothing of a minute already written counts twice.
//
// The bookkeeping a flush or a tick does costs what changed, not the number of pairs: the
// commit point is the oldest hold still standing in its partition (OffsetHolds), and a tick
// visits only the minutes due by the clock and the pairs replaying a recording.
import { deadLetter, ok, skip, type Outcome } from './outcome.ts';
import { MINUTE_MS } from '../../lib/time.ts';

export interface Accumulator<In, Row> {
  add(input: In, ts: number): void;
  row(): Row;
}

export interface ClosedMinute<Row> {
  exchange: string;
  pair: string;
  series: string;
  /** Minute start, epoch ms. */
  minute: number;
  row: Row;
  /** Per partition, the first offset of the messages in it: the commit point stays at or
   * before it until the minute is written (or dropped), and the hold is then released. */
  holds: ReadonlyMap<number, Hold>;
}

interface OpenMinute<Acc> {
  acc: Acc;
  holds: Map<number, Hold>;
}

/** A minute's first offset in one partition, standing until the minute is written or dropped. */
export interface Hold {
  offset: bigint;
  released: boolean;
}

/**
 * The standing holds of one partition, oldest first. A partition is read in offset order,
 * so a new hold is almost always the newest and a release almost never the oldest: holds
 * are appended, released in place, and passed over from the front when the floor is asked.
 */
class OffsetHolds {
  private holds: Hold[] = [];
  private head = 0;

  hold(offset: bigint): Hold {
    const h: Hold = { offset, released: false };
    // Behind the newest hold only when a revoked partition is read again from its commit
    // point; what it held before is released by then and goes first.
    if (this.newest() > offset) this.floor();
    if (this.newest() <= offset) this.holds.push(h);
    else {
      let i = this.holds.length;
      while (i > this.head && this.holds[i - 1]!.offset > offset) i--;
      this.holds.splice(i, 0, h);
    }
    return h;
  }

  /** The oldest offset still held, or undefined. */
  floor(): bigint | undefined {
    while (this.head < this.holds.length && this.holds[this.head]!.released) this.head++;
    if (this.head === this.holds.length) {
      this.holds = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.holds.length) {
      this.holds = this.holds.slice(this.head);
      this.head = 0;
    }
    return this.holds[this.head]?.offset;
  }

  private newest(): bigint {
    return this.holds[this.holds.length - 1]?.offset ?? -1n;
  }
}

interface PairState<Acc> {
  exchange: string;
  pair: string;
  series: string;
  watermark: number;
  /** Newest minute closed (in memory) / written (in ClickHouse), epoch ms. */
  lastClosed: number;
  lastPersisted: number;
  lastArrival: number;
  /** Judged a replayed recording at its newest message: a member of MinuteWindows.historical. */
  replaying: boolean;
  /** Its messages not accepted yet (MinuteWindows.wait). */
  waiting: number;
  /** The partitions that fed it, each with its read time (see closeIdle) at the pair's last message from it. */
  partitions: Map<number, number>;
  open: Map<number, OpenMinute<Acc>>;
}

export interface MinuteWindowsOptions<Acc> {
  latenessMs: number;
  create: () => Acc;
  /** A pair whose data is already older than the lateness (a replayed recording) closes
   * its minutes after this much silence, counted in time its partitions were read; a live
   * pair waits for the lateness itself. */
  historicalIdleMs?: number;
  now?: () => number;
}

/** Outcomes are only read, so every accepted message can share one. */
const ACCEPTED: Outcome<void> = Object.freeze(ok(undefined));

export class MinuteWindows<In, Row, Acc extends Accumulator<In, Row>> {
  private readonly pairs = new Map<string, PairState<Acc>>();
  private pending: ClosedMinute<Row>[] = [];
  private unpersisted: ClosedMinute<Row>[] = [];
  /** Written state loaded from ClickHouse: newest written minute per pair, progress per partition. */
  private persistedClosed = new Map<string, number>();
  private progress = new Map<number, bigint>();
  /** Per partition: how long it has been read, summed over the ticks (see closeIdle). */
  private readonly readMs = new Map<number, number>();
  /** Per partition, the first offsets of the minutes not yet written. */
  private holds = new Map<number, OffsetHolds>();
  /** Per open minute, the pairs that have it open: what the wall clock closes (see closeIdle). */
  private byMinute = new Map<number, Set<PairState<Acc>>>();
  /** Pairs whose newest data was older than the lateness when it came: a replayed recording. */
  private historical = new Set<PairState<Acc>>();
  private open = 0;
  private readonly now: () => number;

  constructor(private readonly opts: MinuteWindowsOptions<Acc>) {
    this.now = opts.now ?? Date.now;
  }

  /** What ClickHouse already holds: the newest written minute per pair, and per-partition progress. */
  load(closed: { exchange: string; pair: string; series?: string; minute: number }[], progress: Map<number, bigint>): void {
    this.persistedClosed = new Map(closed.map((c) => [key(c.exchange, c.pair, c.series ?? ''), c.minute]));
    this.progress = new Map(progress);
    this.pairs.clear();
    this.pending = [];
    this.unpersisted = [];
    this.holds = new Map();
    this.byMinute = new Map();
    this.historical = new Set();
    this.open = 0;
  }

  accept(exchange: string, pair: string, ts: number, input: In, partition: number, offset: string, series = ''): Outcome<void> {
    const state = this.stateOf(exchange, pair, series);
    const refused = this.refusal(state.lastClosed, state.watermark, exchange, pair, ts, partition, offset);
    if (refused) return refused;
    const minute = Math.floor(ts / MINUTE_MS) * MINUTE_MS;
    let open = state.open.get(minute);
    if (!open) {
      open = { acc: this.opts.create(), holds: new Map() };
      state.open.set(minute, open);
      this.open++;
      let pairs = this.byMinute.get(minute);
      if (!pairs) this.byMinute.set(minute, (pairs = new Set()));
      pairs.add(state);
    }
    if (!open.holds.has(partition)) open.holds.set(partition, this.holdsOf(partition).hold(BigInt(offset)));
    open.acc.add(input, ts);
    state.partitions.set(partition, this.readMs.get(partition) ?? 0);
    state.lastArrival = this.now();
    if (ts > state.watermark) {
      state.watermark = ts;
      // close() deletes only the entry being visited, which a Map iteration allows.
      for (const m of state.open.keys()) if (m + MINUTE_MS + this.opts.latenessMs <= state.watermark) this.close(state, m);
    }
    const replaying = state.watermark < state.lastArrival - this.opts.latenessMs;
    if (replaying !== state.replaying) this.setReplaying(state, replaying);
    return ACCEPTED;
  }

  /** What accept would answer instead of accepting a message now (a re-read, a late one), or undefined: it would be accepted. */
  check(exchange: string, pair: string, ts: number, partition: number, offset: string, series = ''): Outcome<void> | undefined {
    const k = key(exchange, pair, series);
    const state = this.pairs.get(k);
    return this.refusal(state?.lastClosed ?? this.persistedClosed.get(k) ?? -Infinity, state?.watermark ?? -Infinity, exchange, pair, ts, partition, offset);
  }

  private refusal(lastClosed: number, watermark: number, exchange: string, pair: string, ts: number, partition: number, offset: string): Outcome<void> | undefined {
    const minute = Math.floor(ts / MINUTE_MS) * MINUTE_MS;
    if (minute <= lastClosed) {
      return this.reread(partition, offset) ? skip('re-read') : deadLetter(`late: minute ${new Date(minute).toISOString()} of ${exchange} ${pair} is already closed`);
    }
    if (watermark - ts > this.opts.latenessMs) {
      return this.reread(partition, offset)
        ? skip('re-read')
        : deadLetter(`late: ${Math.round((watermark - ts) / 1000)} s behind the newest event of ${exchange} ${pair} (allowed ${this.opts.latenessMs / 1000} s)`);
    }
    return undefined;
  }

  /** A message of the pair arrived that is not accepted yet (it waits, until unwait): meanwhile no minute of the pair closes by silence or the wall clock (closeIdle), as the message may belong to it. */
  wait(exchange: string, pair: string, series: string, partition: number): void {
    const state = this.stateOf(exchange, pair, series);
    state.waiting++;
    state.partitions.set(partition, this.readMs.get(partition) ?? 0);
    state.lastArrival = this.now();
  }

  unwait(exchange: string, pair: string, series: string): void {
    const state = this.pairs.get(key(exchange, pair, series));
    if (state && state.waiting > 0) state.waiting--;
  }

  private stateOf(exchange: string, pair: string, series: string): PairState<Acc> {
    const k = key(exchange, pair, series);
    let state = this.pairs.get(k);
    if (!state) {
      const persisted = this.persistedClosed.get(k) ?? -Infinity;
      state = { exchange, pair, series, watermark: -Infinity, lastClosed: persisted, lastPersisted: persisted, lastArrival: 0, replaying: false, waiting: 0, partitions: new Map(), open: new Map() };
      this.pairs.set(k, state);
    }
    return state;
  }

  /** Holds the commit point at a message not yet accepted (one that waits): release() lets it go. */
  hold(partition: number, offset: string): Hold {
    return this.holdsOf(partition).hold(BigInt(offset));
  }

  release(hold: Hold): void {
    hold.released = true;
  }

  private setReplaying(state: PairState<Acc>, replaying: boolean): void {
    state.replaying = replaying;
    if (replaying) this.historical.add(state);
    else this.historical.delete(state);
  }

  private holdsOf(partition: number): OffsetHolds {
    let h = this.holds.get(partition);
    if (!h) this.holds.set(partition, (h = new OffsetHolds()));
    return h;
  }

  /** Whether the message at this offset was handled before the last recorded progress. */
  private reread(partition: number, offset: string): boolean {
    return BigInt(offset) < (this.progress.get(partition) ?? -1n);
  }

  /**
   * Closes the minutes of pairs that went quiet. A replayed recording (its newest event
   * already older than the lateness) has nothing more to wait for once it stops, so all its
   * open minutes close after a short silence. That silence is counted in `read`: how long
   * each partition was read since the last call. Time the processor spent stalled (a slow
   * write, a held event loop, a backlog still to read) is not silence: the pair's next
   * message may be waiting behind it, and would find its minute closed.
   * A live pair's clock stands still while it is quiet, so the wall clock stands in for it:
   * a minute closes once its end plus the lateness has passed, never earlier, or the pair's
   * next message of the same minute, sent within the lateness, would find it closed.
   */
  closeIdle(read: ReadonlyMap<number, number> = new Map()): void {
    for (const [p, ms] of read) this.readMs.set(p, (this.readMs.get(p) ?? 0) + ms);
    const now = this.now();
    const idleHistorical = this.opts.historicalIdleMs ?? 5_000;
    const quietFor = (state: PairState<Acc>) => {
      let quiet = Infinity;
      for (const [p, at] of state.partitions) quiet = Math.min(quiet, (this.readMs.get(p) ?? 0) - at);
      return quiet;
    };
    // Whether a pair is replaying was judged when its newest message came, not now: a live
    // pair quiet for longer than the lateness is still live.
    for (const state of this.historical) {
      if (state.waiting > 0 || (state.open.size > 0 && quietFor(state) < idleHistorical)) continue;
      for (const m of [...state.open.keys()].sort((a, b) => a - b)) this.close(state, m);
      // Its next message judges it again (accept); until then it has nothing to close.
      this.setReplaying(state, false);
    }
    const due: number[] = [];
    for (const m of this.byMinute.keys()) if (m + MINUTE_MS + this.opts.latenessMs <= now) due.push(m);
    due.sort((a, b) => a - b);
    for (const m of due) {
      // close() takes the pair out of this set, which its iteration allows.
      for (const state of this.byMinute.get(m) ?? []) if (!state.replaying && state.waiting === 0) this.close(state, m);
    }
  }

  private close(state: PairState<Acc>, minute: number): void {
    const open = state.open.get(minute)!;
    this.drop(state, minute);
    const closed: ClosedMinute<Row> = { exchange: state.exchange, pair: state.pair, series: state.series, minute, row: open.acc.row(), holds: open.holds };
    this.pending.push(closed);
    this.unpersisted.push(closed);
    state.lastClosed = Math.max(state.lastClosed, minute);
  }

  /** Takes an open minute out of the pair and the index of open minutes; its holds stand. */
  private drop(state: PairState<Acc>, minute: number): void {
    state.open.delete(minute);
    this.open--;
    const pairs = this.byMinute.get(minute);
    pairs?.delete(state);
    if (pairs?.size === 0) this.byMinute.delete(minute);
  }

  /** Drops the pairs last fed by a partition, with their closed minutes not yet written:
   * the partition's messages since its committed offset are about to come again. */
  forget(partition: number): void {
    const dropped = new Set<string>();
    for (const [k, state] of this.pairs) {
      if (state.partitions.has(partition)) {
        dropped.add(k);
        this.pairs.delete(k);
        this.setReplaying(state, false);
        for (const [m, open] of state.open) {
          release(open.holds);
          this.drop(state, m);
        }
      }
    }
    const keep = (m: ClosedMinute<Row>) => !dropped.has(key(m.exchange, m.pair, m.series));
    this.pending = this.pending.filter(keep);
    const unpersisted: ClosedMinute<Row>[] = [];
    for (const m of this.unpersisted) {
      if (keep(m)) unpersisted.push(m);
      else release(m.holds);
    }
    this.unpersisted = unpersisted;
  }

  /** Closed minutes waiting to be written. */
  backlog(): number {
    return this.pending.length;
  }

  /** Closed minutes not yet handed out for writing. */
  takeClosed(): ClosedMinute<Row>[] {
    const out = this.pending;
    this.pending = [];
    return out;
  }

  /** Hands minutes back after a failed write. */
  returnClosed(minutes: ClosedMinute<Row>[]): void {
    this.pending = minutes.concat(this.pending);
  }

  /** Records that these minutes and the progress up to `processed` are in ClickHouse. */
  persisted(minutes: ClosedMinute<Row>[], processed: Map<number, bigint>): void {
    const done = new Set(minutes);
    this.unpersisted = this.unpersisted.filter((m) => !done.has(m));
    for (const m of minutes) {
      release(m.holds);
      const k = key(m.exchange, m.pair, m.series);
      const state = this.pairs.get(k);
      if (state) state.lastPersisted = Math.max(state.lastPersisted, m.minute);
      this.persistedClosed.set(k, Math.max(this.persistedClosed.get(k) ?? -Infinity, m.minute));
    }
    for (const [p, o] of processed) if (o > (this.progress.get(p) ?? -1n)) this.progress.set(p, o);
  }

  /** The offset to commit for a partition: not past the first message of any minute not yet written. */
  commitPoint(partition: number, next: bigint): bigint {
    const floor = this.holds.get(partition)?.floor();
    return floor !== undefined && floor < next ? floor : next;
  }

  openMinutes(): number {
    return this.open;
  }
}

function release(holds: ReadonlyMap<number, Hold>): void {
  for (const h of holds.values()) h.released = true;
}

const key = (exchange: string, pair: string, series: string) => `${exchange}\u0000${pair}\u0000${series}`;
