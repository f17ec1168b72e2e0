// The thin Kafka shell around a pipeline of steps. Each message ends in an outcome; bad
// ones go to the dead-letter topic with their reason; the pipeline keeps its own state
// and writes what is ready on each flush (by size or every flush interval). Offsets are
// committed only after the writes and dead-letter sends they cover were acknowledged, and
// never past what the pipeline still needs to re-read after a crash (its commit point).
import type { Consumer, Kafka, KafkaMessage, Producer } from 'kafkajs';
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from '../../lib/log.ts';
import { frameOf } from '../../lib/schema-registry.ts';
import { noFaults, type Faults } from '../../lib/faults.ts';
import type { Outcome } from './outcome.ts';
import { createProducer, noStats, RECENT_DEAD_LETTERS, sendInParts, type ConsumerStats } from '../../lib/kafka.ts';

export interface Pipeline {
  /** `prepared` and `index`: the batch's result of `prepare` and the message's place in it. */
  process(message: KafkaMessage, partition: number, prepared?: unknown, index?: number): Outcome<void> | Promise<Outcome<void>>;
  /**
   * Starts the steps before the pipeline's state for a batch elsewhere (a helper thread):
   * the batch is then handed over and kafkajs fetches the next while this one is prepared.
   */
  prepare?(messages: readonly KafkaMessage[]): Promise<unknown>;
  /** Stops what prepare runs on. */
  close?(): Promise<void>;
  /** Writes what is ready; `processed` holds the next offset per partition handled so far. */
  flush(processed: Map<number, bigint>): Promise<void>;
  /** Offset to commit for a partition whose next unhandled offset is `next`. */
  commitPoint(partition: number, next: bigint): bigint;
  /** Loads what is written (at start). */
  load(): Promise<void>;
  /** Drops what was built from a partition's messages after its committed offset: kafkajs
   * is about to deliver them again (after a rebalance or a consumer restart). */
  forget(partition: number): void;
  /** Called on every timer tick, e.g. to close windows of quiet pairs, with how long each
   * partition was read since the previous tick (see BatchConsumer.readSinceLastTick). */
  tick?(read: ReadonlyMap<number, number>): void;
  /** Rows waiting to be written; the shell flushes early when this grows. */
  backlog?(): number;
  /** Whether a flush has work though nothing new was read (hours to roll up). */
  due?(): boolean;
  /**
   * Whether the pipeline holds as many of the partition's messages as it may keep (messages
   * waiting for something another consumer reads): the shell reads no further message of
   * the partition until it holds fewer.
   */
  full?(partition: number): boolean;
}

export interface BatchConsumerOptions {
  topic: string;
  dlqTopic: string;
  groupId: string;
  flushIntervalMs?: number;
  fromBeginning?: boolean;
  faults?: Faults;
  /** Called when a batch's messages are handled (bench/ingest.ts times the processor by it). */
  onBatchHandled?: () => void;
}


/**
 * The longest a batch's messages are handled without a turn of the event loop. A batch
 * holds up to FETCH_BYTES a partition (a feed's burst, a catch-up after downtime): handled
 * in one go, it would hold every API request and every other consumer for its whole length.
 */
export const TURN_MS = 10;

/**
 * The most a fetch brings of one partition. kafkajs decodes a fetch in one go, which no
 * turn can split: a smaller fetch shortens a catch-up's longest wait at the same
 * end-to-end rate (docs/benchmarks.md, "Measurements behind the code").
 */
export const FETCH_BYTES = 1 << 20;

/**
 * Batches handed over and not yet handled (see Pipeline.prepare): enough for the next
 * fetch to be read while one is prepared and one handled, few enough that a rebalance or a
 * stop waits for little.
 */
const MAX_HANDED_OVER = 6;

/** The largest value a dead letter carries whole. */
const DLQ_MAX_VALUE_BYTES = 256 * 1024;

/** A step that throws is a bug, but one message must not stall its partition. */
const processingError = (e: unknown): Outcome<void> => ({ kind: 'dead-letter', reason: `processing error: ${(e as Error).message}` });

interface DeadLetter {
  message: KafkaMessage;
  partition: number;
  reason: string;
}

export class BatchConsumer {
  private readonly consumer: Consumer;
  private readonly producer: Producer;
  /** Next offset to handle, per partition. */
  private next = new Map<number, bigint>();
  private dead: DeadLetter[] = [];
  private dirty = false;
  private flushing: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  /** Partitions that may hold messages not handled yet: a batch under way, or the last one
   * fetched short of the partition's end. */
  private readonly unread = new Set<number>();
  /** Flushes a batch waits for (reading stops meanwhile), and whether one ran since the last tick. */
  private holding = 0;
  private heldSinceTick = false;
  private lastTick = 0;
  /** Batches handed over (Pipeline.prepare), handled in order, and how many of each partition wait. */
  private handedOver: Promise<void>[] = [];
  private waitingIn = new Map<number, number>();
  /** Partitions not fetched while the pipeline is full for them (holdBack). */
  private readonly heldBack = new Set<number>();
  private failed = false;
  readonly name: string;
  readonly stats: ConsumerStats = noStats();

  constructor(
    kafka: Kafka,
    private readonly pipeline: Pipeline,
    private readonly opts: BatchConsumerOptions,
    private readonly log: Logger,
  ) {
    this.name = opts.topic;
    this.consumer = kafka.consumer({ groupId: opts.groupId, sessionTimeout: 30_000, heartbeatInterval: 3_000, maxBytesPerPartition: FETCH_BYTES });
    this.producer = createProducer(kafka);
  }

  async start(): Promise<void> {
    await this.producer.connect();
    await this.consumer.connect();
    await this.pipeline.load();
    await this.consumer.subscribe({ topic: this.opts.topic, fromBeginning: this.opts.fromBeginning ?? true });
    // Also for the batches kafkajs skips (only transaction markers), which end a partition too.
    this.consumer.on(this.consumer.events.START_BATCH_PROCESS, ({ payload }) => this.unread.add(payload.partition));
    this.consumer.on(this.consumer.events.END_BATCH_PROCESS, ({ payload }) => {
      if (payload.offsetLag === '0') this.unread.delete(payload.partition);
      else this.unread.add(payload.partition);
    });
    await this.consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: 3,
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
        if (this.pipeline.prepare && batch.messages.length > 0) {
          // Not resolved: kafkajs fetches the batch again once the partition is resumed.
          if (this.pipeline.full?.(batch.partition)) return this.holdBack(batch.partition);
          await this.handOver(batch.messages, batch.partition, isRunning, isStale);
          // Handed over: kafkajs fetches on from here. What is committed still follows what
          // was handled and written (flush), never this.
          resolveOffset(batch.messages[batch.messages.length - 1]!.offset);
          await heartbeat();
          return;
        }
        await this.handleBatch(batch.messages, batch.partition, undefined, isRunning, isStale, resolveOffset);
        await heartbeat();
      },
    });
    const every = this.opts.flushIntervalMs ?? 1000;
    this.lastTick = performance.now();
    this.timer = setInterval(() => {
      this.pipeline.tick?.(this.readSinceLastTick(every));
      this.resumeHeldBack();
      if (this.dirty || (this.pipeline.backlog?.() ?? 0) > 0 || this.pipeline.due?.()) this.flush().catch((e: unknown) => this.log.error('flush failed', { err: e as Error }));
    }, every);
  }

  /**
   * A batch's messages one by one, in turns of at most TURN_MS, with what prepare made of
   * them when it ran; then a flush if what waits to be written grew large.
   */
  private async handleBatch(
    messages: readonly KafkaMessage[],
    partition: number,
    prepared: unknown,
    isRunning: () => boolean,
    isStale: () => boolean,
    resolveOffset?: (offset: string) => void,
  ): Promise<void> {
    // A scheduling budget, not a time of the data: the monotonic clock, not the service's.
    let turn = performance.now();
    // Whether the batch is still ours: before each message while kafkajs waits on it (its
    // offsets resolved one by one); handed over, its offsets are resolved, and this is asked
    // at its start and after each turn (kafkajs builds a key each time it is asked).
    const everyMessage = resolveOffset !== undefined;
    if (!isRunning() || isStale()) return;
    for (let i = 0; i < messages.length; i++) {
      const message = messages[i]!;
      if (everyMessage && i > 0 && (!isRunning() || isStale())) break;
      // The rest of the batch is not resolved: kafkajs fetches it again once the partition
      // is resumed. (A batch handed over is checked before it is: its offsets are resolved.)
      if (everyMessage && this.pipeline.full?.(partition)) {
        this.holdBack(partition);
        break;
      }
      const pending = this.handle(message, partition, prepared, i);
      if (pending) await pending;
      resolveOffset?.(message.offset);
      if (performance.now() - turn >= TURN_MS) {
        await nextTurn();
        turn = performance.now();
        if (!isRunning() || isStale()) break;
      }
    }
    if ((this.pipeline.backlog?.() ?? 0) >= 5_000 || this.dead.length >= 1_000) {
      // Never throw out of eachBatch: kafkajs would re-deliver part of the batch.
      this.holding++;
      this.heldSinceTick = true;
      await this.flush()
        .catch((e: unknown) => this.log.error('flush failed', { err: e as Error }))
        .finally(() => this.holding--);
    }
    this.opts.onBatchHandled?.();
  }

  /**
   * Stops fetching a partition the pipeline is full for, until a tick finds it holds fewer
   * (resumeHeldBack): the pipeline releases what it holds on its ticks and flushes, whatever
   * is read. The other partitions are read on, the one the pipeline waits for among them.
   */
  private holdBack(partition: number): void {
    if (this.heldBack.has(partition)) return;
    this.heldBack.add(partition);
    this.stats.readsHeldBack++;
    this.consumer.pause([{ topic: this.opts.topic, partitions: [partition] }]);
  }

  private resumeHeldBack(): void {
    for (const p of this.heldBack) {
      if (this.pipeline.full!(p)) continue;
      this.heldBack.delete(p);
      this.consumer.resume([{ topic: this.opts.topic, partitions: [p] }]);
    }
  }

  /**
   * Starts preparing a batch and queues its handling after the batches handed over before
   * it; waits only while MAX_HANDED_OVER wait. A batch whose preparing failed is handled
   * here from the start, as without a helper.
   */
  private async handOver(messages: readonly KafkaMessage[], partition: number, isRunning: () => boolean, isStale: () => boolean): Promise<void> {
    const prepared = this.pipeline.prepare!(messages).catch((e: unknown) => {
      this.log.warn('preparing a batch failed; handling it here', { err: e as Error });
      return undefined;
    });
    this.waitingIn.set(partition, (this.waitingIn.get(partition) ?? 0) + 1);
    const before = this.handedOver[this.handedOver.length - 1] ?? Promise.resolve();
    const handled = before
      .then(async () => {
        if (!this.failed) await this.handleBatch(messages, partition, await prepared, isRunning, isStale);
      })
      .catch((e: unknown) => {
        // A bug: the batches after it must not be handled past its gap, and its offsets are
        // resolved, so nothing re-delivers it. Thrown from a turn of its own: the thread
        // running the consumer (processors/market/threaded.ts) dies, is started again and
        // re-reads from the committed offsets, as after a crash.
        this.log.error('handling a batch failed', { err: e as Error });
        this.failed = true;
        setImmediate(() => {
          throw e;
        });
      })
      .finally(() => {
        this.waitingIn.set(partition, this.waitingIn.get(partition)! - 1);
        this.handedOver.shift();
      });
    this.handedOver.push(handled);
    while (this.handedOver.length > MAX_HANDED_OVER) await this.handedOver[0];
  }

  /** Waits until every batch handed over is handled. */
  private async drain(): Promise<void> {
    while (this.handedOver.length > 0) await this.handedOver[this.handedOver.length - 1];
  }

  /**
   * How long each partition was read since the last tick: the time a quiet pair's silence
   * is measured in. None while a batch waits for a flush (nothing is read), none for a
   * partition with messages known to wait, and at most one interval a tick (a late tick
   * means the event loop was held), none for a partition held back (holdBack). A pair's next
   * message sitting unread behind a stall is not silence.
   */
  private readSinceLastTick(every: number): Map<number, number> {
    const t = performance.now();
    const read = this.heldSinceTick ? 0 : Math.min(t - this.lastTick, every);
    this.lastTick = t;
    this.heldSinceTick = this.holding > 0;
    const out = new Map<number, number>();
    for (const p of this.next.keys()) out.set(p, this.unread.has(p) || this.heldBack.has(p) || (this.waitingIn.get(p) ?? 0) > 0 ? 0 : read);
    return out;
  }

  /** Synchronous when the pipeline handles the message synchronously (almost always):
   * no promise and no await per message. */
  private handle(message: KafkaMessage, partition: number, prepared: unknown, index: number): Promise<void> | undefined {
    const offset = BigInt(message.offset);
    const expected = this.next.get(partition);
    if (expected !== undefined && offset < expected) return this.rewind(message, partition, offset).then(() => this.run(message, partition, offset, prepared, index));
    return this.run(message, partition, offset, prepared, index);
  }

  /**
   * kafkajs went back to the committed offset (rebalance, consumer restart): what was built
   * from this partition since then is about to be rebuilt. Lets a running flush finish
   * first, so nothing it writes is built a second time.
   */
  private async rewind(message: KafkaMessage, partition: number, offset: bigint): Promise<void> {
    this.log.info('re-reading a partition from its committed offset', { topic: this.opts.topic, partition, from: message.offset });
    await this.flushing.catch(() => undefined);
    this.pipeline.forget(partition);
    this.dead = this.dead.filter((d) => d.partition !== partition || BigInt(d.message.offset) < offset);
  }

  private run(message: KafkaMessage, partition: number, offset: bigint, prepared: unknown, index: number): Promise<void> | undefined {
    let outcome: Outcome<void> | Promise<Outcome<void>>;
    try {
      outcome = this.pipeline.process(message, partition, prepared, index);
    } catch (e) {
      outcome = processingError(e);
    }
    if (outcome instanceof Promise) {
      return outcome.then(
        (o) => this.record(message, partition, offset, o),
        (e: unknown) => this.record(message, partition, offset, processingError(e)),
      );
    }
    this.record(message, partition, offset, outcome);
    return undefined;
  }

  private record(message: KafkaMessage, partition: number, offset: bigint, outcome: Outcome<void>): void {
    this.next.set(partition, offset + 1n);
    this.dirty = true;
    switch (outcome.kind) {
      case 'ok':
        this.stats.ok++;
        break;
      case 'skip':
        this.stats.skipped++;
        this.stats.skipReasons[outcome.reason] = (this.stats.skipReasons[outcome.reason] ?? 0) + 1;
        break;
      case 'dead-letter':
        this.stats.deadLettered++;
        this.dead.push({ message, partition, reason: outcome.reason });
        break;
    }
  }

  /**
   * The dead-letter record: the reason, where the message came from, and the message. A
   * framed value is kept as its JSON text and its schema id, which text cannot carry
   * inside the value (its header is binary).
   */
  private async sendToDlq(dead: DeadLetter[]): Promise<void> {
    if (dead.length === 0) return;
    const records = dead.map(({ message, partition, reason }) => {
      const frame = frameOf(message.value);
      const source = { topic: this.opts.topic, partition, offset: message.offset, timestamp: message.timestamp };
      const raw = (frame ? frame.payload : message.value)?.toString('utf8') ?? null;
      // A record the broker would refuse keeps its reason and where it came from, not its
      // value: it can be read again from the source topic at that offset.
      const value =
        raw !== null && raw.length > DLQ_MAX_VALUE_BYTES
          ? { reason, source, key: message.key?.toString('utf8') ?? null, value: null, value_bytes: Buffer.byteLength(raw) }
          : { reason, source, key: message.key?.toString('utf8') ?? null, value: raw };
      return { key: message.key, value: JSON.stringify({ ...value, ...(frame ? { schema_id: frame.schemaId } : {}) }), headers: { 'x-dlq-reason': reason } };
    });
    await sendInParts(this.producer, this.opts.dlqTopic, records);
    const notes = dead.map(({ message, partition, reason }) => ({ reason, key: message.key?.toString('utf8') ?? null, partition, offset: message.offset, produced_at: new Date(Number(message.timestamp)).toISOString() }));
    this.stats.recentDeadLetters = this.stats.recentDeadLetters.concat(notes).slice(-RECENT_DEAD_LETTERS);
  }

  /** Sends dead letters, lets the pipeline write, then commits. One at a time. */
  flush(): Promise<void> {
    const run = async () => {
      this.dirty = false;
      const dead = this.dead;
      this.dead = [];
      const processed = new Map(this.next);
      try {
        await this.sendToDlq(dead);
      } catch (e) {
        this.dead = dead.concat(this.dead);
        this.dirty = true;
        throw e;
      }
      try {
        await this.pipeline.flush(processed);
      } catch (e) {
        this.dirty = true;
        throw e;
      }
      this.stats.flushes++;
      const offsets: { topic: string; partition: number; offset: string }[] = [];
      for (const [partition, next] of processed) {
        // Not past a dead letter that arrived during this flush and is not sent yet.
        let point = this.pipeline.commitPoint(partition, next);
        for (const d of this.dead) if (d.partition === partition && BigInt(d.message.offset) < point) point = BigInt(d.message.offset);
        offsets.push({ topic: this.opts.topic, partition, offset: String(point) });
      }
      if (offsets.length === 0) return;
      (this.opts.faults ?? noFaults).hit('before-commit');
      try {
        await this.consumer.commitOffsets(offsets);
      } catch (e) {
        // After a rebalance the new owner re-reads from the last commit; writes are idempotent.
        this.log.warn('offset commit failed; messages will be re-read', { err: e as Error });
      }
    };
    // One flush at a time; a failed one does not block the next.
    const next = this.flushing.catch(() => undefined).then(run);
    this.flushing = next;
    return next;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    // Commit what is written while still in the group; anything after is read again next time.
    this.consumer.pause([{ topic: this.opts.topic }]);
    await this.drain();
    await this.flush().catch((e: unknown) => this.log.error('final flush failed', { err: e as Error }));
    await this.consumer.stop();
    await this.consumer.disconnect();
    await this.producer.disconnect();
    await this.pipeline.close?.();
  }
}
