// Sends the synthetic market to Kafka once a second per pair until stopped.
import { Partitioners, type Kafka } from 'kafkajs';
import type { Config } from '../../lib/config.ts';
import { topicName } from '../../lib/kafka.ts';
import type { Logger } from '../../lib/log.ts';
import { SyntheticMarket, type SyntheticPair } from './market.ts';

export interface RunningFeed {
  stop(): Promise<void>;
  sent(): number;
}

export async function startSyntheticFeed(
  kafka: Kafka,
  config: Pick<Config, 'topicPrefix'>,
  pairs: SyntheticPair[],
  log: Logger,
  intervalMs = 1000,
): Promise<RunningFeed> {
  const market = new SyntheticMarket(pairs);
  const producer = kafka.producer({ allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  let sent = 0;
  let busy = false;
  const key = (m: { exchange: string; pair: string }) => `${m.exchange}:${m.pair}`;
  const tick = async () => {
    if (busy) return; // a slow broker skips a tick rather than piling up sends
    busy = true;
    try {
      const t = market.tick(Date.now(), intervalMs);
      await producer.sendBatch({
        topicMessages: [
          { topic: topicName(config, 'md.orderbook'), messages: t.books.map((m) => ({ key: key(m), value: JSON.stringify(m) })) },
          { topic: topicName(config, 'md.trades'), messages: t.trades.map((m) => ({ key: key(m), value: JSON.stringify(m) })) },
          { topic: topicName(config, 'md.derivatives'), messages: t.derivatives.map((m) => ({ key: key(m), value: JSON.stringify(m) })) },
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
