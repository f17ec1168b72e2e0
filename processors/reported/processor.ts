// mm.reported -> mm_reported: the metric values market makers push (addendum section 3;
// the push endpoint, api/resources/reported-metrics/push.ts, validates and produces them).
// Each message is checked again here, since any producer may write to the topic: its
// schema, a known market-maker organization, a known pair of the named asset, an mm metric
// identifier, a bucket start aligned to its interval and not after its push; a message of
// several items (`more`) is checked item by item and written whole or dead-lettered whole.
// What passes is written with the Kafka message's timestamp as its push time: the row's
// version, so the latest push of a key wins and a replayed message rewrites only its own rows.
import type { Kafka, KafkaMessage } from 'kafkajs';
import { isPercentMetric, MM_METRICS } from '../../domain/market/facts.ts';
import { REPORTED_INTERVAL_MS, ReportedRepository, itemsOf, reportedKey, type ReportedRow } from '../../domain/market-makers/reported.ts';
import { ReferenceRepository, type Organization } from '../../domain/reference/repository.ts';
import { dlqTopicName, topicName } from '../../lib/kafka.ts';
import { describeErrors, validateReported, type ReportedMessage } from '../../schemas/index.ts';
import type { ProcessorDeps } from '../market/consumer.ts';
import { BatchConsumer, type Pipeline } from '../shell/batch-consumer.ts';
import { ValueDecoder, type Decoded } from '../shell/decode-value.ts';
import { deadLetter, ok, type Outcome } from '../shell/outcome.ts';
import { parseTimestamp } from '../../schemas/timestamps.ts';

export const REPORTED_GROUP = 'processor.reported';

const MM_METRIC_SET = new Set(MM_METRICS);

/**
 * Organizations (their kind) and pairs (their asset), for the checks of each message.
 * A message was accepted by the push endpoint against the reference data of its push time,
 * so a miss is only believed from data loaded after that time: a message that misses an
 * older load waits for a new one. Otherwise an organization loaded by a fixture just before
 * a push could be dead-lettered by a processor whose last load was a moment earlier.
 */
export class ReportedReference {
  private organizations = new Map<string, Organization['kind']>();
  /** `<exchange>\0<pair>` -> asset. */
  private pairs = new Map<string, string>();
  /** When the newest completed load started (epoch ms). */
  private loadedFrom = -Infinity;
  private loading: Promise<void> | undefined;

  constructor(
    private readonly reference: ReferenceRepository,
    private readonly now: () => number,
    private readonly maxAgeMs = 30_000,
  ) {}

  /** Why the message's organization or pair is not acceptable, or undefined; synchronous unless a miss needs newer data. */
  check(m: ReportedMessage, pushedAt: number): string | undefined | Promise<string | undefined> {
    const now = this.now();
    const problem = this.problem(m);
    // Not after now: a producer's clock ahead of ours must not make the message wait for ever.
    const since = Math.min(pushedAt, now);
    if (problem !== undefined && this.loadedFrom < since) return this.loadSince(since).then(() => this.problem(m));
    // Hits are answered from memory; a kind or asset changed by a fixture load shows within maxAgeMs.
    if (now - this.loadedFrom > this.maxAgeMs) this.loadSince(now).catch(() => undefined);
    return problem;
  }

  private problem(m: ReportedMessage): string | undefined {
    const kind = this.organizations.get(m.organization);
    if (kind === undefined) return `unknown organization: ${m.organization}`;
    if (kind !== 'market_maker') return `not a market maker: ${m.organization} is a ${kind} organization`;
    const asset = this.pairs.get(`${m.exchange}\u0000${m.pair}`);
    if (asset === undefined) return `unknown pair: ${m.exchange} ${m.pair}`;
    if (asset !== m.asset) return `pair of another asset: ${m.exchange} ${m.pair} is a pair of ${asset}, not of ${m.asset}`;
    return undefined;
  }

  /** Loads the reference data now. */
  refresh(): Promise<void> {
    return this.loadSince(this.now());
  }

  /** Resolves once a load that started at `since` or later has completed. */
  async loadSince(since: number): Promise<void> {
    while (this.loadedFrom < since) {
      this.loading ??= this.load().finally(() => {
        this.loading = undefined;
      });
      await this.loading;
    }
  }

  private async load(): Promise<void> {
    const started = this.now();
    const [organizations, pairs] = await Promise.all([this.reference.organizations(), this.reference.pairs()]);
    this.organizations = new Map(organizations.map((o) => [o.slug, o.kind]));
    this.pairs = new Map(pairs.map((p) => [`${p.exchange}\u0000${p.pair}`, p.asset]));
    this.loadedFrom = Math.max(this.loadedFrom, started);
  }
}

/** Why a valid message's own fields (metric, value, timestamp) are not acceptable, or undefined. */
export function fieldProblem(m: ReportedMessage, ts: number, pushedAt: number): string | undefined {
  if (!MM_METRIC_SET.has(m.metric)) return `unknown metric: ${m.metric} is not an mm metric identifier`;
  // JSON carries no NaN or infinity; the schema allows any number, the push endpoint none below 0.
  if (m.value < 0) return `negative value: ${m.value}`;
  if (isPercentMetric(m.metric) && m.value > 100) return `percentage over 100: ${m.value} for ${m.metric}`;
  // An ISO date before 1970 parses to a negative time, which the table's DateTime cannot hold.
  if (ts < 0) return `timestamp before 1970: ${new Date(ts).toISOString()}`;
  if (ts % REPORTED_INTERVAL_MS[m.interval] !== 0) return `misaligned timestamp: ${new Date(ts).toISOString()} is not the start of a ${m.interval} interval (UTC)`;
  if (ts > pushedAt) return `timestamp after its push: ${new Date(ts).toISOString()} is later than the message's time ${new Date(pushedAt).toISOString()}`;
  return undefined;
}

export class ReportedPipeline implements Pipeline {
  /** Rows to write on the next flush, by key: the latest push of each. */
  private pending = new Map<string, ReportedRow>();
  /** A flush whose insert failed: written again, with the same blocks and tokens, before anything else. */
  private retry: ReportedRow[] | undefined;

  constructor(
    private readonly deps: {
      decoder: ValueDecoder;
      repo: ReportedRepository;
      reference: ReportedReference;
    },
  ) {}

  /** Synchronous unless the reference data must be loaded again first. */
  process(message: KafkaMessage): Outcome<void> | Promise<Outcome<void>> {
    const decoded = this.deps.decoder.decode(message.value);
    if (decoded instanceof Promise) return decoded.then((d) => this.check(d, message));
    return this.check(decoded, message);
  }

  private check(decoded: Outcome<Decoded>, message: KafkaMessage): Outcome<void> | Promise<Outcome<void>> {
    if (decoded.kind !== 'ok') return decoded;
    const read = itemsOf(decoded.value.data);
    if ('problem' in read) return deadLetter(read.problem);
    const pushedAt = Number(message.timestamp);
    // A message is written whole or not at all, as a push is: one bad item dead-letters it.
    const items: { m: ReportedMessage; ts: number }[] = [];
    for (const [i, value] of read.items.entries()) {
      // The first item's reasons read as before `more` existed; the others name their place.
      const at = i === 0 ? '' : `/more/${i - 1}: `;
      if (!validateReported(value)) return deadLetter(`schema: ${at}${describeErrors(validateReported.errors)}`);
      const m = value as ReportedMessage;
      const ts = parseTimestamp(m.timestamp);
      if (ts === undefined) return deadLetter(`schema: ${at}/timestamp ${JSON.stringify(m.timestamp)} is not an ISO 8601 time or epoch milliseconds`);
      if (i === 0 && (!Number.isSafeInteger(pushedAt) || pushedAt < 0)) return deadLetter(`no push time: the message's timestamp is ${JSON.stringify(message.timestamp)}`);
      const problem = fieldProblem(m, ts, pushedAt);
      if (problem !== undefined) return deadLetter(`${at}${problem}`);
      items.push({ m, ts });
    }
    // Every item has the message's organization, asset, exchange and pair.
    const known = this.deps.reference.check(items[0]!.m, pushedAt);
    // The message's offset orders two pushes of a key in the same millisecond (a key's messages share a partition).
    const seq = Number(message.offset);
    if (known instanceof Promise) return known.then((p) => this.add(p, items, pushedAt, seq));
    return this.add(known, items, pushedAt, seq);
  }

  private add(problem: string | undefined, items: { m: ReportedMessage; ts: number }[], pushedAt: number, seq: number): Outcome<void> {
    if (problem !== undefined) return deadLetter(problem);
    for (const { m, ts } of items) {
      const row: ReportedRow = { organization: m.organization, asset: m.asset, exchange: m.exchange, pair: m.pair, metric: m.metric, interval: m.interval, timestamp: ts, value: m.value, pushedAt, seq };
      const key = reportedKey(row);
      // One row per key in a block: the table keeps the greatest pushed_at, and of equal ones
      // the later message or item (a key's messages share a partition, so they come in push
      // order; a push sends a key once, its last item).
      const held = this.pending.get(key);
      if (!held || held.pushedAt <= pushedAt) this.pending.set(key, row);
    }
    return ok(undefined);
  }

  async flush(): Promise<void> {
    if (this.retry) {
      await this.deps.repo.insert(this.retry);
      this.retry = undefined;
    }
    if (this.pending.size === 0) return;
    const rows = [...this.pending.values()];
    this.pending = new Map();
    try {
      await this.deps.repo.insert(rows);
    } catch (e) {
      this.retry = rows;
      throw e;
    }
  }

  /** Every row of a handled message is written by the flush that commits it: no earlier point to hold back to. */
  commitPoint(_partition: number, next: bigint): bigint {
    return next;
  }

  async load(): Promise<void> {
    await this.deps.reference.refresh();
  }

  /** Rows already built from messages about to be delivered again are the same rows: writing them twice is harmless. */
  forget(): void {}

  backlog(): number {
    return this.pending.size;
  }
}

export function reportedConsumer(
  kafka: Kafka,
  deps: Pick<ProcessorDeps, 'config' | 'ch' | 'registry' | 'log' | 'now'>,
  opts: { flushIntervalMs?: number; groupId?: string } = {},
): BatchConsumer {
  const topic = topicName(deps.config, 'mm.reported');
  const pipeline = new ReportedPipeline({
    decoder: new ValueDecoder(deps.registry.client, deps.now, deps.registry.schemaIds.get('mm.reported')),
    repo: new ReportedRepository(deps.ch),
    reference: new ReportedReference(new ReferenceRepository(deps.ch), deps.now),
  });
  const groupId = opts.groupId ?? deps.config.topicPrefix + REPORTED_GROUP;
  return new BatchConsumer(
    kafka,
    pipeline,
    { topic, dlqTopic: dlqTopicName(deps.config, 'mm.reported'), groupId, flushIntervalMs: opts.flushIntervalMs },
    deps.log.child('mm.reported'),
  );
}
