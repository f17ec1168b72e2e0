// The service process: API and processors together, because embedded ClickHouse lets one
// process hold its data folder. Each gets its own ClickHouse connection, so ingestion never
// waits behind a slow API query. With CLICKHOUSE_URL the same process talks to a server.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ChallengeStore } from '../api/auth/challenges.ts';
import { Locks } from '../lib/locks.ts';
import { TokenStore } from '../api/auth/tokens.ts';
import { TwoFactorGuard } from '../api/auth/two-factor.ts';
import { DEFAULT_LIMITS, type ApiDeps, type ThrottleLimits } from '../api/deps.ts';
import { Throttle } from '../api/http/throttle.ts';
import { UptimeCache } from '../api/market-caches/uptime-cache.ts';
import { PartialsCache } from '../api/market-caches/window-partials.ts';
import { MarketMakerCaches } from '../api/resources/market-makers/sealed-rows.ts';
import { startApi, type RunningApi } from '../api/server.ts';
import { connectReportedPublisher } from '../ingest/reported-metrics-publisher.ts';
import { ensureDatabase, openClickHouse } from '../lib/clickhouse.ts';
import type { Config } from '../lib/config.ts';
import { loadFixture } from '../domain/reference/fixtures.ts';
import { createProducer, createKafka, ensureTopics, topicName } from '../lib/kafka.ts';
import type { Logger } from '../lib/log.ts';
import { IdAllocator } from '../lib/ids.ts';
import { migrate } from '../lib/migrate.ts';
import { openRedis } from '../lib/redis.ts';
import { openSchemaRegistry, type Registry } from '../lib/schema-registry.ts';
import { registerTopicSchemas } from '../schemas/registration.ts';
import type { SchemaTopic } from '../schemas/topic-schemas.ts';
import { ApiKeyRepository } from '../domain/accounts/api-keys.ts';
import { PasskeyRepository } from '../domain/accounts/passkeys.ts';
import { ReferenceRepository, ReferenceSnapshot } from '../domain/reference/repository.ts';
import { TotpDeviceRepository } from '../domain/accounts/totp-devices.ts';
import { OrderBookMinuteRepository } from '../domain/market/repositories/orderbook-minutes.ts';
import { UserRepository, withoutHash } from '../domain/accounts/users.ts';
import { SHARED_READS, SharedReads } from '../lib/shared-reads.ts';
import { derivativesConsumer } from '../processors/derivatives/processor.ts';
import { QuoteRates } from '../domain/market/prices.ts';
import { QuoteMidRepository } from '../domain/market/repositories/quote-mids.ts';
import { Faults } from '../lib/faults.ts';
import { orderBookConsumer } from '../processors/orderbook/processor.ts';
import { KnownPairs, KnownWallets } from '../processors/reference-cache.ts';
import { fillsConsumer } from '../processors/market-makers/fills.ts';
import { ownOrdersConsumer } from '../processors/market-makers/own-orders.ts';
import type { BatchConsumer } from '../processors/shell/batch-consumer.ts';
import { Poller } from '../processors/shell/poller.ts';
import { tradesConsumer } from '../processors/trades/processor.ts';
import { KafkaEventPublisher, TargetEvaluator } from '../processors/targets/evaluator.ts';
import { telegramNotifier } from '../processors/targets/notifier.ts';
import { LoanKeeper } from '../processors/loans/keeper.ts';
import { applyMinuteRetention } from '../domain/market/repositories/retention.ts';
import { RfqDeadlineKeeper } from '../processors/rfq/deadline-keeper.ts';
import { rfqTelegramNotifier } from '../processors/rfq/notifier.ts';
import { AgreementEventRelay } from '../processors/agreements/event-relay.ts';
import { TargetRepository } from '../domain/targets/repository.ts';
import { AgreementStore } from '../domain/agreements/store.ts';
import { frameHeader } from '../lib/schema-registry.ts';
import { reportedConsumer } from '../processors/reported/processor.ts';
import { RolledUp, RollupMarks } from '../domain/market/repositories/rollup-marks.ts';
import { MinuteEvents } from '../processors/market/minute-events.ts';
import { ThreadedConsumer } from '../processors/market/threaded.ts';
import { StreamHub, type StreamOptions } from '../api/stream/hub.ts';

export interface ServiceOptions {
  limits?: ThrottleLimits;
  /** Redis key prefix, so parallel test runs keep apart. */
  redisPrefix?: string;
  /** Flush interval of the processors. */
  flushMs?: number;
  /** Start the Kafka processors (default true). */
  processors?: boolean;
  /** The one clock of the service (default the system's): tests move it. */
  now?: () => number;
  /** Run the target evaluator every minute (default: with the processors). */
  evaluateTargets?: boolean;
  /** The event stream's limits (api/stream/hub.ts); tests pass small ones. */
  stream?: Partial<StreamOptions>;
}

export interface Service {
  api: RunningApi;
  deps: ApiDeps;
  /** The schema registry client the processors decode with, and the registry id of each topic's schema. */
  registry: Registry;
  schemaIds: ReadonlyMap<SchemaTopic, number>;
  consumers: (BatchConsumer | ThreadedConsumer)[];
  opsTokenFile: string;
  /**
   * Stops everything, in a bounded time: the API's statements at once (their clients are
   * gone), the processors' after STOP_GRACE_MS. A processor whose write was cancelled does
   * not commit its offsets, so its messages are read again at the next start.
   */
  stop(): Promise<void>;
}

/**
 * How long a stop lets the processors finish the write they are in and commit, before
 * their statements are killed. With ClickHouse's cancel (up to CANCEL_MS) the whole stop
 * stays within the 10 s a supervisor gives (ops/cli/run.ts).
 */
export const STOP_GRACE_MS = 2_000;
const CANCEL_MS = 4_000;

export function opsTokenPath(config: Pick<Config, 'dataDir'>): string {
  return path.join(config.dataDir, 'run', 'ops-token');
}

/**
 * The API's connections to the embedded engine: an endpoint asks its queries (books,
 * trades, derivatives) at once, and requests overlap; the engine runs those that bind
 * values one at a time, the API's first (priority 1, lib/statement-queue.ts). Two threads
 * a query: faster than the engine's default of 4 and than 1 on the 30-day benchmark data
 * (docs/benchmarks.md, "Measurements behind the code").
 */
export const API_CLICKHOUSE = { connections: 2, threadsPerQuery: 2, priority: 1, uncompressedCache: true };

/**
 * Ingestion's connections: below the API in priority, so the rollups and reads of a minute
 * close wait for a request's queries instead of delaying them (on the embedded engine, they
 * go after the API's in the line of bound statements; on a server, they pause between
 * blocks). The price is that ingestion waits while the API is busy, for a second at most on
 * the embedded engine; the processors still kept up under the benchmark's back-to-back
 * requests (docs/benchmarks.md, "Measurements behind the code").
 */
export const INGEST_CLICKHOUSE = { priority: 2 };

export async function startService(config: Config, log: Logger, opts: ServiceOptions = {}): Promise<Service> {
  const now = opts.now ?? Date.now;
  // First, before anything is opened: a schema the registry refuses stops the start here.
  const registry = await openSchemaRegistry(config, 'mm-service');
  const schemaIds = await registerTopicSchemas(registry, config, log.child('schema-registry'));
  await ensureDatabase(config);
  const apiCh = openClickHouse(config, 'api', { ...API_CLICKHOUSE, log: log.child('clickhouse') });
  const ingestCh = openClickHouse(config, 'ingest', { ...INGEST_CLICKHOUSE, log: log.child('clickhouse') });
  const applied = await migrate(ingestCh, log.child('migrate'));
  if (applied > 0) log.info('migrations applied', { count: applied });
  await applyMinuteRetention(ingestCh, config.minuteRetentionDays);

  const kafka = createKafka(config, 'mm-service', log.child('kafka'));
  const admin = kafka.admin();
  await admin.connect();
  const created = await ensureTopics(admin, config);
  await admin.disconnect();
  if (created.length > 0) log.info('topics created', { count: created.length, prefix: config.topicPrefix || '(none)' });
  const reportedMetrics = await connectReportedPublisher(kafka, config, { schemaIds });

  const redis = openRedis(config, opts.redisPrefix ?? 'mm:');
  const users = new UserRepository(apiCh);
  const reference = new ReferenceRepository(apiCh);
  const known = new KnownPairs(new ReferenceRepository(ingestCh), now);
  const wallets = new KnownWallets(new ReferenceRepository(ingestCh), now);

  // The operator's secret: readable only by this user, so only a local operator can seed.
  const opsToken = crypto.randomBytes(32).toString('hex');
  const opsTokenFile = opsTokenPath(config);
  fs.mkdirSync(path.dirname(opsTokenFile), { recursive: true });
  fs.writeFileSync(opsTokenFile, opsToken + '\n', { mode: 0o600 });

  const referenceLists = new ReferenceSnapshot(reference);
  const activeUsers = new SharedReads(async (id: number) => {
    const user = await users.byId(id);
    return user && withoutHash(user);
  }, { ...SHARED_READS, maxEntries: 10_000 });
  const memberships = new SharedReads((id: number) => users.memberships(id), { ...SHARED_READS, maxEntries: 10_000 });
  // Fixture loads run one at a time: user ids are allocated as max(id) + 1.
  let fixtureChain: Promise<unknown> = Promise.resolve();
  const deps: ApiDeps = {
    config,
    log: log.child('api'),
    ch: apiCh,
    redis,
    tokens: new TokenStore(redis),
    throttle: new Throttle(redis),
    users,
    activeUsers,
    memberships,
    reference,
    referenceLists,
    orderBookMinutes: new OrderBookMinuteRepository(apiCh),
    uptimeCache: new UptimeCache(config.uptimeCacheBytes),
    windowCache: new PartialsCache(config.windowCacheBytes),
    marketMakerCaches: new MarketMakerCaches(),
    rolledUp: new RolledUp(new RollupMarks(apiCh), now),
    limits: opts.limits ?? DEFAULT_LIMITS,
    now,
    totpDevices: new TotpDeviceRepository(apiCh),
    apiKeys: new ApiKeyRepository(apiCh),
    passkeys: new PasskeyRepository(apiCh),
    ids: new IdAllocator(redis),
    challenges: new ChallengeStore(redis),
    twoFactor: new TwoFactorGuard(redis),
    locks: new Locks(redis),
    agreements: new AgreementStore(apiCh),
    targets: new TargetRepository(apiCh),
    opsToken,
    loadFixture: (data) => {
      const run = fixtureChain.catch(() => undefined).then(async () => {
        const summary = await loadFixture(data, { reference, users });
        referenceLists.invalidate();
        activeUsers.invalidate();
        memberships.invalidate();
        await Promise.all([known.refresh(), wallets.refresh(), ...threads.map((t) => t.refreshKnown())]);
        return summary;
      });
      fixtureChain = run;
      return run;
    },
    reportedMetrics,
    processorStats: () => Object.fromEntries(consumers.map((c) => [c.name, c.stats])),
  };

  const consumers: (BatchConsumer | ThreadedConsumer)[] = [];
  const threads: ThreadedConsumer[] = [];
  const connections = [apiCh, ingestCh];
  let minutesProducer: ReturnType<typeof kafka.producer> | undefined;
  if (opts.processors ?? true) {
    // One rate table for all: trades are converted with the mids the books report.
    const rates = new QuoteRates();
    // Where the last run left off: the messages read again are converted as the first time.
    rates.load(await new QuoteMidRepository(ingestCh, now).recent(rates.keeps));
    const faults = new Faults(config.faults, ingestCh);
    // Written minutes, told to the event stream (api/stream/).
    minutesProducer = createProducer(kafka);
    await minutesProducer.connect();
    const minuteEvents = new MinuteEvents(minutesProducer, topicName(config, 'market.minutes'), frameHeader(schemaIds.get('market.minutes')!), now);
    for (const [name, make] of [
      ['orderbook', orderBookConsumer],
      ['trades', tradesConsumer],
      ['derivatives', derivativesConsumer],
      ['mm-orders', ownOrdersConsumer],
      ['mm-fills', fillsConsumer],
      ['reported', reportedConsumer],
    ] as const) {
      // A connection each: the embedded engine runs one statement at a time per connection.
      const ch = openClickHouse(config, `ingest-${name}`, { ...INGEST_CLICKHOUSE, log: log.child('clickhouse') });
      connections.push(ch);
      const flushIntervalMs = opts.flushMs ?? config.flushIntervalMs;
      // The books in a thread of their own, off the API's event loop (processors/market/threaded.ts);
      // a service given another clock keeps them on it.
      const consumer =
        name === 'orderbook' && now === Date.now
          ? new ThreadedConsumer('orderbook', topicName(config, 'md.orderbook'), { config, schemaIds, ch, rates, faults, log, flushIntervalMs, minuteEvents: true })
          : make(kafka, { config, ch, registry: { client: registry.client, schemaIds }, known, wallets, rates, log, faults, now, minuteEvents }, { flushIntervalMs });
      if (consumer instanceof ThreadedConsumer) threads.push(consumer);
      await consumer.start();
      consumers.push(consumer);
    }
  }

  // The periodic jobs: target evaluation, the loans' and RFQs' own moves, and every change of
  // a loan, RFQ or proposal published (docs/targets.md, docs/loans.md, docs/rfq.md).
  const jobs: Poller[] = [];
  let eventsProducer: ReturnType<typeof kafka.producer> | undefined;
  if (opts.evaluateTargets ?? opts.processors ?? true) {
    const ch = openClickHouse(config, 'targets', { ...INGEST_CLICKHOUSE, log: log.child('clickhouse') });
    connections.push(ch);
    eventsProducer = createProducer(kafka);
    await eventsProducer.connect();
    const events = new KafkaEventPublisher(eventsProducer, topicName(config, 'targets.events'), frameHeader(schemaIds.get('targets.events')!));
    const evaluator = new TargetEvaluator({ ch, targets: new TargetRepository(ch), reference: new ReferenceRepository(ch), events, log: log.child('targets'), now, latenessMs: config.latenessMs, rolledUp: deps.rolledUp });
    const keeper = new LoanKeeper({ ch, locks: deps.locks, pairs: async () => (await deps.referenceLists.lists()).pairs, log: log.child('loans'), now, latenessMs: config.latenessMs, rolledUp: deps.rolledUp });
    const rfqKeeper = new RfqDeadlineKeeper({ ch, locks: deps.locks, log: log.child('rfq'), now });
    const relay = new AgreementEventRelay(
      ch,
      eventsProducer,
      {
        loans: { topic: topicName(config, 'loans.events'), header: frameHeader(schemaIds.get('loans.events')!) },
        rfq: { topic: topicName(config, 'rfq.events'), header: frameHeader(schemaIds.get('rfq.events')!) },
      },
      log.child('agreements'),
      now,
    );
    for (const [job, everyMs] of [[evaluator, 5_000], [keeper, 10_000], [rfqKeeper, 5_000], [relay, 2_000]] as const) {
      const poller = new Poller(job, log);
      poller.start(everyMs);
      jobs.push(poller);
    }
  }
  if ((opts.processors ?? true) && config.telegramBotToken) {
    const ch = openClickHouse(config, 'telegram', { ...INGEST_CLICKHOUSE, log: log.child('clickhouse') });
    connections.push(ch);
    const notifier = telegramNotifier(kafka, ch, config, { token: config.telegramBotToken, apiUrl: config.telegramApiUrl }, log);
    await notifier.start();
    consumers.push(notifier);
    // RFQ changes to the project and the invited market makers (docs/rfq.md).
    const rfqNotifier = rfqTelegramNotifier(kafka, ch, config, { token: config.telegramBotToken, apiUrl: config.telegramApiUrl }, log, now);
    await rfqNotifier.start();
    consumers.push(rfqNotifier);
  }

  // The event stream reads its topics from Kafka, like any other API process would.
  const stream = new StreamHub({ kafka, config, log: log.child('stream'), now, ch: apiCh, referenceLists }, opts.stream);
  await stream.start();
  deps.stream = stream;

  const api = await startApi(deps, config.host, config.port);
  log.info('API listening', { url: api.url });

  return {
    api,
    deps,
    registry,
    schemaIds,
    consumers,
    opsTokenFile,
    async stop() {
      await stream.stop();
      await api.close();
      // No one waits for these answers any more.
      await apiCh.cancel(CANCEL_MS);
      await reportedMetrics.close();
      // What runs gets STOP_GRACE_MS to finish and commit; then its statements are killed.
      const cancelAll = () => Promise.all(connections.map((c) => c.cancel(CANCEL_MS)));
      let late: Promise<unknown> = Promise.resolve();
      const timer = setTimeout(() => (late = cancelAll()), STOP_GRACE_MS);
      try {
        // Their runs in progress finish before the connections they use close.
        await Promise.allSettled(jobs.map((j) => j.stop()));
        await eventsProducer?.disconnect();
        await Promise.all(consumers.map((c) => c.stop()));
        await minutesProducer?.disconnect();
      } finally {
        clearTimeout(timer);
      }
      await late;
      // Nothing may run when the process exits: its exit would wait for the statement.
      await cancelAll();
      await Promise.allSettled(connections.map((c) => c.close()));
      redis.disconnect();
      fs.rmSync(opsTokenFile, { force: true });
    },
  };
}
