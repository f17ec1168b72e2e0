// The common pipeline of the market-data processors: decode (framed or plain JSON) ->
// validate -> event time -> known pair -> compute -> add to the pair's minute window.
// Closed minutes are written on each flush, with the progress that lets a restart tell
// re-reads from late arrivals.
import type { KafkaMessage } from 'kafkajs';
import { describeErrors, type Timestamp, type ValidateFunction } from '../../schemas/index.ts';
import type { KnownPairs } from '../reference-cache.ts';
import type { Pipeline } from '../shell/batch-consumer.ts';
import { MinuteWindows, type Accumulator, type ClosedMinute } from '../shell/minute-windows.ts';
import type { Decoded, ValueDecoder } from '../shell/decode-value.ts';
import { deadLetter, type Outcome } from '../shell/outcome.ts';
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
  /** Turns a valid message into what its minute accumulates (or skips / dead-letters it).
   * The value is added to its minute (or dropped) before compute is called again, so it
   * may share memory with the next call's. */
  compute(msg: Msg, ts: number): Outcome<In>;
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
    },
  ) {
    this.windows = new MinuteWindows({ latenessMs: deps.latenessMs, create: spec.create, now: deps.now });
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
    if (p.kinds[i] === PREPARED.notComputed) return notComputed(p).get(i)! as Outcome<void>;
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
    const computed = this.spec.compute(data, ts);
    if (computed.kind !== 'ok') return computed;
    return this.windows.accept(data.exchange, data.pair, ts, computed.value, partition, message.offset, this.spec.series?.(data) ?? '');
  }

  async flush(processed: Map<number, bigint>): Promise<void> {
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
    await this.deps.sealed?.load();
    await this.deps.preparer?.open();
  }

  forget(partition: number): void {
    this.windows.forget(partition);
  }

  tick(read: ReadonlyMap<number, number>): void {
    this.windows.closeIdle(read);
  }

  backlog(): number {
    return this.windows.backlog();
  }
}
