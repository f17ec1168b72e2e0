// Sends the synthetic market to Kafka once a second per pair until stopped, as
// Confluent-framed JSON: each value carries the registry id of its topic's schema. With
// market makers, also their own orders and fills, and every half minute their reports.
import type { Kafka } from 'kafkajs';
import type { Config } from '../../lib/config.ts';
import { createProducer, topicName } from '../../lib/kafka.ts';
import type { Logger } from '../../lib/log.ts';
import type { Registry } from '../../lib/schema-registry.ts';
import { topicSchemaIds } from '../../schemas/registration.ts';
import type { ReportedMessage } from '../../schemas/index.ts';
import type { SyntheticMarketMakers } from './market-makers.ts';
import { SyntheticMarket, type SyntheticPair } from './market.ts';

export interface FeedMarketMakers {
  model: SyntheticMarketMakers;
  /** Where their reports go: the service's reported-metrics publisher (as the push endpoint would). */
  publish(items: readonly ReportedMessage[], pushedAt: number): Promise<void>;
}

const REPORT_EVERY_MS = 30_000;

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
  makers?: FeedMarketMakers,
): Promise<RunningFeed> {
  const market = new SyntheticMarket(pairs);
  const ids = await topicSchemaIds(registry, config, ['md.orderbook', 'md.trades', 'md.derivatives', 'mm.orders', 'mm.fills'] as const);
  const encode = (topic: 'md.orderbook' | 'md.trades' | 'md.derivatives' | 'mm.orders' | 'mm.fills', messages: { exchange: string; pair: string }[]) =>
    Promise.all(messages.map(async (m) => ({ key: `${m.exchange}:${m.pair}`, value: await registry.client.encode(ids.get(topic)!, m) })));
  const producer = createProducer(kafka);
  await producer.connect();
  let sent = 0;
  let busy = false;
  let reportedAt = Date.now();
  const tick = async () => {
    if (busy) return; // a slow broker skips a tick rather than piling up sends
    busy = true;
    try {
      const now = Date.now();
      const t = market.tick(now, intervalMs);
      const own = makers ? makers.model.tick(t.books, t.trades, now) : { orders: [], fills: [] };
      await producer.sendBatch({
        topicMessages: [
          { topic: topicName(config, 'md.orderbook'), messages: await encode('md.orderbook', t.books) },
          { topic: topicName(config, 'md.trades'), messages: await encode('md.trades', t.trades) },
          { topic: topicName(config, 'md.derivatives'), messages: await encode('md.derivatives', t.derivatives) },
          { topic: topicName(config, 'mm.orders'), messages: await encode('mm.orders', own.orders) },
          { topic: topicName(config, 'mm.fills'), messages: await encode('mm.fills', own.fills) },
        ].filter((x) => x.messages.length > 0),
      });
      sent += t.books.length + t.trades.length + t.derivatives.length + own.orders.length + own.fills.length;
      if (makers && now - reportedAt >= REPORT_EVERY_MS) {
        reportedAt = now;
        const reports = makers.model.reports(now);
        if (reports.length > 0) await makers.publish(reports, now);
      }
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
