// Wires a windowed market-data pipeline to its topic, dead-letter topic, consumer group
// and minute table: the same for every md.* processor.
import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import type { Kafka } from 'kafkajs';
import type { ClickHouse } from '../../lib/clickhouse.ts';
import type { Config } from '../../lib/config.ts';
import { dlqTopicName, topicName, type BaseTopic } from '../../lib/kafka.ts';
import type { Logger } from '../../lib/log.ts';
import type { QuoteRates } from '../../domain/market/prices.ts';
import type { KnownPairs } from '../reference-cache.ts';
import { BatchConsumer } from '../shell/batch-consumer.ts';
import { ValueDecoder } from '../shell/decode-value.ts';
import type { Faults } from '../../lib/faults.ts';
import { isFamily, type MinuteTable } from '../../domain/market/families/family.ts';
import { MinuteRepository } from '../../domain/market/repositories/minutes.ts';
import { Rollups } from '../../domain/market/repositories/rollups.ts';
import { QuoteMidRepository } from '../../domain/market/repositories/quote-mids.ts';
import { RollupMarks } from '../../domain/market/repositories/rollup-marks.ts';
import { SealedRollups } from './sealed-rollups.ts';
import type { MinuteEvents, MinuteValues } from './minute-events.ts';
import { Preparer } from './prepare.ts';
import { WindowedPipeline, type Derived, type MarketMessage, type WindowSpec } from './windowed-pipeline.ts';

export interface ProcessorDeps {
  config: Pick<Config, 'topicPrefix' | 'latenessMs'>;
  ch: ClickHouse;
  /** Decodes framed messages: the service's one client, whose schemas by id all processors
   * share, and the id each topic's schema got when the service registered it. */
  registry: { client: Pick<SchemaRegistry, 'cache' | 'getSchema'>; schemaIds: ReadonlyMap<BaseTopic, number> };
  known: KnownPairs;
  rates: QuoteRates;
  log: Logger;
  faults?: Faults;
  /** The clock of closing times and progress records. */
  now: () => number;
  /** Where written minutes are told to the event stream (market.minutes); none: not told. */
  minuteEvents?: MinuteEvents;
  /** Run the steps up to compute in a helper thread, for the specs that can (WindowSpec.packing). */
  prepareInHelper?: boolean;
}

export interface MarketProcessor<Msg extends MarketMessage, In, Row extends object> {
  topic: BaseTopic;
  group: string;
  /** Its minute table; rolled up into hours and days when it is a metric family. */
  family: MinuteTable;
  spec: WindowSpec<Msg, In, Row>;
  /** Computed from its written minutes after their rollups. */
  derived?: readonly Derived[];
  /** The values of its written minutes the event stream shows (with deps.minuteEvents). */
  streamed?: MinuteValues<Row>;
  /** Saves the mids its spec's rate table sees (the books' processor: QuoteMidRepository). */
  savesQuoteMids?: boolean;
}

export function marketConsumer<Msg extends MarketMessage, In, Row extends object>(
  kafka: Kafka,
  deps: ProcessorDeps,
  p: MarketProcessor<Msg, In, Row>,
  opts: { flushIntervalMs?: number; onBatchHandled?: () => void } = {},
): BatchConsumer {
  const topic = topicName(deps.config, p.topic);
  const groupId = deps.config.topicPrefix + p.group;
  const rollups = isFamily(p.family) ? new Rollups(deps.ch, p.family) : undefined;
  const sealed = rollups && new SealedRollups(rollups, new RollupMarks(deps.ch), p.family.tables.minutes, { latenessMs: deps.config.latenessMs, now: deps.now });
  const pipeline = new WindowedPipeline(p.spec, {
    decoder: new ValueDecoder(deps.registry.client, deps.now, deps.registry.schemaIds.get(p.topic)),
    repo: new MinuteRepository<Row>(deps.ch, p.family, deps.now),
    rollups,
    sealed,
    derived: p.derived,
    known: deps.known,
    groupId,
    topic,
    latenessMs: deps.config.latenessMs,
    faults: deps.faults,
    now: deps.now,
    events: deps.minuteEvents && p.streamed ? { publisher: deps.minuteEvents, values: p.streamed } : undefined,
    preparer: deps.prepareInHelper && p.spec.packing ? new Preparer({ topic: p.topic, ownSchemaId: deps.registry.schemaIds.get(p.topic) }, (m) => deps.rates.observe(m.pair, m.mid, m.ts, m.exchange)) : undefined,
    quoteMids: p.savesQuoteMids ? new QuoteMidRepository(deps.ch, deps.now) : undefined,
  });
  return new BatchConsumer(
    kafka,
    pipeline,
    { topic, dlqTopic: dlqTopicName(deps.config, p.topic), groupId, flushIntervalMs: opts.flushIntervalMs, faults: deps.faults, onBatchHandled: opts.onBatchHandled },
    deps.log.child(p.topic),
  );
}
