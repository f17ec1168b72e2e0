// The body of a market-data processor run in a worker thread (processors/market/threaded.ts
// starts it): the processor built by its own factory, as on the main thread, with its own
// Kafka clients and registry client, its ClickHouse statements relayed to the main thread,
// the known pairs read through them, the fault counters shared with the process, and the
// quote rates it observes sent to the main thread (the trades convert with them).
import { parentPort, workerData } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import type { Kafka } from 'kafkajs';
import { relayedClickHouse } from '../../lib/clickhouse-relay.ts';
import { Faults } from '../../lib/faults.ts';
import { createKafka, createProducer, topicName } from '../../lib/kafka.ts';
import type { Logger } from '../../lib/log.ts';
import { frameHeader, openSchemaRegistry } from '../../lib/schema-registry.ts';
import { ReferenceRepository } from '../../domain/reference/repository.ts';
import { QuoteMidRepository } from '../../domain/market/repositories/quote-mids.ts';
import { orderBookConsumer } from '../orderbook/processor.ts';
import { KnownPairs } from '../reference-cache.ts';
import { MinuteEvents } from './minute-events.ts';
import { ObservedRates } from './prepare.ts';
import type { ThreadInit, ThreadReport, ThreadRequest } from './thread-messages.ts';

/** How often the stats and newly observed quote rates go to the main thread. */
const REPORT_MS = 250;

const FACTORIES = { orderbook: orderBookConsumer } as const;

const init = workerData as ThreadInit;
const port = parentPort!;
const post = (r: ThreadReport) => port.postMessage(r);
/** Lines go to the main thread's logger, at its level and under its name. */
function relayedLogger(name: string): Logger {
  const emit =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (msg: string, fields?: Record<string, unknown>): void => {
      try {
        post({ type: 'log', level, name, msg, fields });
      } catch {
        post({ type: 'log', level, name, msg, fields: fields && JSON.parse(JSON.stringify(fields, (_k, v: unknown) => (v instanceof Error ? v.message : v))) });
      }
    };
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error'), child: (child) => relayedLogger(name ? `${name}.${child}` : child) };
}
const log = relayedLogger('');
const now = Date.now;
const ch = relayedClickHouse(init.ch);
const rates = new ObservedRates();
// Where the last run left off: the messages read again are converted as the first time.
rates.load(await new QuoteMidRepository(ch, now).recent(rates.keeps));
const known = new KnownPairs(new ReferenceRepository(ch), now);
const faults = new Faults(init.faults.spec, ch, init.faults.counters);
const registry = await openSchemaRegistry(init.config, 'mm-service');

/** The start of the first batch with messages, in the process's time (epoch ms). */
let firstBatchAt = 0;
const clockTime = () => performance.timeOrigin + performance.now();
function clockingFirstBatch(kafka: Kafka): Kafka {
  const wrapped = Object.create(kafka) as Kafka;
  wrapped.consumer = (config) => {
    const consumer = kafka.consumer(config);
    const run = consumer.run.bind(consumer);
    consumer.run = (cfg) => {
      const eachBatch = cfg?.eachBatch;
      if (!eachBatch) return run(cfg);
      return run({
        ...cfg,
        eachBatch: async (payload) => {
          if (firstBatchAt === 0 && payload.batch.messages.length > 0) firstBatchAt = clockTime();
          await eachBatch(payload);
        },
      });
    };
    return consumer;
  };
  return wrapped;
}

const kafka = createKafka(init.config, 'mm-service', log.child('kafka'));
const producer = init.minuteEvents ? createProducer(kafka) : undefined;
await producer?.connect();
const minuteEvents = producer && new MinuteEvents(producer, topicName(init.config, 'market.minutes'), frameHeader(init.schemaIds.get('market.minutes')!), now);
const processor = FACTORIES[init.processor](
  init.reportBatches ? clockingFirstBatch(kafka) : kafka,
  { config: init.config, ch, registry: { client: registry.client, schemaIds: init.schemaIds }, known, rates, log, faults, now, minuteEvents, prepareInHelper: true },
  {
    flushIntervalMs: init.flushIntervalMs,
    onBatchHandled: init.reportBatches ? () => post({ type: 'batch', firstBatchAt, endedAt: clockTime(), stats: processor.stats }) : undefined,
  },
);

const report = () => {
  post({ type: 'stats', stats: processor.stats, mids: rates.take() });
};
const timer = setInterval(report, REPORT_MS);

port.on('message', (req: ThreadRequest) => {
  const answer = (p: Promise<unknown>) =>
    p.then(
      () => post({ type: 'done', id: req.id }),
      (e: unknown) => post({ type: 'done', id: req.id, error: (e as Error).message }),
    );
  switch (req.type) {
    case 'start':
      answer(processor.start());
      break;
    case 'refresh-known':
      answer(known.refresh());
      break;
    case 'stop':
      clearInterval(timer);
      answer(
        (async () => {
          await processor.stop();
          await producer?.disconnect();
          report();
        })(),
      );
      break;
  }
});
post({ type: 'ready' });
