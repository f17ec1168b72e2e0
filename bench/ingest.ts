// npm run bench:ingest — order-book snapshots from Kafka to ClickHouse.
//
// For books of 20 and of 200 levels a side: produces N snapshots of many pairs (each
// pair's event times spread over ten minutes a few hours in the past, so minutes close by
// the watermark as they would in a replay), then measures in the same run
//   (a) the baseline: a kafkajs consumer group that only consumes and JSON.parses them;
//   (b) the real path: the order-book processor in its worker thread, as the service runs
//       it, writing minute rows and rollups into a fresh embedded ClickHouse through the
//       main thread, and the main thread's event-loop delay meanwhile (this catch-up is the
//       longest batches a processor meets; the API runs on that event loop);
//   (c) the same with Confluent-framed snapshots (the same books, other exchanges'
//       names), decoded through the schema registry client as the service decodes them:
//       its rate beside (b)'s is what the registry costs.
// Then the freshness: the processor running live with a short lateness, a feed sending
// every pair once a second with current times, and for each minute the time from the end
// of its allowed lateness until it is queryable in ClickHouse (its minute row, and its hour
// row where windows read one: before the processors' mark).
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Kafka } from 'kafkajs';
import { openClickHouse } from '../lib/clickhouse.ts';
import type { Config } from '../lib/config.ts';
import { loadFixture } from '../domain/reference/fixtures.ts';
import { createProducer, createKafka, ensureTopics, topicName } from '../lib/kafka.ts';
import { openSchemaRegistry, type Registry } from '../lib/schema-registry.ts';
import { deleteSubjects, registerTopicSchemas } from '../schemas/registration.ts';
import { bundledSchema, type SchemaTopic } from '../schemas/topic-schemas.ts';
import { migrate } from '../lib/migrate.ts';
import { RollupMarks } from '../domain/market/repositories/rollup-marks.ts';
import { ReferenceRepository } from '../domain/reference/repository.ts';
import { UserRepository } from '../domain/accounts/users.ts';
import { INGEST_CLICKHOUSE } from '../ops/service.ts';
import { QuoteRates } from '../domain/market/prices.ts';
import { ORDERBOOK_GROUP } from '../processors/orderbook/processor.ts';
import { ThreadedConsumer } from '../processors/market/threaded.ts';
import { FETCH_BYTES } from '../processors/shell/batch-consumer.ts';
import {
  BookGenerator,
  benchWorld,
  check,
  deleteTopicsAndGroups,
  flags,
  fmtInt,
  fmtMs,
  fmtPct,
  percentile,
  positiveInt,
  say,
  sleep,
  until,
  type BenchRun,
  type BenchWorld,
  type Figure,
  runBench,
} from './common.ts';

const NAME = 'bench:ingest';
const opt = flags(
  NAME,
  {
    pairs: { default: '300', help: 'pairs the snapshots are spread over' },
    n20: { default: '200000', help: 'snapshots of 20 levels a side (0 skips)' },
    n200: { default: '40000', help: 'snapshots of 200 levels a side (0 skips)' },
    repeat: { default: '4', help: 'runs per book size (each with its own messages); the table gives medians. Even, so plain and framed go first equally often' },
    framed: { default: '1', help: 'also measure Confluent-framed snapshots against plain ones in each run (0 skips)' },
    'span-minutes': { default: '10', help: 'event time each pair\'s snapshots cover (so minutes close during the run)' },
    ts: { default: 'ms', help: '"ms" (epoch milliseconds) or "iso" (ISO 8601 strings) for ts' },
    lateness: { default: '5', help: 'LATENESS_SECONDS of the live processor in the freshness run' },
    'fresh-minutes': { default: '3', help: 'minutes measured in the freshness run (0 skips)' },
    'fresh-pairs': { default: '300', help: 'pairs of the live feed, each sending once a second' },
  },
  'snapshots/s from Kafka to ClickHouse against a consume-and-parse baseline, and freshness',
);
const PAIRS = positiveInt('pairs', opt.pairs);
const SIZES: { levels: number; n: number }[] = [
  { levels: 20, n: Number(opt.n20) },
  { levels: 200, n: Number(opt.n200) },
].filter((s) => s.n > 0);
for (const s of SIZES) positiveInt(`n${s.levels}`, String(s.n));
const SPAN_MS = positiveInt('span-minutes', opt['span-minutes']) * 60_000;
const REPEAT = positiveInt('repeat', opt.repeat);
if (opt.framed !== '0' && opt.framed !== '1') throw new Error('--framed must be 0 or 1');
const FRAMED = opt.framed === '1';
if (opt.ts !== 'ms' && opt.ts !== 'iso') throw new Error('--ts must be "ms" or "iso"');
const ISO = opt.ts === 'iso';
const LATENESS_S = positiveInt('lateness', opt.lateness);
const FRESH_MINUTES = Number(opt['fresh-minutes']);
const FRESH_PAIRS = positiveInt('fresh-pairs', opt['fresh-pairs']);

const GOAL_RATE = 20_000;
const GOAL_RATIO = 0.8;
/** The main thread's event-loop delay while the processor catches up, p99: what an API request would wait. */
const GOAL_LOOP_P99_MS = 20;
const GOAL_FRESH_MS = 5_000;
/** Framed snapshots at no less than this share of the plain ones' rate in the same run. */
const GOAL_FRAMED = 0.9;

interface SizeResult {
  levels: number;
  n: number;
  bytes: number;
  produceMs: number;
  baselineMs: number;
  processMs: number;
  endToEndMs: number;
  writtenAtProcessed: number;
  stats: { ok: number; skipped: number; deadLettered: number };
  /** The event loop's delay while the processor caught up (the API's wait, were it in the process). */
  loop: { p99Ms: number; maxMs: number };
  /** The processor on the same books Confluent-framed, when measured. */
  framedMs?: number;
}

interface FreshMinute {
  minute: number;
  pairs: number;
  firstMs: number;
  allMs: number;
  fromLastArrivalMs: number;
}

async function main(r: BenchRun): Promise<Figure[]> {
  const { config, log } = r;
  const kafka = createKafka(config, 'mm-bench-ingest', log.child('kafka'));
  const registry = await openSchemaRegistry(config, 'mm-bench-ingest');
  const admin = openClickHouse(config, 'bench-admin');
  r.onCleanup(() => admin.close());
  await migrate(admin, log.child('migrate'));
  const reference = new ReferenceRepository(admin);
  const users = new UserRepository(admin);

  const prefixes: Config[] = [];
  const groups: string[] = [];
  const drop = async (c: Config) => {
    await deleteTopicsAndGroups(kafka, c, groups.filter((g) => g.startsWith(c.topicPrefix)));
    await deleteSubjects(registry, c);
    prefixes.splice(prefixes.indexOf(c), 1);
  };
  r.onCleanup(async () => {
    for (const c of [...prefixes]) await drop(c);
  });
  const topicsFor = async (suffix: string, over: Partial<Config> = {}): Promise<Config> => {
    const c: Config = { ...config, ...over, topicPrefix: `${config.topicPrefix}${suffix}.` };
    prefixes.push(c);
    const a = kafka.admin();
    await a.connect();
    await ensureTopics(a, c);
    await a.disconnect();
    return c;
  };

  // Each repetition has topics and exchanges of its own (so its minutes are new to
  // ClickHouse too); its baseline and processor run back to back on the same messages.
  const results: SizeResult[][] = [];
  for (const size of SIZES) {
    const reps: SizeResult[] = [];
    for (let k = 1; k <= REPEAT; k++) {
      const world = benchWorld({ pairs: PAIRS, exchangePrefix: `l${size.levels}r${k}x` });
      await loadFixture({ ...world.fixture, users: [] }, { reference, users });
      const c = await topicsFor(`l${size.levels}r${k}`);
      say(NAME, `--- ${size.levels} levels a side, run ${k} of ${REPEAT}: ${fmtInt(size.n)} snapshots over ${world.pairs.length} pairs ---`);
      const produced = await produce(kafka, c, world, size.levels, size.n);
      // The framed copy: the same books under other exchanges' names, so its minutes are new too.
      const framed = FRAMED ? { world: benchWorld({ pairs: PAIRS, exchangePrefix: `l${size.levels}r${k}f` }), c: await topicsFor(`l${size.levels}r${k}f`) } : undefined;
      if (framed) {
        await loadFixture({ ...framed.world.fixture, users: [] }, { reference, users });
        const id = (await registerOrderBook(registry, framed.c, r)).get('md.orderbook')!;
        await produce(kafka, framed.c, framed.world, size.levels, size.n, { registry, id });
      }
      const baselineMs = await baseline(kafka, c, size.n, groups);
      // Plain first in odd runs, framed first in even ones, so neither always meets the warmer engine.
      const plainFirst = k % 2 === 1 || !framed;
      const framedRun = async () => (framed ? (await realPath(kafka, framed.c, framed.world, size.n, groups, r, registry, 'framed')).processMs : undefined);
      const framedBefore = plainFirst ? undefined : await framedRun();
      const real = await realPath(kafka, c, world, size.n, groups, r, registry, 'plain');
      const framedMs = plainFirst ? await framedRun() : framedBefore;
      reps.push({ levels: size.levels, n: size.n, ...produced, baselineMs, ...real, ...(framedMs === undefined ? {} : { framedMs }) });
      await drop(c);
      if (framed) await drop(framed.c);
    }
    results.push(reps);
  }

  let fresh: FreshMinute[] = [];
  if (FRESH_MINUTES > 0) {
    const world = benchWorld({ pairs: FRESH_PAIRS, exchangePrefix: 'livex' });
    await loadFixture({ ...world.fixture, users: [] }, { reference, users });
    const c = await topicsFor('live', { latenessMs: LATENESS_S * 1000 });
    fresh = await freshness(kafka, c, world, r, registry);
  }
  return figuresOf(results, fresh);
}

/** md.orderbook's schema under a prefix's subject, as the service registers it at start (which also puts it in the client's cache by id). */
function registerOrderBook(registry: Registry, c: Config, r: BenchRun): Promise<Map<SchemaTopic, number>> {
  return registerTopicSchemas(registry, c, r.log, new Map([['md.orderbook', bundledSchema('md.orderbook')]]));
}

/** Sends n snapshots, a few sends queued (the producer sends them in turn); prints progress. With `framing`, each value is Confluent-framed by the registry client. */
async function produce(kafka: Kafka, c: Config, world: BenchWorld, levels: number, n: number, framing?: { registry: Registry; id: number }): Promise<{ bytes: number; produceMs: number }> {
  const producer = createProducer(kafka);
  await producer.connect();
  const gen = new BookGenerator(world.pairs, levels);
  const topic = topicName(c, 'md.orderbook');
  const P = world.pairs.length;
  // Minutes old enough to be history, each pair's snapshots evenly over SPAN_MS of event
  // time: minutes close by the watermark (120 s lateness by default) as the run goes, the
  // last ones after the processor's idle time.
  const t0 = Math.floor((Date.now() - 6 * 3600_000) / 60_000) * 60_000;
  const step = Math.max(1, Math.floor(SPAN_MS / Math.ceil(n / P)));
  const jitter = world.pairs.map((_, i) => (i * 7919) % step);
  say(NAME, `each pair: ${fmtInt(Math.ceil(n / P))} snapshots over ${SPAN_MS / 60_000} minutes of event time (one every ${fmtMs(step)}), ${levels} levels a side`);
  const perSend = Math.max(20, Math.floor(600_000 / (levels * 2 * 22 + 120)));
  const inFlight = new Set<Promise<unknown>>();
  let bytes = 0;
  let sent = 0;
  let lastPrint = performance.now();
  const started = performance.now();
  for (let k = 0; sent < n; k++) {
    const batch: { key: string; value: string | Buffer }[] = [];
    for (let i = 0; i < P && sent + batch.length < n; i++) {
      const t = t0 + k * step + jitter[i]!;
      const book = gen.book(i, ISO ? new Date(t).toISOString() : t);
      const value = framing ? await framing.registry.client.encode(framing.id, book) : JSON.stringify(book);
      bytes += value.length;
      batch.push({ key: `${book.exchange}:${book.pair}`, value });
    }
    for (let j = 0; j < batch.length; j += perSend) {
      const p = producer.send({ topic, messages: batch.slice(j, j + perSend) });
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p)).catch(() => undefined);
      if (inFlight.size >= 6) await Promise.race(inFlight);
    }
    sent += batch.length;
    if (performance.now() - lastPrint > 2000) {
      lastPrint = performance.now();
      say(NAME, `producing: ${fmtInt(sent)}/${fmtInt(n)} (${fmtInt(sent / ((lastPrint - started) / 1000))}/s)`);
    }
  }
  await Promise.all(inFlight);
  const produceMs = performance.now() - started;
  await producer.disconnect();
  say(NAME, `produced ${fmtInt(n)} ${framing ? 'framed ' : ''}snapshots, ${(bytes / 2 ** 20).toFixed(0)} MiB (${fmtInt(bytes / n)} B each), in ${fmtMs(produceMs)}`);
  return { bytes, produceMs };
}

/** A consumer group that only consumes and parses: the upper bound of any processor. */
async function baseline(kafka: Kafka, c: Config, n: number, groups: string[]): Promise<number> {
  const groupId = `${c.topicPrefix}bench.baseline`;
  groups.push(groupId);
  // The same consumer settings and batch loop as processors/shell/batch-consumer.ts.
  const consumer = kafka.consumer({ groupId, sessionTimeout: 30_000, heartbeatInterval: 3_000, maxBytesPerPartition: FETCH_BYTES });
  await consumer.connect();
  await consumer.subscribe({ topic: topicName(c, 'md.orderbook'), fromBeginning: true });
  let seen = 0;
  let first = 0;
  let last = 0;
  let sink = 0;
  await consumer.run({
    autoCommit: false,
    eachBatchAutoResolve: false,
    partitionsConsumedConcurrently: 3,
    // Clocked like the real path: from the start of the first batch to the end of the batch
    // holding the n-th message.
    eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
      if (first === 0 && batch.messages.length > 0) first = performance.now();
      for (const message of batch.messages) {
        if (!isRunning() || isStale()) break;
        const parsed = JSON.parse(message.value?.toString('utf8') ?? 'null') as { bids?: unknown[] } | null;
        sink += parsed?.bids?.length ?? 0;
        resolveOffset(message.offset);
        seen++;
      }
      await heartbeat();
      if (last === 0 && seen >= n) last = performance.now();
    },
  });
  say(NAME, 'baseline: consume + JSON.parse only...');
  const ok = await until(async () => seen >= n, 600_000, 20);
  await consumer.stop();
  await consumer.disconnect();
  if (!ok || sink === 0) throw new Error(`baseline consumer saw ${seen} of ${n} messages`);
  const ms = last - first;
  say(NAME, `baseline: ${fmtInt(n)} in ${fmtMs(ms)} = ${fmtInt(n / (ms / 1000))}/s`);
  return ms;
}

/** The order-book processor, in its thread as ops/service.ts runs it, timed by the batches it reports. */
async function realPath(
  kafka: Kafka,
  c: Config,
  world: BenchWorld,
  n: number,
  groups: string[],
  r: BenchRun,
  registry: Registry,
  what: 'plain' | 'framed',
): Promise<Pick<SizeResult, 'processMs' | 'endToEndMs' | 'writtenAtProcessed' | 'stats' | 'loop'>> {
  const { log } = r;
  const ch = openClickHouse(c, 'ingest-orderbook', INGEST_CLICKHOUSE);
  const probe = openClickHouse(c, 'bench-probe');
  groups.push(c.topicPrefix + ORDERBOOK_GROUP);
  const schemaIds = await registerOrderBook(registry, c, r);
  const handled = () => consumer.stats.ok + consumer.stats.skipped + consumer.stats.deadLettered;
  // From the start of the first batch with messages to the end of the batch after which all
  // n are handled, as the thread's clock tells them.
  const clock = { first: 0, reachedAt: 0 };
  const consumer = new ThreadedConsumer('orderbook', topicName(c, 'md.orderbook'), {
    config: c,
    schemaIds,
    ch,
    rates: new QuoteRates(),
    log,
    minuteEvents: false,
    onBatch: (b) => {
      if (b.firstBatchAt > 0) clock.first = b.firstBatchAt;
      if (clock.reachedAt === 0 && b.stats.ok + b.stats.skipped + b.stats.deadLettered >= n) clock.reachedAt = b.endedAt;
    },
  });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await consumer.stop();
    await Promise.allSettled([ch, probe].map((x) => x.close()));
  };
  r.onCleanup(stop);

  const written = async () => {
    const rows = await probe.query<{ n: number }>('SELECT toUInt64(sum(samples)) AS n FROM book_minutes FINAL WHERE exchange IN {ex:Array(String)}', { ex: world.exchanges });
    return Number(rows[0]?.n ?? 0);
  };
  say(NAME, `real path, ${what} snapshots: order-book processor -> embedded ClickHouse (lateness ${c.latenessMs / 1000} s)...`);
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  await consumer.start();
  let lastPrint = performance.now();
  const done = await until(
    async () => {
      if (clock.first > 0 && performance.now() - lastPrint > 2000) {
        lastPrint = performance.now();
        say(NAME, `processing: ${fmtInt(handled())}/${fmtInt(n)} (${fmtInt(handled() / ((Date.now() - clock.first) / 1000))}/s)`);
      }
      return clock.reachedAt > 0;
    },
    900_000,
    20,
  );
  delay.disable();
  if (!done) throw new Error(`the processor handled ${handled()} of ${n} messages`);
  const loop = { p99Ms: delay.percentile(99) / 1e6, maxMs: delay.max / 1e6 };
  const processMs = clock.reachedAt - clock.first;
  const writtenAtProcessed = await written();
  say(NAME, `processed ${fmtInt(n)} in ${fmtMs(processMs)} = ${fmtInt(n / (processMs / 1000))}/s; ${fmtInt(writtenAtProcessed)} of them already in minute rows; waiting for the rest (idle closure)...`);
  const expected = () => consumer.stats.ok;
  const complete = await until(async () => (await written()) >= expected(), 120_000, 100);
  const endToEndMs = Date.now() - clock.first;
  if (!complete) throw new Error(`minute rows hold ${await written()} samples, expected ${expected()}`);
  const { ok, skipped, deadLettered } = consumer.stats;
  say(NAME, `all ${fmtInt(ok)} samples in book_minutes after ${fmtMs(endToEndMs)} (skipped ${skipped}, dead-lettered ${deadLettered})`);
  await stop();
  return { processMs, endToEndMs, writtenAtProcessed, stats: { ok, skipped, deadLettered }, loop };
}

/**
 * The processor live (current event times, a short lateness): every pair sends once a
 * second; for each measured minute, the time from minute end + lateness until every
 * pair's row of that minute is in ClickHouse.
 */
async function freshness(kafka: Kafka, c: Config, world: BenchWorld, r: BenchRun, registry: Registry): Promise<FreshMinute[]> {
  const { log } = r;
  const ch = openClickHouse(c, 'ingest-orderbook-live', INGEST_CLICKHOUSE);
  const probe = openClickHouse(c, 'bench-probe-live');
  const consumer = new ThreadedConsumer('orderbook', topicName(c, 'md.orderbook'), { config: c, schemaIds: await registerOrderBook(registry, c, r), ch, rates: new QuoteRates(), log, minuteEvents: false });
  const producer = createProducer(kafka);
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    if (timer) clearInterval(timer);
    await producer.disconnect().catch(() => undefined);
    await consumer.stop();
    await Promise.allSettled([ch, probe].map((x) => x.close()));
  };
  r.onCleanup(stop);
  await consumer.start();
  await producer.connect();

  // Ten sends a second, each with a tenth of the pairs: every pair once a second.
  const gen = new BookGenerator(world.pairs, 20);
  const topic = topicName(c, 'md.orderbook');
  const slices = 10;
  const arrivals = new Map<number, { pairs: Set<number>; lastAck: number }>();
  let slice = 0;
  let sendErrors = 0;
  const tick = () => {
    const now = Date.now();
    const messages: { key: string; value: string }[] = [];
    const idx: number[] = [];
    for (let i = slice; i < world.pairs.length; i += slices) {
      const book = gen.book(i, ISO ? new Date(now).toISOString() : now);
      messages.push({ key: `${book.exchange}:${book.pair}`, value: JSON.stringify(book) });
      idx.push(i);
    }
    slice = (slice + 1) % slices;
    const minute = Math.floor(now / 60_000) * 60_000;
    producer
      .send({ topic, messages })
      .then(() => {
        const a = arrivals.get(minute) ?? { pairs: new Set<number>(), lastAck: 0 };
        for (const i of idx) a.pairs.add(i);
        a.lastAck = Math.max(a.lastAck, Date.now());
        arrivals.set(minute, a);
      })
      .catch(() => sendErrors++);
  };
  const feedStart = Date.now();
  timer = setInterval(tick, 1000 / slices);
  tick();

  const firstMinute = Math.floor((feedStart + 2_000) / 60_000) * 60_000;
  const lateness = c.latenessMs;
  say(NAME, `freshness: live processor (lateness ${lateness / 1000} s), ${world.pairs.length} pairs once a second; measuring ${FRESH_MINUTES} minutes from ${new Date(firstMinute).toISOString()}, ready by ~${new Date(firstMinute + FRESH_MINUTES * 60_000 + lateness + 2000).toISOString().slice(11, 19)}...`);
  const out: FreshMinute[] = [];
  const marks = new RollupMarks(probe);
  for (let k = 0; k < FRESH_MINUTES; k++) {
    const minute = firstMinute + k * 60_000;
    const deadline = minute + 60_000 + lateness;
    await sleep(Math.max(0, deadline - Date.now() - 200));
    const expected = arrivals.get(minute)?.pairs.size ?? 0;
    let first = 0;
    // Queryable in any window: the minute row, and, for an hour before the processors' mark
    // (windows read whole hours from book_hours only there), the hour row counting it: each
    // pair's hour counts at least its minute rows of that hour up to this minute. The hour
    // of the mark on is read from its minutes (domain/market/window.ts).
    const hour = Math.floor(minute / 3_600_000) * 3_600_000;
    const visible = await until(
      async () => {
        const rows = await probe.query<{ n: number }>('SELECT count() AS n FROM book_minutes FINAL WHERE exchange IN {ex:Array(String)} AND minute = toDateTime({m:UInt32}, \'UTC\')', {
          ex: world.exchanges,
          m: minute / 1000,
        });
        const n = Number(rows[0]?.n ?? 0);
        if (n > 0 && first === 0) first = Date.now();
        if (expected === 0 || n < expected) return false;
        // From the mark's hour on, readers read the minute row, or once the mark (inside the
        // hour) passes it, the open hour's rows written before the mark.
        const mark = (await marks.read('book_minutes')) ?? Infinity;
        if (hour >= Math.floor(mark / 3_600_000) * 3_600_000) return true;
        const hours = await probe.query<{ n: number }>(
          `SELECT count() AS n
           FROM (SELECT exchange, pair, sum(minutes) AS k FROM book_hours FINAL
                 WHERE exchange IN {ex:Array(String)} AND bucket = toDateTime({h:UInt32}, 'UTC') GROUP BY exchange, pair) AS h
           INNER JOIN (SELECT exchange, pair, count() AS c FROM book_minutes FINAL
                 WHERE exchange IN {ex:Array(String)} AND minute >= toDateTime({h:UInt32}, 'UTC') AND minute <= toDateTime({m:UInt32}, 'UTC')
                 GROUP BY exchange, pair) AS mm USING (exchange, pair)
           WHERE h.k >= mm.c`,
          { ex: world.exchanges, h: hour / 1000, m: minute / 1000 },
        );
        return Number(hours[0]?.n ?? 0) >= expected;
      },
      60_000,
      50,
    );
    if (!visible) throw new Error(`minute ${new Date(minute).toISOString()} was not complete 60 s after its lateness ended`);
    const all = Date.now();
    const m: FreshMinute = { minute, pairs: expected, firstMs: first - deadline, allMs: all - deadline, fromLastArrivalMs: all - (arrivals.get(minute)?.lastAck ?? all) };
    out.push(m);
    say(NAME, `minute ${new Date(minute).toISOString().slice(11, 16)}: first row ${fmtMs(m.firstMs)}, all ${m.pairs} rows ${fmtMs(m.allMs)} after its lateness ended (${fmtMs(m.fromLastArrivalMs)} after its last snapshot arrived)`);
  }
  if (sendErrors > 0) say(NAME, `warning: ${sendErrors} sends of the live feed failed`);
  await stop();
  return out;
}

function figuresOf(results: SizeResult[][], fresh: FreshMinute[]): Figure[] {
  const f: Figure[] = [];
  // The median of the runs, with their range when there are several.
  const med = (xs: number[], fmt: (x: number) => string) =>
    xs.length === 1 ? fmt(xs[0]!) : `${fmt(percentile(xs, 50))} (${fmt(Math.min(...xs))}-${fmt(Math.max(...xs))})`;
  for (const reps of results) {
    const { levels, n } = reps[0]!;
    const base = reps.map((s) => s.n / (s.baselineMs / 1000));
    const rate = reps.map((s) => s.n / (s.processMs / 1000));
    const ratio = reps.map((s) => s.baselineMs / s.processMs);
    const e2e = reps.map((s) => s.n / (s.endToEndMs / 1000));
    const written = reps.map((s) => s.writtenAtProcessed / s.n);
    const goal = levels === 20;
    const runs = reps.length === 1 ? '' : `, median of ${reps.length} runs`;
    f.push({ figure: `${levels} levels: baseline, consume + JSON.parse${runs}`, value: `${med(base, fmtInt)} snapshots/s`, goal: '—', result: 'info' });
    f.push({
      figure: `${levels} levels: processor, consumed + processed${runs}`,
      value: `${med(rate, fmtInt)} snapshots/s`,
      goal: goal ? `≥ ${fmtInt(GOAL_RATE)}/s` : '—',
      result: goal ? check(percentile(rate, 50) >= GOAL_RATE) : 'info',
    });
    f.push({
      figure: `${levels} levels: ratio to baseline (per run)${runs}`,
      value: med(ratio, fmtPct),
      goal: goal ? `≥ ${fmtPct(GOAL_RATIO)}` : '—',
      result: goal ? check(percentile(ratio, 50) >= GOAL_RATIO) : 'info',
    });
    f.push({
      figure: `${levels} levels: event-loop delay while the processor catches up, p99 / max${runs}`,
      value: `${med(reps.map((s) => s.loop.p99Ms), fmtMs)} / ${med(reps.map((s) => s.loop.maxMs), fmtMs)}`,
      goal: goal ? `p99 < ${GOAL_LOOP_P99_MS} ms (what an API request in the process would wait)` : '— (what an API request in the process would wait)',
      result: goal ? check(percentile(reps.map((s) => s.loop.p99Ms), 50) < GOAL_LOOP_P99_MS) : 'info',
    });
    const framed = reps.filter((s) => s.framedMs !== undefined);
    if (framed.length > 0) {
      const framedRate = framed.map((s) => s.n / (s.framedMs! / 1000));
      const framedRatio = framed.map((s) => s.baselineMs / s.framedMs!);
      const share = framed.map((s) => s.processMs / s.framedMs!);
      f.push({ figure: `${levels} levels: processor, Confluent-framed snapshots${runs}`, value: `${med(framedRate, fmtInt)} snapshots/s`, goal: '—', result: 'info' });
      f.push({ figure: `${levels} levels: framed, ratio to baseline (per run)${runs}`, value: med(framedRatio, fmtPct), goal: '—', result: 'info' });
      f.push({
        figure: `${levels} levels: framed rate / plain rate (same run)${runs}`,
        value: med(share, fmtPct),
        goal: `≥ ${fmtPct(GOAL_FRAMED)}`,
        result: check(percentile(share, 50) >= GOAL_FRAMED),
      });
    }
    f.push({
      figure: `${levels} levels: until every minute row is written${runs}`,
      value: `${med(e2e, fmtInt)} snapshots/s (${fmtPct(percentile(written, 50))} written when the last of ${fmtInt(n)} was processed)`,
      goal: '— (includes the 5 s idle closure)',
      result: 'info',
    });
  }
  if (fresh.length > 0) {
    const all = fresh.map((m) => m.allMs);
    const worst = Math.max(...all);
    f.push({
      figure: `freshness: lateness end -> minute queryable (all ${fresh[0]!.pairs} pairs), p50 / max of ${fresh.length} minutes`,
      value: `${fmtMs(percentile(all, 50))} / ${fmtMs(worst)}`,
      goal: `≤ ${GOAL_FRESH_MS / 1000} s`,
      result: check(worst <= GOAL_FRESH_MS),
    });
    f.push({
      figure: `freshness: last snapshot of a minute arrived -> queryable (lateness ${LATENESS_S} s), max`,
      value: fmtMs(Math.max(...fresh.map((m) => m.fromLastArrivalMs))),
      goal: '—',
      result: 'info',
    });
  }
  return f;
}

// Last, so every constant above is initialised before the run starts.
await runBench(NAME, main);
