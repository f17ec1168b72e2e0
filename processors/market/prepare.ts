// The steps of a market-data pipeline before its minute windows (decode, validate, event
// time, compute), run for a whole batch in a helper thread while the consumer's thread
// reads the next fetch: parsing the JSON costs as much as consuming it, so the two run on
// both cores instead of one after the other (docs/architecture.md). What comes back is
// packed (the spec's Packing), with the quote rates the helper observed. Anything but a
// valid message of the processor's own schema (bad JSON, a schema error, another schema
// id) is left to the consumer's thread, which handles it as it always does: its
// dead-letter reason is the same, wherever the helper was. The helper's rate table observes
// only the known pairs' mids, as here, where an unknown pair is dead-lettered before
// compute: it is told the known pairs whenever they were loaded again.
import type { KafkaMessage } from 'kafkajs';
import { Worker } from 'node:worker_threads';
import { QuoteRates, type QuoteMid } from '../../domain/market/prices.ts';
import type { BaseTopic } from '../../lib/kafka.ts';
import type { Outcome } from '../shell/outcome.ts';

/** Each message's state in a PreparedBatch. */
export const PREPARED = { computed: 0, notComputed: 1, here: 2 } as const;

export interface PreparedBatch {
  /** Per message: computed (its packed value in `values`), not computed (compute's outcome in `outcomes`), or to be handled here. */
  kinds: Uint8Array;
  outcomes: [number, Outcome<unknown>][];
  exchanges: string[];
  pairs: string[];
  ts: Float64Array;
  /** `width` numbers a message. */
  values: Float64Array;
  /** Mids the helper's rate table kept, in order (QuoteRates.observe). */
  mids: QuoteMid[];
}

export interface PrepareInit {
  topic: BaseTopic;
  ownSchemaId: number | undefined;
}

export interface PrepareRequest {
  id: number;
  /** Every known pair's key (KnownPairs.key), when they changed since the last request. */
  known?: string[];
  bytes: ArrayBuffer;
  /** Where each message's value ends in `bytes` (a null value: where the previous one ended). */
  ends: Uint32Array;
}

export type PrepareReply = { id: number; batch: PreparedBatch } | { id: number; error: string } | { ready: true };

/** A rate table that keeps what it observed until taken, for another thread's table. */
export class ObservedRates extends QuoteRates {
  private observed: QuoteMid[] = [];

  override observe(pair: string, mid: number, ts: number, exchange = ''): boolean {
    if (!super.observe(pair, mid, ts, exchange)) return false;
    this.observed.push({ exchange, pair, ts, mid });
    return true;
  }

  take(): QuoteMid[] {
    const out = this.observed;
    this.observed = [];
    return out;
  }
}

const ENTRY = new URL('./prepare-thread.mjs', import.meta.url);

/** The consumer's side of the helper thread: started by open() (at the pipeline's load), again at a batch after it died. */
export class Preparer {
  private worker: Worker | undefined;
  private seq = 0;
  private readonly waiting = new Map<number, { resolve: (b: PreparedBatch) => void; reject: (e: Error) => void }>();
  /** Called when the helper is gone (a next one is started at the next batch). */
  onRestart: (() => void) | undefined;

  constructor(
    private readonly init: PrepareInit,
    /** Told every mid the helper's rate table kept, in order, before the batch is handled. */
    private readonly observe: (mid: QuoteMid) => void,
  ) {}

  /** `known`: the known pairs' keys, when they changed since the last call. */
  prepare(messages: readonly KafkaMessage[], known?: string[]): Promise<PreparedBatch> {
    const worker = (this.worker ??= this.start());
    let total = 0;
    for (const m of messages) total += m.value?.length ?? 0;
    // A value is a view of kafkajs's whole fetch, which a message would copy whole: the
    // values are copied into a buffer of their own, handed over without a copy.
    const bytes = new ArrayBuffer(total);
    const into = new Uint8Array(bytes);
    const ends = new Uint32Array(messages.length);
    let at = 0;
    for (let i = 0; i < messages.length; i++) {
      const v = messages[i]!.value;
      if (v) {
        into.set(v, at);
        at += v.length;
      }
      ends[i] = at;
    }
    const id = ++this.seq;
    return new Promise<PreparedBatch>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      worker.postMessage({ id, bytes, ends, known } satisfies PrepareRequest, [bytes, ends.buffer]);
    });
  }

  /** Starts the helper and waits until it is ready: its start takes long enough to count in a batch's time. */
  async open(): Promise<void> {
    if (this.worker) return;
    const worker = this.start();
    this.worker = worker;
    await new Promise<void>((resolve, reject) => {
      const ready = (r: PrepareReply) => {
        if ('ready' in r) {
          worker.off('message', ready);
          worker.off('error', reject);
          resolve();
        }
      };
      worker.on('message', ready);
      worker.once('error', reject);
    });
  }

  private start(): Worker {
    const worker = new Worker(ENTRY, { workerData: this.init });
    // Its work is always awaited by a batch, which keeps the consumer's thread alive.
    worker.unref();
    worker.on('message', (r: PrepareReply) => {
      if ('ready' in r) return;
      const w = this.waiting.get(r.id);
      this.waiting.delete(r.id);
      if ('batch' in r) {
        for (const m of r.batch.mids) this.observe(m);
        w?.resolve(r.batch);
      }
      else w?.reject(new Error(r.error));
    });
    const gone = (e: Error) => {
      if (this.worker === worker) {
        this.worker = undefined;
        // A new helper starts without the known pairs.
        this.onRestart?.();
      }
      for (const w of this.waiting.values()) w.reject(e);
      this.waiting.clear();
    };
    worker.on('error', gone);
    worker.on('exit', (code) => gone(new Error(`prepare thread exited (${code})`)));
    return worker;
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }
}
