// The producer of mm.reported: what the push endpoint (api/resources/reported-metrics/push.ts)
// has checked goes to Kafka here, for the reported-metrics processor to write.
import type { Kafka, Message, Producer } from 'kafkajs';
import { MAX_ITEMS_PER_MESSAGE, type ReportedBatch } from '../domain/market-makers/reported.ts';
import type { Config } from '../lib/config.ts';
import { createProducer, sendInParts, topicName, type BaseTopic } from '../lib/kafka.ts';
import { frameHeader } from '../lib/schema-registry.ts';
import type { ReportedMessage } from '../schemas/index.ts';

export interface ReportedMetricsPublisher {
  /**
   * Produces the items to mm.reported with `pushedAt` as each message's timestamp (the
   * processor's push time); resolves once the broker acknowledged every one (acks -1).
   */
  publish(items: readonly ReportedMessage[], pushedAt: number): Promise<void>;
  close(): Promise<void>;
}

/** A send the broker has not acknowledged by then fails the request (500: retry later); the push can be repeated as it is. */
const SEND_TIMEOUT_MS = 30_000;

export class KafkaReportedPublisher implements ReportedMetricsPublisher {
  private readonly header: Buffer;

  constructor(
    private readonly producer: Producer,
    schemaId: number,
    private readonly topic: string,
  ) {
    this.header = frameHeader(schemaId);
  }

  async publish(items: readonly ReportedMessage[], pushedAt: number): Promise<void> {
    const timestamp = String(pushedAt);
    // One message per organization, asset, exchange and pair (its items in `more`, at most
    // MAX_ITEMS_PER_MESSAGE a message), all under the key's Kafka key: the key's messages
    // keep one partition and their order, and the producer and the processor handle a few
    // messages a request instead of one per item.
    const byKey = new Map<string, ReportedMessage[]>();
    for (const m of items) {
      const k = `${m.organization}\u0000${m.asset}\u0000${m.exchange}\u0000${m.pair}`;
      const list = byKey.get(k);
      if (list) list.push(m);
      else byKey.set(k, [m]);
    }
    const messages: Message[] = [];
    for (const list of byKey.values()) {
      const key = `${list[0]!.organization}:${list[0]!.exchange}:${list[0]!.pair}`;
      for (let i = 0; i < list.length; i += MAX_ITEMS_PER_MESSAGE) {
        const [first, ...rest] = list.slice(i, i + MAX_ITEMS_PER_MESSAGE);
        const value: ReportedBatch = rest.length === 0 ? first! : { ...first!, more: rest.map((m) => ({ metric: m.metric, interval: m.interval, timestamp: m.timestamp, value: m.value })) };
        // Framed with the topic's registered schema by hand: every item was checked above, field
        // by field, more strictly than that schema, so the client's own validation would only
        // repeat it; the processor checks each item again anyway.
        messages.push({ key, value: Buffer.concat([this.header, Buffer.from(JSON.stringify(value))]), timestamp });
      }
    }
    await sendInParts(this.producer, this.topic, messages, { send: (part) => this.send(part) });
  }

  private async send(messages: Message[]): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`mm.reported: the broker did not acknowledge ${messages.length} messages within ${SEND_TIMEOUT_MS / 1000} s`)), SEND_TIMEOUT_MS);
    });
    try {
      await Promise.race([this.producer.send({ topic: this.topic, acks: -1, messages }), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  close(): Promise<void> {
    return this.producer.disconnect();
  }
}

/** The service's publisher: one idempotent producer, connected here, disconnected by close(). */
export async function connectReportedPublisher(
  kafka: Kafka,
  config: Pick<Config, 'topicPrefix'>,
  registry: { schemaIds: ReadonlyMap<BaseTopic, number> },
): Promise<ReportedMetricsPublisher> {
  const schemaId = registry.schemaIds.get('mm.reported');
  if (schemaId === undefined) throw new Error('the schema of mm.reported is not registered');
  // Idempotent, as every producer (lib/kafka.ts): a send kafkajs retries is written once;
  // requests' sends take turns, one produce request in flight. A send that gives up fails
  // its request, which may be sent again as it is: the copy carries the same key and push
  // time, so the processor writes the same row again and nothing changes.
  const producer = createProducer(kafka);
  await producer.connect();
  return new KafkaReportedPublisher(producer, schemaId, topicName(config, 'mm.reported'));
}
