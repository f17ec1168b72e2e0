// Kafka clients and the topic catalogue of addendum section 1. Topic names carry the
// configured prefix, which is also how test runs keep to their own topics.
import { Kafka, logLevel as KafkaLogLevel, Partitioners, type Admin, type ITopicConfig, type LogEntry, type Message, type Producer, type ProducerBatch, type ProducerRecord, type RecordMetadata } from 'kafkajs';
import type { Config } from './config.ts';
import type { Logger } from './log.ts';
import { DAY_MS } from './time.ts';
import { patchRequestQueue } from './kafkajs-request-queue.ts';

patchRequestQueue();

export const BASE_TOPICS = ['md.orderbook', 'md.trades', 'md.derivatives', 'mm.orders', 'mm.fills', 'mm.reported', 'targets.events', 'loans.events', 'rfq.events', 'market.minutes'] as const;
export type BaseTopic = (typeof BASE_TOPICS)[number];

/** Partitions and retention per topic. Market data is keyed by exchange:pair, so a pair's
 * snapshots stay ordered within one partition; three partitions let two cores share work. */
const TOPIC_SETTINGS: Record<BaseTopic, { partitions: number; retentionMs: number }> = {
  'md.orderbook': { partitions: 3, retentionMs: 7 * DAY_MS },
  'md.trades': { partitions: 3, retentionMs: 7 * DAY_MS },
  'md.derivatives': { partitions: 3, retentionMs: 7 * DAY_MS },
  'mm.orders': { partitions: 3, retentionMs: 7 * DAY_MS },
  'mm.fills': { partitions: 3, retentionMs: 30 * DAY_MS },
  'mm.reported': { partitions: 3, retentionMs: 30 * DAY_MS },
  'targets.events': { partitions: 1, retentionMs: 30 * DAY_MS },
  'loans.events': { partitions: 1, retentionMs: 30 * DAY_MS },
  'rfq.events': { partitions: 1, retentionMs: 30 * DAY_MS },
  // Written minutes for the event stream (api/stream/): read back an hour at most.
  'market.minutes': { partitions: 3, retentionMs: DAY_MS },
};
const DLQ_RETENTION_MS = 30 * DAY_MS;

export function topicName(config: Pick<Config, 'topicPrefix'>, topic: BaseTopic): string {
  return config.topicPrefix + topic;
}

export function dlqTopicName(config: Pick<Config, 'topicPrefix'>, topic: BaseTopic): string {
  return `${config.topicPrefix}${topic}.dlq`;
}

export function topicConfigs(config: Pick<Config, 'topicPrefix'>): ITopicConfig[] {
  return BASE_TOPICS.flatMap((t) => [
    {
      topic: topicName(config, t),
      numPartitions: TOPIC_SETTINGS[t].partitions,
      replicationFactor: 1,
      configEntries: [{ name: 'retention.ms', value: String(TOPIC_SETTINGS[t].retentionMs) }],
    },
    {
      topic: dlqTopicName(config, t),
      numPartitions: 1,
      replicationFactor: 1,
      configEntries: [{ name: 'retention.ms', value: String(DLQ_RETENTION_MS) }],
    },
  ]);
}

export function createKafka(config: Pick<Config, 'kafkaBrokers'>, clientId: string, log: Logger): Kafka {
  return new Kafka({
    clientId,
    brokers: config.kafkaBrokers,
    logLevel: KafkaLogLevel.WARN,
    logCreator: () => (entry: LogEntry) => {
      const { message, ...rest } = entry.log;
      const fields = { logger: entry.namespace, ...rest };
      // Per-request protocol errors ("Response ...") are retried by kafkajs itself; what
      // matters (crashes, give-ups) is logged by the consumer and producer.
      if (message.startsWith('Response ')) log.debug(message, fields);
      // A producer's retries are bounded on purpose (see createProducer), which kafkajs warns of at each start.
      else if (message.startsWith('Limiting retries for the idempotent producer')) log.debug(message, fields);
      else if (entry.level <= KafkaLogLevel.ERROR) log.error(message, fields);
      else log.warn(message, fields);
    },
    retry: { initialRetryTime: 200, retries: 8 },
  });
}

/** Creates every topic and its .dlq twin that does not exist yet, and waits for their leaders; returns the created ones. */
export async function ensureTopics(admin: Admin, config: Pick<Config, 'topicPrefix'>, timeoutMs = 30_000): Promise<string[]> {
  const existing = new Set(await admin.listTopics());
  const missing = topicConfigs(config).filter((t) => !existing.has(t.topic));
  if (missing.length === 0) return [];
  await admin.createTopics({ topics: missing, waitForLeaders: false });
  await waitForLeaders(admin, missing.map((t) => t.topic), timeoutMs);
  return missing.map((t) => t.topic);
}

/** What the broker answers about a topic created a moment ago, before its leaders are known everywhere. */
const SETTLING = new Set(['UNKNOWN_TOPIC_OR_PARTITION', 'LEADER_NOT_AVAILABLE']);

/**
 * Waits until every partition of the topics has a leader. kafkajs' own wait (createTopics
 * with waitForLeaders) gives up when the broker answers that it does not host a topic it
 * has just created, which a KRaft broker did for two services starting at once.
 */
async function waitForLeaders(admin: Admin, topics: string[], timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  const wanted = new Set(topics);
  for (;;) {
    try {
      // Every topic's metadata: asked by name, a topic the broker does not know yet is an
      // error that kafkajs logs as one, at every start.
      const found = (await admin.fetchTopicMetadata()).topics.filter((t) => wanted.has(t.name));
      if (found.length === topics.length && found.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0))) return;
    } catch (e) {
      const type = (e as { type?: string; originalError?: { type?: string } }).type ?? (e as { originalError?: { type?: string } }).originalError?.type;
      if (!type || !SETTLING.has(type)) throw e;
    }
    if (Date.now() > end) throw new Error(`Kafka: topics ${topics.join(', ')} still without a leader after ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A dead letter as the admin status lists it: why, and where the message lies in its topic. */
export interface DeadLetterNote {
  reason: string;
  key: string | null;
  partition: number;
  offset: string;
  /** When the message was produced (its Kafka timestamp). */
  produced_at: string;
}

/** Dead letters a consumer's status lists: the last ones sent (the dead-letter topic holds them all). */
export const RECENT_DEAD_LETTERS = 20;

/** What a consumer counts of its messages, as the admin status shows it. */
export interface ConsumerStats {
  ok: number;
  deadLettered: number;
  skipped: number;
  flushes: number;
  skipReasons: Record<string, number>;
  /** Times reading a partition stopped while the processor held as many of its messages, waiting for their quote rate, as it may (Pipeline.full). */
  readsHeldBack: number;
  /** The last RECENT_DEAD_LETTERS dead letters sent, oldest first. */
  recentDeadLetters: DeadLetterNote[];
}

export const noStats = (): ConsumerStats => ({ ok: 0, deadLettered: 0, skipped: 0, flushes: 0, skipReasons: {}, readsHeldBack: 0, recentDeadLetters: [] });

/** Bytes of keys and values per send: a send is one batch per partition, and the broker takes at most 1 MiB (message.max.bytes). */
export const SEND_BYTES = 512 * 1024;

const sizeOf = (m: Message) => {
  const v = m.value;
  const k = m.key;
  return (typeof v === 'string' ? Buffer.byteLength(v) : (v?.length ?? 0)) + (typeof k === 'string' ? Buffer.byteLength(k) : (k?.length ?? 0)) + 64;
};

/** Sends messages in parts the broker takes, one part after the other (their order kept). */
export async function sendInParts(producer: Producer, topic: string, messages: readonly Message[], opts: { acks?: number; send?: (part: Message[]) => Promise<unknown> } = {}): Promise<void> {
  const send = opts.send ?? ((part: Message[]) => producer.send({ topic, acks: opts.acks ?? -1, messages: part }));
  let part: Message[] = [];
  let bytes = 0;
  for (const m of messages) {
    const size = sizeOf(m);
    if (part.length > 0 && bytes + size > SEND_BYTES) {
      await send(part);
      part = [];
      bytes = 0;
    }
    part.push(m);
    bytes += size;
  }
  if (part.length > 0) await send(part);
}

/**
 * The one way the project makes a producer. Idempotent: each batch carries the producer's id
 * and a sequence number per partition, so when kafkajs sends a batch again (a lost
 * acknowledgement, a leader change, a restarted broker) the broker keeps the copy it already
 * wrote and each message is written once. kafkajs then requires acks from all replicas and
 * keeps one produce request in flight per broker.
 *
 * Its retries are the client's (createKafka: about 50 s), not kafkajs' unbounded default, so a
 * send on a broker that stays away fails its caller and a stopping service is not held up.
 */
export function createProducer(kafka: Kafka): Producer {
  return new IdempotentProducer(() =>
    kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner }),
  );
}

/**
 * Two rules kafkajs' idempotent producer leaves to its user. When a produce request fails,
 * kafkajs takes its sequence numbers back, although the broker may have written the batch:
 * - a send started meanwhile would take those numbers for other messages, so sends go one
 *   after the other, each with its retries done before the next starts;
 * - after a send that gave up, the broker would refuse the next batches as out of order, or
 *   keep one of the same length as the duplicate of the lost one, so the next send goes
 *   through a new producer, with a new id.
 */
class IdempotentProducer implements Producer {
  private current: Producer;
  private failed = false;
  private closed = false;
  private tail: Promise<unknown> = Promise.resolve();

  constructor(private readonly make: () => Producer) {
    this.current = make();
  }

  get events(): Producer['events'] {
    return this.current.events;
  }

  connect(): Promise<void> {
    this.closed = false;
    return this.current.connect();
  }

  disconnect(): Promise<void> {
    this.closed = true;
    return this.current.disconnect();
  }

  isIdempotent(): boolean {
    return true;
  }

  logger(): ReturnType<Producer['logger']> {
    return this.current.logger();
  }

  /** Listeners belong to the producer in use when they are added (the project adds none). */
  on: Producer['on'] = ((eventName: Parameters<Producer['on']>[0], listener: (event: never) => void) =>
    (this.current.on as (e: typeof eventName, l: typeof listener) => ReturnType<Producer['on']>)(eventName, listener)) as Producer['on'];

  transaction(): ReturnType<Producer['transaction']> {
    return Promise.reject(new Error("the project's producers are idempotent, not transactional"));
  }

  send(record: ProducerRecord): Promise<RecordMetadata[]> {
    return this.inTurn((p) => p.send(record));
  }

  sendBatch(batch: ProducerBatch): Promise<RecordMetadata[]> {
    return this.inTurn((p) => p.sendBatch(batch));
  }

  private inTurn(op: (p: Producer) => Promise<RecordMetadata[]>): Promise<RecordMetadata[]> {
    const run = this.tail.then(async () => {
      if (this.failed && !this.closed) await this.renew();
      try {
        return await op(this.current);
      } catch (e) {
        this.failed = true;
        throw e;
      }
    });
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async renew(): Promise<void> {
    const next = this.make();
    try {
      await next.connect();
    } catch (e) {
      await next.disconnect().catch(() => undefined);
      throw e;
    }
    const old = this.current;
    this.current = next;
    this.failed = false;
    await old.disconnect().catch(() => undefined);
  }
}
