// What the main thread and a processor's worker thread (processors/market/threaded.ts and
// thread.ts) tell each other: the thread's start data, the main thread's requests and the
// thread's reports.
import type { MessagePort } from 'node:worker_threads';
import type { Config } from '../../lib/config.ts';
import type { QuoteMid } from '../../domain/market/prices.ts';
import type { BaseTopic, ConsumerStats } from '../../lib/kafka.ts';

export interface ThreadInit {
  processor: 'orderbook';
  config: Config;
  schemaIds: Map<BaseTopic, number>;
  flushIntervalMs?: number;
  /** Whether written minutes are told to the event stream (market.minutes). */
  minuteEvents: boolean;
  faults: { spec: string[]; counters: SharedArrayBuffer };
  ch: MessagePort;
  /** Report every batch's end (bench/ingest.ts times the processor by them). */
  reportBatches: boolean;
}

export type ThreadRequest = { type: 'start' | 'stop' | 'refresh-known'; id: number };
export type ThreadReport =
  | { type: 'ready' }
  | { type: 'done'; id: number; error?: string }
  | { type: 'stats'; stats: ConsumerStats; mids: QuoteMid[] }
  | { type: 'batch'; firstBatchAt: number; endedAt: number; stats: ConsumerStats }
  | { type: 'log'; level: 'debug' | 'info' | 'warn' | 'error'; name: string; msg: string; fields?: Record<string, unknown> };

/** The end of a batch in the thread: when the first batch with messages began, when this one ended (epoch ms), and the stats after it. */
export type BatchReport = Omit<Extract<ThreadReport, { type: 'batch' }>, 'type'>;
