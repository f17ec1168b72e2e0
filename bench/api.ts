// npm run bench:api — the market endpoints over 30 days of minute history.
//
// Starts the service (API + processors, embedded ClickHouse in a fresh folder), loads the
// reference data of 300 pairs through the fixture loader and 30 days of their minute rows
// (book, trade, derivative) generated inside ClickHouse with INSERT ... SELECT ... FROM
// numbers(), with their hour and day rollups filled as ingestion fills them (by the
// processors' Rollups).
// Then, for summary (7 days), leaderboard (page 1 by volume, 7 days) and spread uptime (1h
// buckets over 7 days), asked by a staff user (all pairs) and by a regular user (the 100
// assets of its project, the per-request bound of a regular user), it times N requests over HTTP and N runs of the
// very SQL the endpoint ran (recorded from the API's connection: MarketRepository's
// queries with their bound values) on a ClickHouse connection of its own ("bare"); first
// with the service idle, then while a synthetic feed (another process) sends books, trades
// and perpetual data for those pairs through Kafka and the processors ingest them.
import { fork } from 'node:child_process';
import http from 'node:http';
import type { Kafka } from 'kafkajs';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { SyntheticMarket, type MarketTick, type SyntheticPair } from '../ingest/synthetic/market.ts';
import type { Timestamp } from '../schemas/index.ts';
import type { ClickHouseSettings } from '@clickhouse/client';
import { openClickHouse, watchStatementLine, type ClickHouse, type Params } from '../lib/clickhouse.ts';
import type { Turn } from '../lib/statement-queue.ts';
import type { Config } from '../lib/config.ts';
import { createProducer, createKafka, dlqTopicName, topicName } from '../lib/kafka.ts';
import { deleteSubjects } from '../schemas/registration.ts';
import { createLogger } from '../lib/log.ts';
import { DERIVATIVES_GROUP } from '../processors/derivatives/processor.ts';
import { apiWorld, ensureHistory, minuteRows, type Loaded } from './api-data.ts';
import { runStatements, writeStatements, type Captured } from './statements.ts';
import { LockstepChild } from './lockstep.ts';
import { ORDERBOOK_GROUP } from '../processors/orderbook/processor.ts';
import { TRADES_GROUP } from '../processors/trades/processor.ts';
import { API_CLICKHOUSE, startService, type Service } from '../ops/service.ts';
import { HISTORY_FLAGS, SERIES_FLAGS, check, deleteTopicsAndGroups, flags, fmtInt, fmtMs, percentile, positiveInt, say, sleep, until, type BenchRun, type BenchWorld, type Figure, dropRedisKeys, runBench } from './common.ts';

const NAME = 'bench:api';
const opt = flags(
  NAME,
  {
    pairs: { default: '300', help: 'pairs (a third of them perpetuals)' },
    days: { default: '30', help: 'days of minute history loaded' },
    requests: { default: '100', help: 'timed requests (and bare runs) per query and phase: a p95 of fewer moves by more than the 10 % a goal allows' },
    warmup: { default: '3', help: 'untimed requests before each series' },
    'ingest-rate': { default: '3000', help: 'order-book snapshots/s of the feed during the second phase (plus its trades and perpetual data)' },
    'ingest-warmup': { default: '20', help: 'seconds the feed runs before the second phase is timed' },
    lateness: { default: '30', help: 'LATENESS_SECONDS of the service: short, so minutes close (and rows are written) during the second phase' },
    'ingesting-seconds': { default: '65', help: 'least seconds per timed series while ingesting (more requests than --requests), so each series sees a minute close with its rollups' },
    'keep-data': { default: '', help: 'keep the data folder here, and reuse the history already loaded in it (same --pairs and --days)' },
    phases: { default: 'idle,ingesting', help: 'the phases to time, of "idle" and "ingesting" (e.g. "idle", to look at an idle service alone)' },
    only: { default: '', help: 'time only the queries whose name contains this, or one of these separated by | (e.g. "uptime"), to iterate faster' },
    'dump-sql': { default: '', help: 'write the SQL each endpoint ran, with its bound values, to this JSON file (to EXPLAIN or time it by hand)' },
    explain: { default: 'no', help: '"yes": print the parts, rows and marks each recorded statement reads (EXPLAIN ESTIMATE), per series and phase' },
    'samples-json': { default: '', help: 'write every series\' timings and the ingest figures to this JSON file (bench/api-scale.ts compares two sizes from them)' },
    lockstep: { default: 'no', help: '"yes": time the idle phase\'s requests in turns with another run, as its parent says (bench:api-scale --interleave; bench/lockstep.ts)' },
    ...HISTORY_FLAGS,
    ...SERIES_FLAGS,
  },
  'p50/p95 of summary, leaderboard and spread uptime over HTTP, for staff (all pairs) and a regular user (100 assets), against the bare query, idle and while ingesting',
);
const PAIRS = positiveInt('pairs', opt.pairs);
const DAYS = positiveInt('days', opt.days);
const REQUESTS = positiveInt('requests', opt.requests);
const WARMUP = Number(opt.warmup);
const INGEST_RATE = positiveInt('ingest-rate', opt['ingest-rate']);
const INGEST_WARMUP_S = Number(opt['ingest-warmup']);
const LATENESS_S = positiveInt('lateness', opt.lateness);
const SETTLE_S = Number(opt.settle);
const KEEP_DATA = opt['keep-data'];
const LOAD_ONLY = opt['load-only'] === 'yes';
if (LOAD_ONLY && !KEEP_DATA) throw new Error('--load-only yes needs --keep-data <folder>');
const LOAD_CONNECTIONS = positiveInt('load-connections', opt['load-connections']);
const SERIES_MS = positiveInt('series-seconds', opt['series-seconds']) * 1000;
const MIN_REQUESTS = Math.min(5, REQUESTS);
const INGESTING_MS = positiveInt('ingesting-seconds', opt['ingesting-seconds']) * 1000;
const LOCKSTEP = opt.lockstep === 'yes';
if (LOCKSTEP && opt.phases !== 'idle') throw new Error('--lockstep yes: with --phases idle (two runs ingesting at once would share one machine\'s feed work)');

const GOAL_P95_MS = 250;

interface QuerySpec {
  name: string;
  /** Who asks: staff see every pair; the user, those of its project's assets. */
  as: 'staff' | 'user';
  method: 'GET' | 'POST';
  path: string;
  body?: Record<string, unknown>;
  /**
   * Empty the API's caches of sealed buckets and pieces before each request: `first`, as
   * after a restart (the view never asked for: answered without filling them); `seen`,
   * keeping what was asked for (the view asked before: everything computed and kept).
   */
  cold?: 'first' | 'seen';
}

// Built here because the queries' names give its counts (cheap; the feed and client
// processes, this script again, build it too and leave it unused). The user names no
// assets: the endpoints answer on its organization's assets (callerScope).
const WORLD = apiWorld(PAIRS);
const STAFF = `staff (all ${WORLD.pairs.length} pairs)`;
const USER = `user (${WORLD.user.assets.length} assets, ${WORLD.user.pairs} pairs)`;

type Request = Pick<QuerySpec, 'method' | 'path' | 'body'>;
const SUMMARY: Request = { method: 'POST', path: '/v2/metrics/summary/', body: { lookback: '7-days' } };
const LEADERBOARD: Request = { method: 'POST', path: '/v2/leaderboard/', body: { lookback: '7-days', page: 1, sort_by: 'volume' } };
const UPTIME: Request = { method: 'GET', path: '/v2/metrics/uptime/spread/?interval=1h&lookback=7-days' };

const QUERIES: QuerySpec[] = [
  { name: `${STAFF}: summary (7 days)`, as: 'staff', ...SUMMARY },
  { name: `${STAFF}: leaderboard (page 1 by volume, 7 days)`, as: 'staff', ...LEADERBOARD },
  { name: `${STAFF}: spread uptime (1h buckets, 7 days)`, as: 'staff', ...UPTIME },
  { name: `${STAFF}: summary, first asked (caches emptied)`, as: 'staff', ...SUMMARY, cold: 'first' },
  { name: `${STAFF}: summary, asked before (caches emptied)`, as: 'staff', ...SUMMARY, cold: 'seen' },
  { name: `${STAFF}: spread uptime, first asked (caches emptied)`, as: 'staff', ...UPTIME, cold: 'first' },
  { name: `${STAFF}: spread uptime, asked before (caches emptied)`, as: 'staff', ...UPTIME, cold: 'seen' },
  { name: `${USER}: summary (7 days)`, as: 'user', ...SUMMARY },
  { name: `${USER}: leaderboard (page 1 by volume, 7 days)`, as: 'user', ...LEADERBOARD },
  { name: `${USER}: spread uptime (1h buckets, 7 days)`, as: 'user', ...UPTIME },
  { name: `${USER}: summary, first asked (caches emptied)`, as: 'user', ...SUMMARY, cold: 'first' },
  { name: `${USER}: leaderboard, first asked (caches emptied)`, as: 'user', ...LEADERBOARD, cold: 'first' },
  { name: `${USER}: spread uptime, first asked (caches emptied)`, as: 'user', ...UPTIME, cold: 'first' },
];

const PHASES = opt.phases.split(',').map((p) => p.trim());
if (PHASES.length === 0 || PHASES.some((p) => p !== 'idle' && p !== 'ingesting')) throw new Error(`--phases ${opt.phases}: give "idle", "ingesting" or both, separated by a comma`);
const SELECTED = QUERIES.filter((q) => opt.only.split('|').some((part) => q.name.includes(part)));
if (SELECTED.length === 0) throw new Error(`--only ${opt.only}: no query's name contains it (${QUERIES.map((q) => q.name).join('; ')})`);

/**
 * Records the market queries the API's ClickHouse connection runs (those of
 * domain/market/repositories/: they bind `pairs` and `tz`, or read the write counts of
 * market_writes) while `recording` is set: parsed rows (query) and output ClickHouse
 * writes in its final form (jsonArray and jsonLines, the uptime rows).
 */
class QueryRecorder {
  recording: Captured[] | undefined;
  private running = 0;
  private wave = 0;

  constructor(ch: ClickHouse) {
    const query: ClickHouse['query'] = ch.query.bind(ch);
    const jsonArray: ClickHouse['jsonArray'] = ch.jsonArray.bind(ch);
    const jsonLines: ClickHouse['jsonLines'] = ch.jsonLines.bind(ch);
    const market = (sql: string, params?: Params): params is Params =>
      !!this.recording && !!params && (('pairs' in params && 'tz' in params) || /\bmarket_writes\b/.test(sql));
    /** Records a market query and when it ran: with others (the same wave) or after them. */
    const record = <T>(sql: string, params: Params | undefined, extra: Partial<Captured>, run: () => Promise<T>): Promise<T> => {
      if (!market(sql, params)) return run();
      if (this.running === 0) this.wave++;
      this.recording!.push({ sql, params, ...extra, wave: this.wave });
      this.running++;
      return run().finally(() => this.running--);
    };
    ch.query = <T>(sql: string, params?: Params, settings?: ClickHouseSettings): Promise<T[]> => record(sql, params, {}, () => query<T>(sql, params, settings));
    ch.jsonArray = (sql: string, columns: string[], params?: Params) => record(sql, params, { jsonColumns: columns }, () => jsonArray(sql, columns, params));
    ch.jsonLines = (sql: string, keys: string[], columns: string[], params?: Params) =>
      record(sql, params, { jsonColumns: columns, jsonKeys: keys }, () => jsonLines(sql, keys, columns, params));
  }
}

interface Series {
  http: number[];
  bare: number[];
  bytes: number;
  rows: number;
  /** Book minute rows the processors wrote during the series. */
  written: number;
  /** The service's event-loop delay during the series (ms): what a request waits for its turns. */
  loopDelay: { p99: number; max: number };
  /** The embedded engine's line of bound statements during the series (absent on a server). */
  line?: LineFigures;
}

/**
 * What waited in the line of bound statements (lib/statement-queue.ts) during a series:
 * the urgent statements (priority 1: the API's and the bare runs'), and ingestion's,
 * which a request waits for when one holds the line as it arrives.
 */
interface LineFigures {
  urgentWait: { p95: number; max: number };
  ingest: { statements: number; heldMs: number; longestMs: number };
}

function lineFigures(turns: Turn[]): LineFigures | undefined {
  if (turns.length === 0) return undefined;
  const urgent = turns.filter((t) => t.priority <= 1).map((t) => t.waitedMs);
  const ingest = turns.filter((t) => t.priority > 1).map((t) => t.heldMs);
  return {
    urgentWait: { p95: urgent.length ? percentile(urgent, 95) : 0, max: urgent.length ? Math.max(...urgent) : 0 },
    ingest: { statements: ingest.length, heldMs: ingest.reduce((a, b) => a + b, 0), longestMs: ingest.length ? Math.max(...ingest) : 0 },
  };
}

const fmtLine = (l: LineFigures | undefined): string =>
  l
    ? `; line: requests waited p95 ${fmtMs(l.urgentWait.p95)}, max ${fmtMs(l.urgentWait.max)}; ingestion held it ${fmtMs(l.ingest.heldMs)} in ${fmtInt(l.ingest.statements)} statements, the longest ${fmtMs(l.ingest.longestMs)}`
    : '';

type Phase = 'idle' | 'ingesting';

async function main(r: BenchRun): Promise<Figure[]> {
  const { config, log, runId } = r;
  const redisPrefix = `mmbench:${runId}:`;
  const kafka = createKafka(config, 'mm-bench-api', log.child('kafka'));
  r.onCleanup(() => deleteTopicsAndGroups(kafka, config, [ORDERBOOK_GROUP, TRADES_GROUP, DERIVATIVES_GROUP].map((g) => config.topicPrefix + g)));
  r.onCleanup(() => dropRedisKeys(config.redisUrl, redisPrefix));

  say(NAME, 'starting the service (API + processors, embedded ClickHouse)...');
  const service = await startService(config, log, { redisPrefix });
  r.onCleanup(() => deleteSubjects(service.registry, config));
  r.onCleanup(() => service.stop());
  const world = WORLD;
  const summary = await service.deps.loadFixture(world.fixture);
  say(
    NAME,
    `reference data loaded: ${summary.exchanges} exchanges, ${summary.assets} assets, ${summary.pairs} pairs, a staff user and a regular user of ${world.user.organization} (${world.user.assets.length} assets: ${world.user.assets[0]} to ${world.user.assets.at(-1)}, ${world.user.pairs} pairs)`,
  );

  const bare = openClickHouse(config, 'bench-bare', API_CLICKHOUSE);
  r.onCleanup(() => bare.close());
  const loaded = await ensureHistory(NAME, config, world, { pairs: PAIRS, days: DAYS, connections: LOAD_CONNECTIONS, keep: !!KEEP_DATA, settleSeconds: SETTLE_S });
  if (LOAD_ONLY) return [];

  const tokens: Record<QuerySpec['as'], string> = { staff: await login(service, world.staff), user: await login(service, world.user) };
  const recorder = new QueryRecorder(service.deps.ch);
  const client = new HttpClient();
  r.onCleanup(() => client.stop());

  const results = new Map<string, Series>();
  const lockstep = LOCKSTEP ? new LockstepChild() : undefined;
  const measure = async (phase: Phase) => {
    for (const q of SELECTED) {
      const s = await series(service, client, tokens[q.as], bare, recorder, q, phase, lockstep);
      results.set(`${phase}:${q.name}`, s);
    }
  };

  if (PHASES.includes('idle')) {
    say(NAME, `--- phase 1: service idle; ${REQUESTS} requests per query ---`);
    await measure('idle');
  }
  const ingest = PHASES.includes('ingesting') ? await whileIngesting(r, { kafka, service, world, bare, measure }) : undefined;
  if (opt['samples-json']) writeSamples(opt['samples-json'], results, ingest);
  return figuresOf(results, loaded, ingest);
}

type Ingest = { books: number; trades: number; all: number; sent: number; dead: number; rows: number; seconds: number; machineCores: number; serviceCores: number };

/** Phase 2: the feed runs while the selected series are timed again; what ingestion did meanwhile. */
async function whileIngesting(
  r: BenchRun,
  { kafka, service, world, bare, measure }: { kafka: Kafka; service: Service; world: BenchWorld; bare: ClickHouse; measure: (phase: Phase) => Promise<void> },
): Promise<Ingest> {
  const { config } = r;
  say(NAME, `--- phase 2: while ingesting (${fmtInt(INGEST_RATE)} snapshots/s for ${world.pairs.length} pairs, plus trades and perpetual data) ---`);
  const intervalMs = Math.max(10, Math.round((1000 * world.pairs.length) / INGEST_RATE));
  let feed: Feed | undefined = await startFeed(config, world, intervalMs);
  r.onCleanup(async () => {
    await feed?.stop();
  });
  // Messages handled per processor (written, skipped, dead-lettered) and dead letters.
  const stats = () => new Map(service.consumers.map((c) => [c.name.replace(config.topicPrefix, ''), { ...c.stats }]));
  const handled = (x: { ok: number; skipped: number; deadLettered: number } | undefined) => (x ? x.ok + x.skipped + x.deadLettered : 0);
  say(NAME, `feed running (one tick of every pair each ${intervalMs} ms, the pairs spread over it in slices each ${fmtMs(feedSlices(intervalMs).sliceMs)}); letting the processors warm up for ${INGEST_WARMUP_S} s and write their first minutes...`);
  // Timed only once the first live minutes are written: from then on every minute closes
  // (rows, rollups) while the requests run, as on a service that has been up a while.
  const rowsAtStart = await minuteRows(bare);
  await sleep(INGEST_WARMUP_S * 1000);
  if (!(await until(async () => (await minuteRows(bare)) > rowsAtStart, 180_000, 500))) throw new Error('no live minute row was written within 3 minutes of the feed starting');
  const before = stats();
  const sentBefore = feed.sent();
  const rowsBefore = await minuteRows(bare);
  const cpuBefore = { machine: machineCpu(), service: process.cpuUsage() };
  const t0 = performance.now();
  await measure('ingesting');
  const seconds = (performance.now() - t0) / 1000;
  const machineAfter = machineCpu();
  const serviceCpu = process.cpuUsage(cpuBefore.service);
  const after = stats();
  const sent = feed.sent() - sentBefore;
  const rowsAfter = await minuteRows(bare);
  await feed.stop();
  feed = undefined;
  const rate = (topic: string) => (handled(after.get(topic)) - handled(before.get(topic))) / seconds;
  const dead = [...after].reduce((n, [topic, st]) => n + st.deadLettered - (before.get(topic)?.deadLettered ?? 0), 0);
  const ingest = { books: rate('md.orderbook'), trades: rate('md.trades'), all: [...after.keys()].reduce((n, t) => n + rate(t), 0), sent: sent / seconds, dead, rows: rowsAfter - rowsBefore, seconds,
    // Cores busy on average: the whole machine (feed, broker, client, service) and this process (API, processors, ClickHouse, bare runs).
    machineCores: (machineAfter.busy - cpuBefore.machine.busy) / (machineAfter.total - cpuBefore.machine.total) * os.cpus().length,
    serviceCores: (serviceCpu.user + serviceCpu.system) / 1e6 / seconds };
  say(
    NAME,
    `during phase 2 (${ingest.seconds.toFixed(0)} s) the feed sent ${fmtInt(ingest.sent)} messages/s and the processors handled ${fmtInt(ingest.all)}/s (${fmtInt(ingest.books)} snapshots/s, ${fmtInt(ingest.trades)} trades/s; ${dead} dead-lettered); ${fmtInt(ingest.rows)} book minute rows were written`,
  );

  if (dead > 0) say(NAME, `dead letters: ${await dlqReasons(kafka, config)}`);
  return ingest;
}

interface Feed {
  sent(): number;
  stop(): Promise<void>;
}

interface FeedSpec {
  brokers: string[];
  topicPrefix: string;
  pairs: SyntheticPair[];
  intervalMs: number;
}

/**
 * The producer, in a process of its own (this script again, with BENCH_FEED set), as an
 * exchange connector would be: a slow API response in the service's process must not
 * slow the feed down, only the service. Its spec is sent once it says it is ready: in
 * the environment, 3,000 pairs passed the kernel's bound on one variable (spawn E2BIG).
 */
async function startFeed(config: Config, world: BenchWorld, intervalMs: number): Promise<Feed> {
  const spec: FeedSpec = { brokers: config.kafkaBrokers, topicPrefix: config.topicPrefix, pairs: world.fixture.pairs ?? [], intervalMs };
  const child = fork(fileURLToPath(import.meta.url), [], { env: { ...process.env, BENCH_FEED: '1' }, stdio: 'inherit' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let sent = 0;
  let skipped = 0;
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => {
      child.send(spec);
      child.on('message', (m: { sent: number; skipped: number }) => {
        sent = m.sent;
        skipped = m.skipped;
        resolve();
      });
    });
    child.once('exit', (code) => reject(new Error(`the feed process exited (${code}) before sending`)));
  });
  let stopped = false;
  return {
    sent: () => sent,
    async stop() {
      if (stopped) return;
      stopped = true;
      if (child.exitCode === null) child.send('stop');
      const timeout = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timeout);
      if (skipped > 0) say(NAME, `the feed skipped ${skipped} slices of its ticks (the broker did not keep up)`);
    },
  };
}

/**
 * Sends at most this often: every pair still ticks once each `intervalMs`, but the pairs
 * are spread over it in slices, as an exchange connector's books arrive (pairs do not
 * update in step). Without it, 3,000 pairs at 3,000 snapshots/s came as one burst of
 * 3,000 books and 4,500 trades each second, against a tenth of that each 100 ms at 300
 * pairs: the same rate in bursts ten times the size.
 */
const FEED_SLICE_MS = 100;

function feedSlices(intervalMs: number): { slices: number; sliceMs: number } {
  const slices = Math.max(1, Math.round(intervalMs / FEED_SLICE_MS));
  return { slices, sliceMs: intervalMs / slices };
}

/**
 * The feed process: the demo's synthetic market (ingest/synthetic/market.ts: books of 20
 * levels, 0-3 trades per pair per tick, perpetual data every 10 s) for every pair each
 * `intervalMs`, sent in slices of the pairs each FEED_SLICE_MS, every message stamped with
 * the time its slice is sent. Slices due while four sends are in flight are skipped (and
 * counted), so a slow broker does not make the feed pile up.
 */
async function runFeed(spec: FeedSpec): Promise<void> {
  const config = { topicPrefix: spec.topicPrefix };
  const kafka = createKafka({ kafkaBrokers: spec.brokers }, 'mm-bench-feed', createLogger('warn', 'bench:api.feed'));
  const market = new SyntheticMarket(spec.pairs);
  const producer = createProducer(kafka);
  await producer.connect();
  const key = (m: { exchange: string; pair: string }) => `${m.exchange}:${m.pair}`;
  const { slices, sliceMs } = feedSlices(spec.intervalMs);
  const sliceOf = new Map(spec.pairs.map((p, i) => [key(p), i % slices]));
  const inFlight = new Set<Promise<unknown>>();
  let sent = 0;
  let skipped = 0;
  let due = 0;
  /** The current tick (its number), by slice, and when it was generated. */
  let tick: { n: number; at: number; slices: MarketTick[] } | undefined;
  const send = (n: number) => {
    if (tick?.n !== Math.floor(n / slices)) {
      const at = Date.now();
      const t = market.tick(at, spec.intervalMs);
      const parts = Array.from({ length: slices }, (): MarketTick => ({ books: [], trades: [], derivatives: [] }));
      const partOf = (m: { exchange: string; pair: string }) => parts[sliceOf.get(key(m)) ?? 0]!;
      for (const m of t.books) partOf(m).books.push(m);
      for (const m of t.trades) partOf(m).trades.push(m);
      for (const m of t.derivatives) partOf(m).derivatives.push(m);
      tick = { n: Math.floor(n / slices), at, slices: parts };
    }
    const part = tick.slices[n % slices]!;
    const late = Date.now() - tick.at;
    const value = (m: { ts: Timestamp }) => JSON.stringify({ ...m, ts: Number(m.ts) + late });
    const topicMessages = [
      { topic: topicName(config, 'md.orderbook'), messages: part.books.map((m) => ({ key: key(m), value: value(m) })) },
      { topic: topicName(config, 'md.trades'), messages: part.trades.map((m) => ({ key: key(m), value: value(m) })) },
      { topic: topicName(config, 'md.derivatives'), messages: part.derivatives.map((m) => ({ key: key(m), value: value(m) })) },
    ].filter((x) => x.messages.length > 0);
    if (topicMessages.length === 0) return;
    const p = producer.sendBatch({ topicMessages }).then(() => {
      sent += part.books.length + part.trades.length + part.derivatives.length;
    });
    inFlight.add(p);
    void p.catch(() => undefined).finally(() => inFlight.delete(p));
  };
  const started = Date.now();
  const timer = setInterval(() => {
    // Catches up when the timer fires late; skips what four sends in flight leave no room for.
    const now = Math.floor((Date.now() - started) / sliceMs);
    for (; due < now; due++) {
      if (inFlight.size >= 4) skipped++;
      else send(due);
    }
  }, sliceMs);
  const report = setInterval(() => process.send?.({ sent, skipped }), 500);
  process.send?.({ sent, skipped });
  await new Promise<void>((resolve) => process.once('message', () => resolve()));
  clearInterval(timer);
  await Promise.allSettled(inFlight);
  clearInterval(report);
  process.send?.({ sent, skipped });
  await producer.disconnect();
}

/** The reasons of what the processors dead-lettered, counted (numbers and names blurred). */
async function dlqReasons(kafka: Kafka, config: Config): Promise<string> {
  const topics = (['md.orderbook', 'md.trades', 'md.derivatives'] as const).map((t) => dlqTopicName(config, t));
  const admin = kafka.admin();
  await admin.connect();
  let total = 0;
  for (const topic of topics) for (const p of await admin.fetchTopicOffsets(topic)) total += Number(p.high) - Number(p.low);
  await admin.disconnect();
  const groupId = `${config.topicPrefix}bench.dlq`;
  const consumer = kafka.consumer({ groupId });
  const reasons = new Map<string, number>();
  let seen = 0;
  await consumer.connect();
  try {
    for (const topic of topics) await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ topic, message }) => {
        seen++;
        const reason = `${topic.replace(config.topicPrefix, '')}: ${String(message.headers?.['x-dlq-reason'] ?? '?')}`
          .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>')
          .replace(/\d+(\.\d+)?/g, 'N')
          .replace(/ of \S+ \S+/, ' of <pair>');
        reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
      },
    });
    await until(async () => seen >= total, 30_000, 200);
  } finally {
    await consumer.disconnect();
    const a = kafka.admin();
    await a.connect();
    await a.deleteGroups([groupId]).catch(() => undefined);
    await a.disconnect();
  }
  return [...reasons].sort((a, b) => b[1] - a[1]).slice(0, 5).map(([r, n]) => `${n} x ${r}`).join('; ') || 'none found';
}

/** Jiffies the machine spent busy and in all since boot (/proc/stat), to tell how loaded a phase was. */
function machineCpu(): { busy: number; total: number } {
  const [, ...fields] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const n = fields.map(Number);
  const total = n.reduce((a, b) => a + b, 0);
  return { busy: total - n[3]! - (n[4] ?? 0), total }; // idle and iowait are not busy
}

// ---------------------------------------------------------------------------------------
// Measuring

async function login(service: Service, who: { email: string; password: string }): Promise<string> {
  const res = await fetch(`${service.api.url}/v1/login/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email: who.email, password: who.password }),
  });
  const body = (await res.json()) as { token?: string };
  if (res.status !== 200 || !body.token) throw new Error(`login of ${who.email} failed: ${res.status} ${JSON.stringify(body)}`);
  return body.token;
}

interface HttpRequest {
  url: string;
  method: string;
  token: string;
  body?: string;
  /**
   * Parse the body and count its rows. Only the untimed first request of a series does:
   * parsing a 22 MiB answer took the client about 150 ms of CPU and left as much garbage,
   * on two cores the service under test needs (a client on a user's machine parses on
   * that machine). The others are read to their last byte and counted in bytes.
   */
  parse?: boolean;
}

interface HttpResult {
  ms: number;
  bytes: number;
  rows: number;
  error?: string;
}

/**
 * The HTTP client, in a process of its own (this script again, with BENCH_CLIENT set), as
 * a user's is: in the service's process, receiving a 22 MiB answer would take turns of the
 * event loop the service needs to send it. Each request is timed there, from sending it to
 * the last byte of its body.
 */
class HttpClient {
  private readonly child = fork(fileURLToPath(import.meta.url), [], { env: { ...process.env, BENCH_CLIENT: '1' }, stdio: 'inherit' });
  private readonly waiting = new Map<number, (r: HttpResult) => void>();
  private seq = 0;
  private readonly ready: Promise<void>;

  constructor() {
    this.ready = new Promise<void>((resolve) => this.child.once('message', () => resolve()));
    this.child.on('message', (m: { id: number } & HttpResult) => {
      this.waiting.get(m.id)?.(m);
      this.waiting.delete(m.id);
    });
    this.child.once('exit', (code) => {
      for (const done of this.waiting.values()) done({ ms: 0, bytes: 0, rows: 0, error: `the client process exited (${code})` });
      this.waiting.clear();
    });
  }

  async once(service: Service, token: string, q: QuerySpec, opts: { parse?: boolean } = {}): Promise<HttpResult> {
    await this.ready;
    const id = ++this.seq;
    const req: HttpRequest = { url: `${service.api.url}${q.path}`, method: q.method, token, body: q.body ? JSON.stringify(q.body) : undefined, parse: opts.parse };
    const r = await new Promise<HttpResult>((resolve) => {
      this.waiting.set(id, resolve);
      this.child.send({ id, ...req });
    });
    if (r.error) throw new Error(`${q.method} ${q.path}: ${r.error}`);
    return r;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.send('stop');
    await exited;
  }
}

/**
 * The client process: one request at a time, as the parent asks, over node:http with a
 * keep-alive agent. Not fetch: its web streams took 20-40 ms longer than curl to take in
 * the 22 MiB uptime answer, and a client that reads slowly holds the server's sends up,
 * so that time would have been counted against the service.
 */
async function runClient(): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  // A kept-alive socket the server closed while it was idle (its keep-alive timeout, 5 s,
  // passes between two slow series' requests) fails as the request is written on it: that
  // request is sent again on a new socket, as HTTP clients do (it never reached the service).
  const send = async (m: HttpRequest) => {
    try {
      return await sendOnce(m);
    } catch (e) {
      if ((e as { reusedSocket?: boolean }).reusedSocket) return sendOnce(m);
      throw e;
    }
  };
  const sendOnce = (m: HttpRequest) =>
    new Promise<{ ms: number; status: number; parts: Buffer[] }>((resolve, reject) => {
      const t = performance.now();
      const req = http.request(
        m.url,
        { method: m.method, agent, headers: { Authorization: `Token ${m.token}`, ...(m.body ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(m.body) } : {}) } },
        (res) => {
          const parts: Buffer[] = [];
          res.on('data', (c: Buffer) => parts.push(c));
          // Timed to the body's last byte, as wrk or k6 time a response; decoding it is the client's work.
          res.on('end', () => resolve({ ms: performance.now() - t, status: res.statusCode ?? 0, parts }));
          res.on('error', reject);
        },
      );
      req.on('error', (e: NodeJS.ErrnoException) => reject(Object.assign(e, { reusedSocket: req.reusedSocket && e.code === 'ECONNRESET' })));
      req.end(m.body);
    });
  await new Promise<void>((resolve) => {
    process.on('message', (m: 'stop' | ({ id: number } & HttpRequest)) => {
      if (m === 'stop') return resolve();
      void (async () => {
        try {
          const { ms, status, parts } = await send(m);
          if (status !== 200) return process.send?.({ id: m.id, ms, bytes: 0, rows: 0, error: `${status} ${Buffer.concat(parts).toString('utf8', 0, 300)}` });
          let rows = 0;
          if (m.parse) {
            const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as unknown;
            rows = Array.isArray(body) ? body.length : 0;
          }
          process.send?.({ id: m.id, ms, bytes: parts.reduce((n, p) => n + p.length, 0), rows });
        } catch (e) {
          process.send?.({ id: m.id, ms: 0, bytes: 0, rows: 0, error: String(e) });
        }
      })();
    });
    process.send?.({ ready: true });
  });
  agent.destroy();
}

/** What each statement reads, by table: parts, rows and marks (granules), as the engine estimates them. */
async function explain(bare: ClickHouse, name: string, queries: Captured[]): Promise<void> {
  for (const [i, q] of queries.entries()) {
    const rows = await bare.query<{ table: string; parts: string; rows: string; marks: string }>(`EXPLAIN ESTIMATE ${q.sql}`, q.params);
    say(NAME, `  ${name}, statement ${i + 1}: ${rows.map((r) => `${r.table} ${r.parts} parts, ${fmtInt(Number(r.rows))} rows, ${r.marks} marks`).join('; ') || 'nothing read'}`);
  }
}

async function series(service: Service, client: HttpClient, token: string, bare: ClickHouse, recorder: QueryRecorder, q: QuerySpec, phase: Phase, lockstep?: LockstepChild): Promise<Series> {
  // In turns with another run (--lockstep): both runs' warm-ups end before either's timed
  // requests start, and each timed request (bare run and HTTP) waits for this run's turn.
  const barrier = (step: string) => lockstep?.barrier(`${phase} ${sizeFree(q.name)}: ${step}`);
  await barrier('start');
  // One untimed request records the SQL the endpoint runs (after those that fill the
  // caches, so it is the SQL of a repeated request); then the warm-up.
  const empty = () => {
    const keepSeen = q.cold === 'seen';
    service.deps.uptimeCache.clear({ keepSeen });
    service.deps.windowCache.clear({ keepSeen });
  };
  const untimed = (opts: { parse?: boolean } = {}) => {
    if (q.cold) empty();
    return client.once(service, token, q, opts);
  };
  await untimed();
  // A view is kept from its second request on: the recorded one is the third.
  if (!q.cold) await untimed();
  recorder.recording = [];
  const first = await untimed({ parse: true });
  const queries = recorder.recording;
  recorder.recording = undefined;
  if (queries.length === 0) throw new Error(`${q.path} ran no market query`);
  if (opt['dump-sql']) writeStatements(opt['dump-sql'], `${phase}: ${sizeFree(q.name)}`, queries);
  if (opt.explain === 'yes') await explain(bare, `${phase}: ${q.name}`, queries);
  for (let i = 0; i < WARMUP; i++) {
    await runStatements(bare, queries);
    await untimed();
  }
  const s: Series = { http: [], bare: [], bytes: 0, rows: first.rows, written: 0, loopDelay: { p99: 0, max: 0 } };
  const rowsBefore = await minuteRows(bare);
  await barrier('timed');
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const turns: Turn[] = [];
  const unwatch = watchStatementLine((t) => turns.push(t));
  // Alternating, so both see the same moments of background work; within a time budget,
  // so a slow query does not stretch the run (the figures say how many were timed).
  const started = performance.now();
  // While ingesting, a series lasts at least INGESTING_MS: minutes close (rows, then
  // rollups) once a minute, and a shorter series could fall between two closes.
  // In turns, both runs time the same count: a time budget would end them unevenly.
  const more = (i: number) =>
    lockstep
      ? i < REQUESTS
      : (i < REQUESTS && (i < MIN_REQUESTS || performance.now() - started < SERIES_MS)) || (phase === 'ingesting' && performance.now() - started < INGESTING_MS);
  for (let i = 0; more(i); i++) {
    await lockstep?.turn();
    const b = await runStatements(bare, queries);
    s.bare.push(b.ms);
    if (q.cold) empty();
    const h = await client.once(service, token, q);
    s.http.push(h.ms);
    s.bytes = h.bytes;
  }
  loop.disable();
  unwatch();
  s.loopDelay = { p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 };
  s.line = lineFigures(turns);
  s.written = (await minuteRows(bare)) - rowsBefore;
  await barrier('end');
  say(
    NAME,
    `  ${phase.padEnd(9)} ${q.name} (${s.http.length} requests): HTTP p50 ${fmtMs(percentile(s.http, 50))} p95 ${fmtMs(percentile(s.http, 95))}; bare p50 ${fmtMs(percentile(s.bare, 50))} p95 ${fmtMs(percentile(s.bare, 95))}; ${fmtInt(s.rows)} rows, ${(s.bytes / 2 ** 20).toFixed(1)} MiB; ${fmtInt(s.written)} book minute rows written meanwhile; event-loop delay p99 ${fmtMs(s.loopDelay.p99)}, max ${fmtMs(s.loopDelay.max)}${fmtLine(s.line)}`,
  );
  return s;
}

/** A series' name holds its pair count (and below 300 pairs, the user's assets); without them, runs at two sizes line up. */
function sizeFree(name: string): string {
  return name.replace(/\(all \d+ pairs\)/, '(all pairs)').replace(/\(\d+ assets, \d+ pairs\)/, '(its assets)');
}

/** What one run measured, as bench/api-scale.ts reads it (api-scale.ts: RunSamples). */
function writeSamples(file: string, results: Map<string, Series>, ingest: Ingest | undefined): void {
  const series = [...results].map(([key, s]) => {
    const [phase, ...name] = key.split(':');
    return { phase, query: sizeFree(name.join(':')), http: s.http, bare: s.bare, loopDelay: s.loopDelay };
  });
  fs.writeFileSync(file, JSON.stringify({ pairs: PAIRS, days: DAYS, at: new Date().toISOString(), series, ingest }));
}

function figuresOf(
  results: Map<string, Series>,
  loaded: Loaded,
  ingest: Ingest | undefined,
): Figure[] {
  const f: Figure[] = [];
  f.push({
    figure: 'history loaded',
    value: `${DAYS} days x ${PAIRS} pairs: ${fmtInt(loaded.bookRows)} book / ${fmtInt(loaded.tradeRows)} trade / ${fmtInt(loaded.derivativeRows)} derivative minute rows in ${fmtMs(loaded.ms)}`,
    goal: '—',
    result: 'info',
  });
  for (const phase of ['idle', 'ingesting'] as const) {
    if (!PHASES.includes(phase)) continue;
    for (const q of SELECTED) {
      const s = results.get(`${phase}:${q.name}`)!;
      const p50 = percentile(s.http, 50);
      const p95 = percentile(s.http, 95);
      const b50 = percentile(s.bare, 50);
      const b95 = percentile(s.bare, 95);
      const goal = phase === 'ingesting' && !q.cold;
      f.push({
        figure: `${q.name}, ${phase === 'idle' ? 'idle' : 'while ingesting'}: HTTP p50 / p95`,
        value: `${fmtMs(p50)} / ${fmtMs(p95)} (n=${s.http.length}; ${fmtInt(s.rows)} rows, ${(s.bytes / 2 ** 20).toFixed(1)} MiB${phase === 'ingesting' ? `; ${fmtInt(s.written)} book minute rows written meanwhile` : ''}; service event-loop delay p99 ${fmtMs(s.loopDelay.p99)}, max ${fmtMs(s.loopDelay.max)}${fmtLine(s.line)})`,
        goal: goal ? `p95 < ${GOAL_P95_MS} ms` : '—',
        result: goal ? check(p95 < GOAL_P95_MS) : 'info',
      });
      f.push({
        figure: `${q.name}, ${phase === 'idle' ? 'idle' : 'while ingesting'}: bare query p50 / p95, HTTP/bare`,
        value: `${fmtMs(b50)} / ${fmtMs(b95)}, x${(p50 / b50).toFixed(2)} (p50) x${(p95 / b95).toFixed(2)} (p95)`,
        goal: '—',
        result: 'info',
      });
    }
  }
  if (ingest) f.push({
    figure: 'ingestion during the second phase',
    value: `sent ${fmtInt(ingest.sent)} msg/s, processed ${fmtInt(ingest.all)} msg/s (${fmtInt(ingest.books)} snapshots/s + ${fmtInt(ingest.trades)} trades/s), ${ingest.dead} dead letters; ${fmtInt(ingest.rows)} book minute rows written in ${ingest.seconds.toFixed(0)} s; cores busy: ${ingest.machineCores.toFixed(2)} of ${os.cpus().length} (the service process, with the bare runs: ${ingest.serviceCores.toFixed(2)})`,
    goal: '—',
    result: 'info',
  });
  return f;
}

// Last, so every constant above is initialised before the run starts.
if (process.env.BENCH_FEED) {
  const spec = new Promise<FeedSpec>((resolve) => process.once('message', (m) => resolve(m as FeedSpec)));
  process.send?.('ready');
  await runFeed(await spec);
  process.exit(0);
}
if (process.env.BENCH_CLIENT) {
  await runClient();
  process.exit(0);
}
// Answers shared between identical requests off: each timed request is to compute its
// answer, and each series records the SQL of one (bench:load measures sharing).
await runBench(NAME, main, { env: { LATENESS_SECONDS: String(LATENESS_S), ANSWER_REUSE_MS: '0' }, keepDataDir: KEEP_DATA || undefined });
