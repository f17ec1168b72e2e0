// Sends the synthetic market to Kafka once a second per pair until stopped, as
// Confluent-framed JSON: each value carries the registry id of its topic's schema.
import { Partitioners, type Kafka } from 'kafkajs';
import type { Config } from '../../lib/config.ts';
import { topicName } from '../../lib/kafka.ts';
import type { Logger } from '../../lib/log.ts';
import { topicSchemaIds, type Registry } from '../../lib/schema-registry.ts';
import { SyntheticMarket, type SyntheticPair } from './market.ts';

export interface RunningFeed {
  stop(): Promise<void>;
  sent(): number;
}

export async function startSyntheticFeed(
  kafka: Kafka,
  registry: Registry,
  config: Pick<Config, 'topicPrefix'>,
  pairs: SyntheticPair[],
  log: Logger,
  intervalMs = 1000,
): Promise<RunningFeed> {
  const market = new SyntheticMarket(pairs);
  const ids = await topicSchemaIds(registry, config, ['md.orderbook', 'md.trades', 'md.derivatives'] as const);
  const encode = (topic: 'md.orderbook' | 'md.trades' | 'md.derivatives', messages: { exchange: string; pair: string }[]) =>
    Promise.all(messages.map(async (m) => ({ key: `${m.exchange}:${m.pair}`, value: await registry.client.encode(ids.get(topic)!, m) })));
  const producer = kafka.producer({ allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  let sent = 0;
  let busy = false;
  const tick = async () => {
    if (busy) return; // a slow broker skips a tick rather than piling up sends
    busy = true;
    try {
      const t = market.tick(Date.now(), intervalMs);
      await producer.sendBatch({
        topicMessages: [
          { topic: topicName(config, 'md.orderbook'), messages: await encode('md.orderbook', t.books) },
          { topic: topicName(config, 'md.trades'), messages: await encode('md.trades', t.trades) },
          { topic: topicName(config, 'md.derivatives'), messages: await encode('md.derivatives', t.derivatives) },
        ].filter((x) => x.messages.length > 0),
      });
      sent += t.books.length + t.trades.length + t.derivatives.length;
    } catch (e) {
      log.warn('synthetic feed send failed', { err: e as Error });
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void tick(), intervalMs);
  await tick();
  return {
    sent: () => sent,
    async stop() {
      clearInterval(timer);
      while (busy) await new Promise((r) => setTimeout(r, 20));
      await producer.disconnect();
    },
  };
}
