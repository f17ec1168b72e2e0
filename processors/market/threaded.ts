// A market-data processor in a worker thread (processors/market/thread.ts), seen from the
// main thread as a consumer like the others: start, stop, stats. Decoding, validating and
// computing a catch-up's hundreds of thousands of messages would hold the API's event loop
// for whole fetches at a time; in a thread of its own it holds none of it, and runs beside
// the API on the second core. Its ClickHouse statements come back to run on `ch` here (the
// engine is the main thread's, lib/clickhouse-relay.ts), the quote rates it observes go
// into `rates`, the fault counters are the process's. A thread that dies is started again:
// it re-reads from its committed offsets, as after a crash.
import { MessageChannel, Worker } from 'node:worker_threads';
import type { ClickHouse } from '../../lib/clickhouse.ts';
import { serveClickHouse } from '../../lib/clickhouse-relay.ts';
import type { Config } from '../../lib/config.ts';
import { noFaults, type Faults } from '../../lib/faults.ts';
import { noStats, RECENT_DEAD_LETTERS, type BaseTopic, type ConsumerStats } from '../../lib/kafka.ts';
import type { Logger } from '../../lib/log.ts';
import type { QuoteRates } from '../../domain/market/prices.ts';
import type { BatchReport, ThreadInit, ThreadReport, ThreadRequest } from './thread-messages.ts';


const RESTART_MS = 1000;
/** The thread's bootstrap: registers tsx there, then loads thread.ts. */
const ENTRY = new URL('./thread.mjs', import.meta.url);

export class ThreadedConsumer {
  readonly name: string;
  /** The thread's counts, as last reported, over every thread this consumer started. */
  readonly stats: ConsumerStats = noStats();
  private base: ConsumerStats = noStats();
  private last: ConsumerStats = noStats();
  private worker: Worker | undefined;
  private seq = 0;
  private readonly waiting = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  private stopping = false;
  private started = false;
  private restart: NodeJS.Timeout | undefined;

  constructor(
    private readonly processor: ThreadInit['processor'],
    topic: string,
    private readonly opts: {
      config: Config;
      schemaIds: ReadonlyMap<BaseTopic, number>;
      /** The connection the thread's statements run on. */
      ch: ClickHouse;
      rates: QuoteRates;
      faults?: Faults;
      log: Logger;
      flushIntervalMs?: number;
      minuteEvents: boolean;
      /** Called at the end of every batch the thread handles. */
      onBatch?: (b: BatchReport) => void;
    },
  ) {
    this.name = topic;
  }

  async start(): Promise<void> {
    const { port1, port2 } = new MessageChannel();
    serveClickHouse(this.opts.ch, port1);
    const faults = this.opts.faults ?? noFaults;
    const init: ThreadInit = {
      processor: this.processor,
      config: this.opts.config,
      schemaIds: new Map(this.opts.schemaIds),
      flushIntervalMs: this.opts.flushIntervalMs,
      minuteEvents: this.opts.minuteEvents,
      faults: { spec: faults.spec, counters: faults.counters.buffer as SharedArrayBuffer },
      ch: port2,
      reportBatches: this.opts.onBatch !== undefined,
    };
    const worker = new Worker(ENTRY, { workerData: init, transferList: [port2] });
    this.worker = worker;
    const ready = new Promise<void>((resolve, reject) => {
      worker.on('message', (r: ThreadReport) => {
        if (r.type === 'ready') resolve();
        else this.received(r);
      });
      worker.once('error', reject);
    });
    worker.on('error', (e) => this.opts.log.error('processor thread failed', { topic: this.name, err: e }));
    worker.on('exit', (code) => {
      port1.close();
      for (const w of this.waiting.values()) w.reject(new Error(`processor thread exited (${code})`));
      this.waiting.clear();
      if (this.worker !== worker) return;
      this.worker = undefined;
      // One that never started fails the start instead.
      if (this.stopping || !this.started) return;
      this.opts.log.error('processor thread exited; starting it again', { topic: this.name, code });
      this.base = this.sum(this.base, this.last);
      this.last = noStats();
      this.restart = setTimeout(() => this.start().catch((e: unknown) => this.opts.log.error('processor thread did not start', { topic: this.name, err: e as Error })), RESTART_MS);
    });
    await ready;
    await this.ask('start');
    this.started = true;
  }

  /** Reads the known pairs again (after a fixture load), so the next message finds a new pair. */
  refreshKnown(): Promise<void> {
    return this.worker ? this.ask('refresh-known') : Promise.resolve();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restart);
    const worker = this.worker;
    if (!worker) return;
    try {
      await this.ask('stop');
    } catch (e) {
      this.opts.log.error('processor thread did not stop cleanly', { topic: this.name, err: e as Error });
    } finally {
      await worker.terminate();
    }
  }

  private ask(type: ThreadRequest['type']): Promise<void> {
    const worker = this.worker;
    if (!worker) return Promise.reject(new Error('processor thread not running'));
    const id = ++this.seq;
    return new Promise<void>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      worker.postMessage({ type, id } satisfies ThreadRequest);
    });
  }

  private received(r: ThreadReport): void {
    switch (r.type) {
      case 'done': {
        const w = this.waiting.get(r.id);
        this.waiting.delete(r.id);
        if (r.error === undefined) w?.resolve();
        else w?.reject(new Error(r.error));
        break;
      }
      case 'stats':
        for (const m of r.mids) this.opts.rates.observe(m.pair, m.mid, m.ts, m.exchange);
        this.counted(r.stats);
        break;
      case 'log':
        (r.name ? this.opts.log.child(r.name) : this.opts.log)[r.level](r.msg, r.fields);
        break;
      case 'batch':
        this.counted(r.stats);
        this.opts.onBatch?.({ firstBatchAt: r.firstBatchAt, endedAt: r.endedAt, stats: this.stats });
        break;
    }
  }

  private counted(stats: ConsumerStats): void {
    this.last = stats;
    Object.assign(this.stats, this.sum(this.base, stats));
  }

  private sum(a: ConsumerStats, b: ConsumerStats): ConsumerStats {
    const skipReasons = { ...a.skipReasons };
    for (const [k, v] of Object.entries(b.skipReasons)) skipReasons[k] = (skipReasons[k] ?? 0) + v;
    const recentDeadLetters = a.recentDeadLetters.concat(b.recentDeadLetters).slice(-RECENT_DEAD_LETTERS);
    return { ok: a.ok + b.ok, deadLettered: a.deadLettered + b.deadLettered, skipped: a.skipped + b.skipped, flushes: a.flushes + b.flushes, skipReasons, readsHeldBack: a.readsHeldBack + b.readsHeldBack, recentDeadLetters };
  }
}
