// The common pipeline of the market-data processors: decode (framed or plain JSON) ->
// validate -> event time -> known pair -> compute -> add to the pair's minute window.
// Closed minutes are written on each flush, with the progress that lets a restart tell
// re-reads from late arrivals.
import type { KafkaMessage } from 'kafkajs';
import { describeErrors, type Timestamp, type ValidateFunction } from '../../schemas/index.ts';
import type { KnownPairs } from '../reference-cache.ts';
import type { Pipeline } from '../shell/batch-consumer.ts';
import { MinuteWindows, type Accumulator, type ClosedMinute, type Hold } from '../shell/minute-windows.ts';
import { splitPair, type QuoteRates } from '../../domain/market/prices.ts';
import type { QuoteMidRepository } from '../../domain/market/repositories/quote-mids.ts';
import { mapKey } from '../../lib/map-key.ts';
import type { Decoded, ValueDecoder } from '../shell/decode-value.ts';
import { deadLetter, ok, type Outcome } from '../shell/outcome.ts';
import { parseTimestamp } from '../../schemas/timestamps.ts';
import { noFaults, type Faults } from '../../lib/faults.ts';
import type { MinuteRepository } from '../../domain/market/repositories/minutes.ts';
import type { RollupKey, Rollups } from '../../domain/market/repositories/rollups.ts';
import type { SealedRollups } from './sealed-rollups.ts';
import type { MinuteEvents, MinuteValues } from './minute-events.ts';
import { PREPARED, type PreparedBatch, type Preparer } from './prepare.ts';

/** What is computed from a family's minutes once they are written: recomputing it is idempotent. */
export interface Derived {
  /** For these pairs' minutes, or (at a restart) for the hours of these keys' minutes. */
  recompute(keys: RollupKey[], unit: 'minute' | 'hour'): Promise<void>;
}

export interface MarketMessage {
  exchange: string;
  pair: string;
  ts: Timestamp;
}

export interface WindowSpec<Msg extends MarketMessage, In, Row extends object> {
  validate: ValidateFunction<Msg>;
  /** The series within the pair a message belongs to (a market maker's wallet); '' when not given. */
  series?(msg: Msg): string;
  /** A check of the message against reference data beyond its pair (a wallet and its organization). */
  admit?(msg: Msg): Outcome<void> | Promise<Outcome<void>>;
  /** The rate table compute converts quote currencies with: a message whose rate is not known yet waits for it (WindowedPipeline). */
  rates?: QuoteRates;
  /** Turns a valid message into what its minute accumulates (or skips / dead-letters it).
   * The value is added to its minute (or dropped) before compute is called again, so it
   * may share memory with the next call's. */
  compute(msg: Msg, ts: number): Outcome<In>;
  /** What compute would skip whatever the rate: asked before a message waits for its rate, so it is counted as skipped, not as handled. */
  skipOf?(msg: Msg): Outcome<void> | undefined;
  create(): Accumulator<In, Row>;
  /** How compute's values cross threads, for a spec whose steps up to compute may run in a helper thread (processors/market/prepare.ts); only for specs without `series` and `admit`. */
  packing?: Packing<In>;
}

/** A computed value as `width` numbers of a Float64Array. */
export interface Packing<In> {
  width: number;
  write(value: In, out: Float64Array, at: number): void;
  /** The value at `at`; may share memory with the next read's (as compute's). */
  read(from: Float64Array, at: number): In;
}

/** A message that waits for its quote rate, holding the commit point at its offset. */
interface Waiting<Msg> {
  data: Msg;
  ts: number;
  partition: number;
  offset: string;
  hold: Hold;
}

/** The longest a message waits for its quote rate while the rate's sources stand still. */
const MAX_WAIT_MS = 30_000;

/**
 * The most messages of one partition kept waiting for their quote rate: then the shell
 * reads no further message of it until some are released (Pipeline.full). Trades read far
 * ahead of the books their rates come from (a replay, a books processor catching up) would
 * otherwise all wait in memory.
 */
const MAX_WAITING = 20_000;

/** Counted as handled: its minute takes it once its rate is known. */
const WAITING: Outcome<void> = Object.freeze(ok(undefined));

/** A prepared batch's outcomes of compute by message, looked up once per batch. */
const outcomesOf = new WeakMap<PreparedBatch, Map<number, Outcome<unknown>>>();
function notComputed(p: PreparedBatch): Map<number, Outcome<unknown>> {
  let m = outcomesOf.get(p);
  if (!m) outcomesOf.set(p, (m = new Map(p.outcomes)));
  return m;
}

export class WindowedPipeline<Msg extends MarketMessage, In, Row extends object> implements Pipeline {
  readonly windows: MinuteWindows<In, Row, Accumulator<In, Row>>;
  /** A batch whose insert failed: retried alone, with the same token, before anything else. */
  private retry: ClosedMinute<Row>[] | undefined;

  constructor(
    private readonly spec: WindowSpec<Msg, In, Row>,
    private readonly deps: {
      decoder: ValueDecoder;
      repo: MinuteRepository<Row>;
      /** The family's hours and days; none for a family kept only to derive others from. */
      rollups: Rollups | undefined;
      /** When the hours are rolled up once sealed rather than as minutes are written. */
      sealed?: SealedRollups;
      /** Computed from the written minutes after the rollups, in order. */
      derived?: readonly Derived[];
      known: KnownPairs;
      groupId: string;
      topic: string;
      latenessMs: number;
      now?: () => number;
      faults?: Faults;
      /** Written minutes told to the event stream, with the values it shows of them. */
      events?: { publisher: MinuteEvents; values: MinuteValues<Row> };
      /** Runs the steps up to compute in a helper thread (the spec's packing is how values come back). */
      preparer?: Preparer;
      /** Where the mids the spec's rate table saw are saved at each flush (the books' pipeline). */
      quoteMids?: QuoteMidRepository;
      /** The most messages of a partition kept waiting for their rate (MAX_WAITING). */
      maxWaiting?: number;
    },
  ) {
    this.windows = new MinuteWindows({ latenessMs: deps.latenessMs, create: spec.create, now: deps.now });
    // Under the lateness: a live minute closes by the wall clock at its end plus the lateness.
    this.waitMs = Math.min(MAX_WAIT_MS, deps.latenessMs / 2);
    if (deps.preparer && (!spec.packing || spec.admit || spec.series)) throw new Error('only a spec with packing and without series or admit can be prepared in a helper thread');
    const preparer = deps.preparer;
    if (preparer) {
      let told = -1;
      preparer.onRestart = () => (told = -1);
      this.prepare = async (messages) => {
        const { known } = this.deps;
        if (known.loads === 0) await known.refresh();
        const changed = known.loads !== told ? known.keys() : undefined;
        told = known.loads;
        this.learn();
        return preparer.prepare(messages, changed);
      };
    }
  }

  /** A batch's steps up to compute, in the helper thread (when there is one). */
  readonly prepare?: (messages: readonly KafkaMessage[]) => Promise<PreparedBatch>;

  /** Synchronous unless the known pairs must be reloaded first: no promise per message. With
   * the batch's prepared values, what the helper did is not done again. */
  process(message: KafkaMessage, partition: number, prepared?: unknown, index = 0): Outcome<void> | Promise<Outcome<void>> {
    if (prepared !== undefined) return this.fromPrepared(message, partition, prepared as PreparedBatch, index);
    const decoded = this.deps.decoder.decode(message.value);
    if (decoded instanceof Promise) return decoded.then((d) => this.check(d, message, partition));
    return this.check(decoded, message, partition);
  }

  private fromPrepared(message: KafkaMessage, partition: number, p: PreparedBatch, i: number): Outcome<void> | Promise<Outcome<void>> {
    if (p.kinds[i] === PREPARED.here) return this.process(message, partition);
    const known = this.deps.known.has(p.exchanges[i]!, p.pairs[i]!);
    // No closure per message: this runs for every snapshot.
    if (typeof known === 'boolean') return this.acceptPrepared(known, message, partition, p, i);
    return known.then((k) => this.acceptPrepared(k, message, partition, p, i));
  }

  /** In the order of the steps here: the pair is checked before compute's outcome counts. */
  private acceptPrepared(known: boolean, message: KafkaMessage, partition: number, p: PreparedBatch, i: number): Outcome<void> {
    if (!known) return deadLetter(`unknown pair: ${p.exchanges[i]} ${p.pairs[i]}`);
    // A late message is dead-lettered as late, whatever compute made of it (a crossed book).
    if (p.kinds[i] === PREPARED.notComputed) return this.windows.check(p.exchanges[i]!, p.pairs[i]!, p.ts[i]!, partition, message.offset) ?? (notComputed(p).get(i)! as Outcome<void>);
    const packing = this.spec.packing!;
    return this.windows.accept(p.exchanges[i]!, p.pairs[i]!, p.ts[i]!, packing.read(p.values, i * packing.width), partition, message.offset);
  }

  /** Stops the helper thread. */
  async close(): Promise<void> {
    await this.deps.preparer?.close();
  }

  private check(decoded: Outcome<Decoded>, message: KafkaMessage, partition: number): Outcome<void> | Promise<Outcome<void>> {
    if (decoded.kind !== 'ok') return decoded;
    const { data: value } = decoded.value;
    // Every value meets this processor's own schema, whatever the schema of its id said
    // (a framed value's id goes into its dead letter beside the reason).
    if (!this.spec.validate(value)) return deadLetter(`schema: ${describeErrors(this.spec.validate.errors)}`);
    const data = value as Msg;
    const ts = parseTimestamp(data.ts);
    if (ts === undefined) return deadLetter(`schema: /ts ${JSON.stringify(data.ts)} is not an ISO 8601 time or epoch milliseconds`);
    const known = this.deps.known.has(data.exchange, data.pair);
    if (typeof known !== 'boolean') return known.then((k) => this.admit(k, data, ts, message, partition));
    return this.admit(known, data, ts, message, partition);
  }

  private admit(known: boolean, data: Msg, ts: number, message: KafkaMessage, partition: number): Outcome<void> | Promise<Outcome<void>> {
    if (!known) return deadLetter(`unknown pair: ${data.exchange} ${data.pair}`);
    if (!this.spec.admit) return this.add(data, ts, message, partition);
    const admitted = this.spec.admit(data);
    if (admitted instanceof Promise) return admitted.then((a) => (a.kind === 'ok' ? this.add(data, ts, message, partition) : a));
    return admitted.kind === 'ok' ? this.add(data, ts, message, partition) : admitted;
  }

  private add(data: Msg, ts: number, message: KafkaMessage, partition: number): Outcome<void> {
    const series = this.spec.series?.(data) ?? '';
    if (this.spec.rates && this.mustWait(data, ts, series)) {
      const refused = this.windows.check(data.exchange, data.pair, ts, partition, message.offset, series) ?? this.spec.skipOf?.(data);
      if (refused) return refused;
      const k = mapKey(data.exchange, data.pair, series);
      let queue = this.waiting.get(k);
      if (!queue) this.waiting.set(k, (queue = []));
      queue.push({ data, ts, partition, offset: message.offset, hold: this.windows.hold(partition, message.offset) });
      this.waitingIn.set(partition, (this.waitingIn.get(partition) ?? 0) + 1);
      this.windows.wait(data.exchange, data.pair, series, partition);
      return WAITING;
    }
    return this.computeAndAccept(data, ts, partition, message.offset, series);
  }

  private computeAndAccept(data: Msg, ts: number, partition: number, offset: string, series: string): Outcome<void> {
    const computed = this.spec.compute(data, ts);
    if (computed.kind !== 'ok') return this.windows.check(data.exchange, data.pair, ts, partition, offset, series) ?? computed;
    return this.windows.accept(data.exchange, data.pair, ts, computed.value, partition, offset, series);
  }

  /** Gives the spec's rate table the known pairs whenever they were loaded again. */
  private learn(): void {
    const { known } = this.deps;
    if (this.spec.rates && known.loads !== this.learned) {
      this.learned = known.loads;
      this.spec.rates.learnPairs(known.keys());
    }
  }

  /**
   * Whether a message of a pair quoted in another currency waits for its rate: the sources of
   * its quote currency have not been seen up to its time yet (a partition read ahead of
   * theirs, a restart), and were seen moving within the last `waitMs`; or its pair has
   * messages waiting, which it keeps in order behind.
   */
  private mustWait(data: Msg, ts: number, series: string): boolean {
    if (this.waiting.size > 0 && this.waiting.has(mapKey(data.exchange, data.pair, series))) return true;
    this.learn();
    const through = this.spec.rates!.through(data.pair);
    return through < ts && !this.sourceQuiet(data.pair, through);
  }

  /** Whether the sources of the pair's quote currency stood still at `through` for `waitMs`: no use waiting for them. */
  private sourceQuiet(pair: string, through: number): boolean {
    const now = (this.deps.now ?? Date.now)();
    const quote = splitPair(pair).quote;
    const seen = this.sourceSeen.get(quote);
    if (!seen || seen.through !== through) {
      this.sourceSeen.set(quote, { through, since: now });
      return this.waitMs === 0;
    }
    return now - seen.since >= this.waitMs;
  }

  /** Hands the waiting messages whose rate has come (or whose sources went quiet) to their minutes, in order per pair. */
  private release(): void {
    if (this.waiting.size === 0) return;
    const rates = this.spec.rates!;
    for (const [k, queue] of this.waiting) {
      let i = 0;
      for (; i < queue.length; i++) {
        const w = queue[i]!;
        const through = rates.through(w.data.pair);
        if (through < w.ts && !this.sourceQuiet(w.data.pair, through)) break;
        this.windows.release(w.hold);
        this.waitingIn.set(w.partition, this.waitingIn.get(w.partition)! - 1);
        const series = this.spec.series?.(w.data) ?? '';
        this.windows.unwait(w.data.exchange, w.data.pair, series);
        // Checked when it began to wait (lateness, skipOf), and no minute of its pair closed since (MinuteWindows.wait).
        this.computeAndAccept(w.data, w.ts, w.partition, w.offset, series);
      }
      if (i === queue.length) this.waiting.delete(k);
      else if (i > 0) queue.splice(0, i);
    }
  }

  /** Messages waiting for their quote rate (mustWait), by pair and series. */
  private waiting = new Map<string, Waiting<Msg>[]>();
  /** How many of them by partition. */
  private waitingIn = new Map<number, number>();
  /** Per quote currency, how far its sources were seen and since when (the service's clock). */
  private readonly sourceSeen = new Map<string, { through: number; since: number }>();
  private learned = -1;
  private readonly waitMs: number;

  async flush(processed: Map<number, bigint>): Promise<void> {
    this.release();
    if (this.retry) {
      await this.write(this.retry);
      this.windows.persisted(this.retry, new Map());
      this.retry = undefined;
    }
    const closed = this.windows.takeClosed();
    try {
      await this.write(closed);
    } catch (e) {
      this.retry = closed;
      throw e;
    }
    // The mids seen up to this progress, before it: a restart reads on from there (QuoteRates).
    if (this.deps.quoteMids && this.spec.rates) {
      const mids = this.spec.rates.takeUnsaved();
      try {
        await this.deps.quoteMids.insert(mids);
      } catch (e) {
        this.spec.rates.returnUnsaved(mids);
        throw e;
      }
    }
    await this.deps.repo.saveProgress(this.deps.groupId, this.deps.topic, processed);
    this.windows.persisted(closed, processed);
    // After the minutes are on record: a failed seal keeps its keys and is tried at the next flush.
    await this.deps.sealed?.seal();
  }

  /** Whether a flush has work even with nothing new read: an hour to seal. */
  due(): boolean {
    return this.deps.sealed?.due() ?? false;
  }

  /** Minutes, then the hours and days that contain them (or, with `sealed`, those of sealed hours), then what derives from them, then their messages to the stream. Every step can be repeated. */
  private async write(minutes: ClosedMinute<Row>[]): Promise<void> {
    if (minutes.length === 0) return;
    const faults = this.deps.faults ?? noFaults;
    await faults.stall('before-write');
    faults.hit('before-write');
    await this.deps.repo.insert(minutes);
    const writtenAt = this.deps.events?.publisher.stamp();
    faults.hit('after-write');
    if (this.deps.sealed) await this.deps.sealed.written(minutes);
    else await this.deps.rollups?.recompute(minutes);
    for (const d of this.deps.derived ?? []) await d.recompute(minutes, 'minute');
    if (this.deps.events && writtenAt !== undefined) await this.deps.events.publisher.publish(minutes, this.deps.events.values, writtenAt);
  }

  commitPoint(partition: number, next: bigint): bigint {
    return this.windows.commitPoint(partition, next);
  }

  async load(): Promise<void> {
    const { repo, rollups, groupId, topic } = this.deps;
    // Minutes written after the last recorded progress may lack their rollups and what
    // derives from them (a crash between the writes): compute those hours again.
    const since = await repo.lastProgressAt(groupId, topic);
    const unrolled = rollups ? await rollups.writtenSince(since) : await repo.hoursWrittenSince(since);
    for (let i = 0; i < unrolled.length; i += 2000) {
      const keys = unrolled.slice(i, i + 2000);
      await rollups?.recompute(keys);
      for (const d of this.deps.derived ?? []) await d.recompute(keys, 'hour');
    }
    const [closed, progress] = await Promise.all([repo.lastMinutes(), repo.progress(groupId, topic)]);
    this.windows.load(closed, progress);
    this.waiting = new Map();
    this.waitingIn = new Map();
    await this.deps.sealed?.load();
    await this.deps.preparer?.open();
  }

  forget(partition: number): void {
    for (const [k, queue] of this.waiting) {
      const kept = queue.filter((w) => w.partition !== partition);
      for (const w of queue) if (w.partition === partition) this.windows.release(w.hold);
      if (kept.length === 0) this.waiting.delete(k);
      else this.waiting.set(k, kept);
    }
    this.waitingIn.delete(partition);
    this.windows.forget(partition);
  }

  tick(read: ReadonlyMap<number, number>): void {
    this.release();
    this.windows.closeIdle(read);
  }

  backlog(): number {
    return this.windows.backlog();
  }

  full(partition: number): boolean {
    return (this.waitingIn.get(partition) ?? 0) >= (this.deps.maxWaiting ?? MAX_WAITING);
  }
}
