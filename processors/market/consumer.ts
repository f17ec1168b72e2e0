// Wires a windowed market-data pipeline to its topic, dead-letter topic, consumer group
// and minute table: the same for every md.* processor.
import type { Kafka } from 'kafkajs';
import type { ClickHouse } from '../../lib/clickhouse.ts';
import type { Config } from '../../lib/config.ts';
import { dlqTopicName, topicName, type BaseTopic } from '../../lib/kafka.ts';
import type { Logger } from '../../lib/log.ts';
import type { QuoteRates } from '../metrics/quote-rates.ts';
import type { KnownPairs } from '../reference-cache.ts';
import { BatchConsumer } from '../shell/batch-consumer.ts';
import type { Faults } from '../shell/faults.ts';
import { MinuteRepository, type MinuteTable } from './minute-repository.ts';
import { Rollups } from './rollups.ts';
import { WindowedPipeline, type MarketMessage, type WindowSpec } from './windowed-pipeline.ts';

export interface ProcessorDeps {
  config: Pick<Config, 'topicPrefix' | 'latenessMs'>;
  ch: ClickHouse;
  known: KnownPairs;
  rates: QuoteRates;
  log: Logger;
  faults?: Faults;
}

export interface MarketProcessor<Msg extends MarketMessage, In, Row extends object> {
  topic: BaseTopic;
  group: string;
  table: MinuteTable;
  spec: WindowSpec<Msg, In, Row>;
}

export function marketConsumer<Msg extends MarketMessage, In, Row extends object>(
  kafka: Kafka,
  deps: ProcessorDeps,
  p: MarketProcessor<Msg, In, Row>,
  opts: { flushIntervalMs?: number } = {},
): BatchConsumer {
  const topic = topicName(deps.config, p.topic);
  const groupId = deps.config.topicPrefix + p.group;
  const pipeline = new WindowedPipeline(p.spec, {
    repo: new MinuteRepository<Row>(deps.ch, p.table),
    rollups: new Rollups(deps.ch, p.table),
    known: deps.known,
    groupId,
    topic,
    latenessMs: deps.config.latenessMs,
    faults: deps.faults,
  });
  return new BatchConsumer(
    kafka,
    pipeline,
    { topic, dlqTopic: dlqTopicName(deps.config, p.topic), groupId, flushIntervalMs: opts.flushIntervalMs, faults: deps.faults },
    deps.log.child(p.topic),
  );
}
