// The processors' thread: the three Kafka processors run in a worker thread of the service
// process, with an event loop and a heap of their own. On one loop, an API request waited
// behind the processors' batches, and every full garbage collection of a heap holding the
// processors' state paused both (docs/benchmarks.md). The embedded engine is reachable
// from the thread as from the main one: same data folder, connections of its own.
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { openClickHouse, type ClickHouse } from '../lib/clickhouse.ts';
import type { Config } from '../lib/config.ts';
import { createKafka } from '../lib/kafka.ts';
import type { Logger } from '../lib/log.ts';
import { ReferenceRepository } from '../lib/repositories/reference.ts';
import { derivativesConsumer } from '../processors/derivatives/processor.ts';
import { QuoteRates } from '../processors/metrics/quote-rates.ts';
import { orderBookConsumer } from '../processors/orderbook/processor.ts';
import { KnownPairs } from '../processors/reference-cache.ts';
import type { BatchConsumer, ConsumerStats } from '../processors/shell/batch-consumer.ts';
import { Faults } from '../processors/shell/faults.ts';
import { tradesConsumer } from '../processors/trades/processor.ts';

/**
 * Ingestion's connections: below the API in priority, so the writes and rollups of a
 * minute close pause between blocks while a request's query runs, rather than share the
 * two cores with it. Measured with a query looping beside the spread uptime answer: 133 ms
 * at the same priority, 112 ms with the loop below it. bench:api while ingesting, one run
 * before and one after: spread uptime p95 263 -> 241 ms, with ingestion keeping up.
 */
export const INGEST_CLICKHOUSE = { priority: 2 };

interface ThreadInit {
  processorsThread: true;
  config: Config;
  flushMs: number;
}

type ToThread = { type: 'refresh-known'; id: number } | { type: 'stop' };

type LogLevel = 'debug' | 'info' | 'warn' | 'error';

type FromThread =
  | { type: 'started' }
  | { type: 'failed'; error: Error }
  | { type: 'stats'; stats: Record<string, ConsumerStats> }
  | { type: 'log'; level: LogLevel; name: string; msg: string; fields?: Record<string, unknown> }
  | { type: 'refreshed'; id: number; error?: Error }
  | { type: 'stopped' };

/** The main thread's handle on the processors' thread. */
export interface ProcessorsThread {
  /** Messages handled per topic, as of at most 250 ms ago. */
  stats(): Record<string, ConsumerStats>;
  /** Reloads the pairs the processors accept (after a fixture load). */
  refreshKnownPairs(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the thread and resolves once its consumers have joined their groups. */
export function startProcessorsThread(config: Config, log: Logger, flushMs: number): Promise<ProcessorsThread> {
  const init: ThreadInit = { processorsThread: true, config, flushMs };
  const url = new URL(import.meta.url);
  // Run from TypeScript sources, the thread must register tsx itself: on Node 20 a worker
  // gets neither the main thread's loader nor one from an --import flag.
  const worker = url.pathname.endsWith('.ts')
    ? new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); });`, { eval: true, workerData: init })
    : new Worker(url, { workerData: init });
  let stats: Record<string, ConsumerStats> = {};
  let seq = 0;
  const refreshing = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  let stopping = false;
  let stopped: () => void = () => {};
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return new Promise<ProcessorsThread>((resolve, reject) => {
    let started = false;
    worker.on('message', (m: FromThread) => {
      switch (m.type) {
        case 'log':
          log.child(m.name)[m.level](m.msg, m.fields);
          break;
        case 'stats':
          stats = m.stats;
          break;
        case 'refreshed': {
          const r = refreshing.get(m.id);
          refreshing.delete(m.id);
          if (m.error) r?.reject(m.error);
          else r?.resolve();
          break;
        }
        case 'started':
          started = true;
          resolve(handle);
          break;
        case 'failed':
          reject(m.error);
          break;
        case 'stopped':
          stopped();
          break;
      }
    });
    worker.on('error', (e) => {
      if (!started) return reject(e);
      // As when they ran on the main thread: a processor that dies takes the service down,
      // and whatever supervises it starts it again (offsets and rows are exactly-once).
      log.error('the processors thread failed', { err: e });
      process.exit(1);
    });
    worker.on('exit', (code) => {
      if (!started) reject(new Error(`the processors thread exited (${code}) before starting`));
      else if (!stopping) {
        log.error('the processors thread exited', { code });
        process.exit(1);
      }
    });
    const handle: ProcessorsThread = {
      stats: () => stats,
      refreshKnownPairs: () =>
        new Promise<void>((res, rej) => {
          const id = ++seq;
          refreshing.set(id, { resolve: res, reject: rej });
          worker.postMessage({ type: 'refresh-known', id } satisfies ToThread);
        }),
      async stop() {
        if (stopping) return exited;
        stopping = true;
        const done = new Promise<void>((res) => (stopped = res));
        worker.postMessage({ type: 'stop' } satisfies ToThread);
        await Promise.race([done, exited]);
        await worker.terminate();
      },
    };
  });
}

/** A Logger whose lines the main thread writes, with its own logger and level. */
function forwardingLogger(port: NonNullable<typeof parentPort>, name: string): Logger {
  const emit = (level: LogLevel) => (msg: string, fields?: Record<string, unknown>) => {
    // Errors survive the structured clone; anything else uncloneable is written as text.
    let safe = fields;
    try {
      structuredClone(fields);
    } catch {
      safe = Object.fromEntries(Object.entries(fields ?? {}).map(([k, v]) => [k, String(v)]));
    }
    port.postMessage({ type: 'log', level, name, msg, fields: safe } satisfies FromThread);
  };
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error'), child: (child) => forwardingLogger(port, `${name}.${child}`) };
}

async function runThread(port: NonNullable<typeof parentPort>, init: ThreadInit): Promise<void> {
  const { config } = init;
  const log = forwardingLogger(port, 'processors');
  const kafka = createKafka(config, 'mm-service', log.child('kafka'));
  const connections: ClickHouse[] = [];
  const open = (name: string) => {
    const ch = openClickHouse(config, name, INGEST_CLICKHOUSE);
    connections.push(ch);
    return ch;
  };
  const known = new KnownPairs(new ReferenceRepository(open('ingest')));
  const consumers: BatchConsumer[] = [];
  try {
    // One rate table for all: trades are converted with the mids the books report.
    const rates = new QuoteRates();
    const faults = new Faults(config.faults);
    for (const [name, make] of [['orderbook', orderBookConsumer], ['trades', tradesConsumer], ['derivatives', derivativesConsumer]] as const) {
      // A connection each: the embedded engine runs one statement at a time per connection.
      const consumer = make(kafka, { config, ch: open(`ingest-${name}`), known, rates, log, faults }, { flushIntervalMs: init.flushMs });
      await consumer.start();
      consumers.push(consumer);
    }
  } catch (e) {
    port.postMessage({ type: 'failed', error: e as Error } satisfies FromThread);
    return;
  }
  const publish = () => port.postMessage({ type: 'stats', stats: Object.fromEntries(consumers.map((c) => [c.name, { ...c.stats, skipReasons: { ...c.stats.skipReasons } }])) } satisfies FromThread);
  publish();
  const timer = setInterval(publish, 250);
  port.on('message', (m: ToThread) => {
    if (m.type === 'refresh-known') {
      known.refresh().then(
        () => port.postMessage({ type: 'refreshed', id: m.id } satisfies FromThread),
        (e: unknown) => port.postMessage({ type: 'refreshed', id: m.id, error: e as Error } satisfies FromThread),
      );
    } else if (m.type === 'stop') {
      void (async () => {
        clearInterval(timer);
        for (const c of consumers) await c.stop();
        publish();
        await Promise.allSettled(connections.map((c) => c.close()));
        port.postMessage({ type: 'stopped' } satisfies FromThread);
      })();
    }
  });
  port.postMessage({ type: 'started' } satisfies FromThread);
}

if (!isMainThread && parentPort && (workerData as Partial<ThreadInit> | undefined)?.processorsThread) {
  await runThread(parentPort, workerData as ThreadInit);
}
