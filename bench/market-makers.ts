// npm run bench:market-makers — the market makers' reported-metrics push and the
// market-maker endpoints over 30 days of history.
//
// Starts the service (API + processors, embedded ClickHouse in a fresh folder), loads a
// world of 20 market makers on 50 pairs (bench/market-makers/world.ts) through the fixture
// loader, and times:
// * the push: N requests of 1,000 items as a market maker's member (benchPush), in items
//   accepted per second, after a few untimed ones (a running service's code is compiled);
// * after writing 30 days of market, trusted and reported history straight into
//   ClickHouse (bench/market-makers/load.ts), summary, reconciliation, trusted depth and
//   reported volume as staff and as the project's member, repeated and first asked, over
//   HTTP from a client process (bench/market-makers/http.ts), each against the same run's
//   bare time of the very statements the endpoint ran (recorded from the API's connection)
//   on a connection of the benchmark's own;
// * where a summary's and a reconciliation's time goes: the handler's steps run in this
//   process without HTTP, each statement alone, and CPU profiles of the main thread
//   (bench/market-makers/profile.ts) during more requests and another push.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Context } from 'koa';
import { TupleParam, type ClickHouseSettings } from '@clickhouse/client';
import { openClickHouse, type ClickHouse, type Params } from '../lib/clickhouse.ts';
import { createKafka } from '../lib/kafka.ts';
import { deleteSubjects } from '../schemas/registration.ts';
import { INTERVALS, MM_METRICS } from '../domain/market/facts.ts';
import { lookbackRange } from '../domain/market/window.ts';
import { withoutHash } from '../domain/accounts/users.ts';
import { validators } from '../api/resources/market/schemas.ts';
import { parseMmRequest, type MmRequest } from '../api/resources/market-makers/request.ts';
import { MarketMakerReadings } from '../domain/market-makers/readings.ts';
import { reconcile } from '../domain/market-makers/reconciliation.ts';
import { MarketMakerCaches } from '../api/resources/market-makers/sealed-rows.ts';
import { compressionIdle } from '../api/http/compressed-pieces.ts';
import { summary } from '../api/resources/market-makers/summary.ts';
import { reconciliation } from '../api/resources/market-makers/reconciliation.ts';
import type { MmHandler, MmServices } from '../api/resources/market-makers/services.ts';
import { ORDERBOOK_GROUP } from '../processors/orderbook/processor.ts';
import { TRADES_GROUP } from '../processors/trades/processor.ts';
import { DERIVATIVES_GROUP } from '../processors/derivatives/processor.ts';
import { OWN_ORDERS_GROUP } from '../processors/market-makers/own-orders.ts';
import { FILLS_GROUP } from '../processors/market-makers/fills.ts';
import { REPORTED_GROUP } from '../processors/reported/processor.ts';
import { MM_FAMILIES } from '../domain/market/families/index.ts';
import { API_CLICKHOUSE, startService, type Service } from '../ops/service.ts';
import { FIVE_MINUTES, type PushBenchResult } from './market-makers/push.ts';
import { curlFound, HttpClient, type ClientEncoding } from './market-makers/http.ts';
import { describeProfile, profiled } from './market-makers/profile.ts';
import { countRows, loadHistory, type LoadCounts, type LoadPlan } from './market-makers/load.ts';
import { mmWorld, type Credentials, type MmWorld } from './market-makers/world.ts';
import { HISTORY_FLAGS, SERIES_FLAGS, check, deleteTopicsAndGroups, flags, fmtInt, fmtMs, percentile, positiveInt, say, settle, until, type BenchRun, type Figure, dropRedisKeys, runBench } from './common.ts';

const NAME = 'bench:market-makers';
const opt = flags(
  NAME,
  {
    makers: { default: '20', help: 'market-maker organizations (each covers every asset, with a wallet on each of the 2 exchanges)' },
    pairs: { default: '50', help: 'pairs: assets quoted in USDT on 2 exchanges' },
    days: { default: '30', help: 'days of history loaded' },
    requests: { default: '30', help: 'timed requests (and bare runs) per series' },
    warmup: { default: '2', help: 'untimed requests (and bare runs) before each series' },
    'push-requests': { default: '200', help: 'push requests (0 skips the push)' },
    'push-warmup': { default: '20', help: 'untimed push requests before them (to earlier buckets), as a running service has had' },
    'push-items': { default: '1000', help: 'items per push request' },
    'push-concurrency': { default: '4', help: 'push requests in flight at once' },
    'breakdown-runs': { default: '10', help: 'runs of the in-process breakdown of summary and reconciliation (0 skips it)' },
    profile: { default: 'yes', help: '"yes": after the timed figures, CPU-profile the main thread during another push and during requests of summary and reconciliation (untimed)' },
    'profile-first': { default: 'no', help: '"yes": profile first-asked requests (caches emptied before each) instead of repeated ones' },
    'profile-dir': { default: '', help: 'also write those profiles here as .cpuprofile files (for Chrome DevTools)' },
    'dump-sql': { default: '', help: 'write the statements each series ran, with their bound values, to this JSON file (to EXPLAIN or time them by hand)' },
    'keep-data': { default: '', help: 'keep the data folder here, and reuse (topped up to now) the history loaded in it with the same --makers, --pairs and --days; the minute hours of each reuse\'s windows are added and kept, so answers at 5m grow from reuse to reuse (compare figures on one reuse, or on fresh data)' },
    encoding: { default: 'identity', help: '"identity": the client takes plain text; "zstd": it accepts zstd (through curl, what `curl --compressed` accepts, as a user tries it) and decodes it; "gzip": gzip alone (timed to the last decoded byte)' },
    client: { default: 'curl', help: '"curl": timed requests through the curl command (as `curl -o /dev/null`, `--compressed` with an encoding; node:http when curl is not found); "node": node:http with keep-alive in a process of its own' },
    only: { default: '', help: 'time only the series whose name contains this (e.g. "summary 7 days"; "|" between alternatives), to iterate faster; "push": only the push, nothing loaded' },
    ...HISTORY_FLAGS,
    ...SERIES_FLAGS,
  },
  'push throughput, and p50/p95 of the market-maker endpoints over HTTP against the bare statements, as staff and as a project member',
);
const MAKERS = positiveInt('makers', opt.makers);
const PAIRS = positiveInt('pairs', opt.pairs);
const DAYS = positiveInt('days', opt.days);
const REQUESTS = positiveInt('requests', opt.requests);
const WARMUP = Number(opt.warmup);
const SERIES_MS = positiveInt('series-seconds', opt['series-seconds']) * 1000;
const MIN_REQUESTS = Math.min(5, REQUESTS);
const PUSH_REQUESTS = Number(opt['push-requests']);
const PUSH_WARMUP = Number(opt['push-warmup']);
const PUSH_ITEMS = positiveInt('push-items', opt['push-items']);
const PUSH_CONCURRENCY = positiveInt('push-concurrency', opt['push-concurrency']);
const BREAKDOWN_RUNS = Number(opt['breakdown-runs']);
const PROFILE = opt.profile === 'yes';
const PROFILE_DIR = opt['profile-dir'];
const LOAD_CONNECTIONS = positiveInt('load-connections', opt['load-connections']);
const SETTLE_S = Number(opt.settle);
const KEEP_DATA = opt['keep-data'];
const LOAD_ONLY = opt['load-only'] === 'yes';
if (!['zstd', 'gzip', 'identity'].includes(opt.encoding)) throw new Error('--encoding: zstd, gzip or identity');
const ENCODING = opt.encoding as ClientEncoding;
if (!['curl', 'node'].includes(opt.client)) throw new Error('--client: curl or node');
if (LOAD_ONLY && !KEEP_DATA) throw new Error('--load-only yes needs --keep-data <folder>');

const GOAL_ITEMS_PER_S = 50_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

type Who = 'staff' | 'project';

interface Endpoint {
  name: string;
  path: string;
  /** The goals (p95, ms) judged on its repeated and first-asked series (issue 44), for these callers. */
  goal?: { repeated?: number; first?: number; who?: Who };
}

const SUMMARY = '/v2/organizations/market-maker-metrics/summary/';
const RECONCILIATION = '/v2/organizations/market-maker-metrics/reconciliation/';
const ENDPOINTS: Endpoint[] = [
  { name: 'summary 7 days 1d', path: `${SUMMARY}?lookback=7-days&interval=1d`, goal: { repeated: 250, first: 500 } },
  // The same with 3 levels of L instead of all 25: how the time follows the answer's size.
  { name: 'summary 7 days 1d 3 levels', path: `${SUMMARY}?lookback=7-days&interval=1d&bps=2,10,100` },
  { name: 'summary 1 month 1d', path: `${SUMMARY}?lookback=1-month&interval=1d`, goal: { repeated: 250, first: 1000 } },
  { name: 'summary 1 month a', path: `${SUMMARY}?lookback=1-month&interval=a` },
  { name: 'summary 1 month 5m', path: `${SUMMARY}?lookback=1-month&interval=5m`, goal: { repeated: 1000, first: 1000, who: 'staff' } },
  { name: 'reconciliation 7 days 1d', path: `${RECONCILIATION}?lookback=7-days&interval=1d`, goal: { repeated: 250, first: 500 } },
  { name: 'reconciliation 1 month 1d', path: `${RECONCILIATION}?lookback=1-month&interval=1d`, goal: { repeated: 250, first: 500 } },
  { name: 'trusted depth 7 days 1d', path: '/v2/organizations/trusted-metrics/depth/?lookback=7-days&interval=1d' },
  { name: 'reported volume 7 days 1d', path: '/v2/organizations/reported-metrics/volume/?lookback=7-days&interval=1d' },
];

const endpointNamed = (name: string): Endpoint => ENDPOINTS.find((e) => e.name === name)!;

interface SeriesSpec {
  endpoint: Endpoint;
  who: Who;
  /**
   * First asked: the API's caches and the engine's (marks, uncompressed blocks, primary
   * indexes, query conditions) emptied before each request and each bare run, as after a
   * restart with the data files in the OS page cache. Of the market-maker endpoints only
   * the summary keeps something between requests (its buckets' text,
   * api/resources/market-makers/sealed-rows.ts), emptied with the rest.
   */
  cold: boolean;
  name: string;
}

const SERIES: SeriesSpec[] = [false, true].flatMap((cold) =>
  (['staff', 'project'] as const).flatMap((who) =>
    ENDPOINTS.map((endpoint) => ({ endpoint, who, cold, name: `${endpoint.name}, ${who}, ${cold ? 'first asked' : 'repeated'}` })),
  ),
);
const SELECTED = SERIES.filter((s) => opt.only.split('|').some((part) => s.name.includes(part)));
if (SELECTED.length === 0 && opt.only !== 'push') throw new Error(`--only ${opt.only}: no series' name contains it (${ENDPOINTS.map((e) => e.name).join('; ')}; staff/project; repeated/first asked)`);

/** A statement the API ran for an endpoint; statements of one wave were started together. */
interface Captured {
  sql: string;
  params: Params;
  settings?: ClickHouseSettings;
  /** Read as JSON (ClickHouse.query), in the binary row format as rows (queryBinary) or by column (queryColumns): the bare runs then read it so too. */
  read: 'json' | 'rows' | 'columns';
  wave: number;
  /** When the API's run of it started and ended (performance.now()), its rows parsed. */
  started: number;
  ended?: number;
}

/**
 * Records the window reads of the API's connection (domain/market-makers/metrics.ts and
 * PartialsRepository: every one binds the bucket zone `tz`) and its reads of write counts
 * (market_writes: a repeated request may run nothing else) while `recording` is set.
 */
class QueryRecorder {
  recording: Captured[] | undefined;
  private running = 0;
  private wave = 0;

  constructor(ch: ClickHouse) {
    const query: ClickHouse['query'] = ch.query.bind(ch);
    const queryBinary: ClickHouse['queryBinary'] = ch.queryBinary.bind(ch);
    const queryColumns: ClickHouse['queryColumns'] = ch.queryColumns.bind(ch);
    const record = <T>(c: Omit<Captured, 'wave' | 'started'>, run: () => Promise<T>): Promise<T> => {
      if (!this.recording || !('tz' in c.params || /\bmarket_writes\b/.test(c.sql))) return run();
      if (this.running === 0) this.wave++;
      const captured: Captured = { ...c, wave: this.wave, started: performance.now() };
      this.recording.push(captured);
      this.running++;
      return run().finally(() => {
        this.running--;
        captured.ended = performance.now();
      });
    };
    ch.query = <T>(sql: string, params: Params = {}, settings?: ClickHouseSettings): Promise<T[]> => record({ sql, params, settings, read: 'json' }, () => query<T>(sql, params, settings));
    ch.queryBinary = <T>(sql: string, params: Params = {}): Promise<T[]> => record({ sql, params, read: 'rows' }, () => queryBinary<T>(sql, params));
    ch.queryColumns = (sql: string, params: Params = {}) => record({ sql, params, read: 'columns' }, () => queryColumns(sql, params));
  }
}

/** A recorded statement run again as the API ran it, its rows read: how many. */
const runAgain = async (bare: ClickHouse, c: Captured): Promise<number> =>
  c.read === 'columns' ? (await bare.queryColumns(c.sql, c.params)).length : (c.read === 'rows' ? await bare.queryBinary(c.sql, c.params) : await bare.query(c.sql, c.params, c.settings)).length;

interface Series {
  http: number[];
  bare: number[];
  rows: number;
  bytes: number;
  /** Bytes as sent (compressed with --encoding zstd or gzip). */
  wire: number;
  statements: number;
  /** Cores busy on average outside this process (client, broker, anything else on the machine) while the series ran. */
  otherCores: number;
  /** This process's page faults (all its threads: the engine's too) per request, and per bare run. */
  faults: number[];
  bareFaults: number[];
  /** This process's CPU time (all its threads: the engine's too) per request, and per bare run, ms. */
  cpu: number[];
  bareCpu: number[];
}

interface Breakdown {
  name: string;
  /** p50s (ms) of the steps, in the order they run. */
  parse: number;
  statements: number;
  merge: number;
  build: number;
  stringify: number;
  /** The same statements on the bare connection, alternating with the runs; and each alone, one after the other. */
  bare: number;
  alone: { label: string; ms: number; rows: number }[];
  bytes: number;
  rows: number;
  /** Reconciliation rows with a flag (makers that overstate), for a check of the data. */
  flagged: number;
}

async function main(r: BenchRun): Promise<Figure[]> {
  const { config, log, runId } = r;
  const redisPrefix = `mmbench:${runId}:`;
  const kafka = createKafka(config, 'mm-bench-market-makers', log.child('kafka'));
  const groups = [ORDERBOOK_GROUP, TRADES_GROUP, DERIVATIVES_GROUP, OWN_ORDERS_GROUP, FILLS_GROUP, REPORTED_GROUP];
  r.onCleanup(() => deleteTopicsAndGroups(kafka, config, groups.map((g) => config.topicPrefix + g)));
  r.onCleanup(() => dropRedisKeys(config.redisUrl, redisPrefix));

  say(NAME, 'starting the service (API + processors, embedded ClickHouse)...');
  const service = await startService(config, log, { redisPrefix });
  r.onCleanup(() => deleteSubjects(service.registry, config));
  r.onCleanup(() => service.stop());
  const world = mmWorld({ pairs: PAIRS, makers: MAKERS });
  const fx = await service.deps.loadFixture(world.fixture);
  say(NAME, `reference data loaded: ${fx.exchanges} exchanges, ${fx.assets} assets, ${fx.pairs} pairs, ${fx.organizations} organizations, ${fx.wallets} wallets, ${fx.users.created + fx.users.updated} users`);

  const bare = openClickHouse(config, 'bench-bare', API_CLICKHOUSE);
  const loaders = Array.from({ length: LOAD_CONNECTIONS }, (_, i) => openClickHouse(config, `bench-load-${i}`));
  r.onCleanup(async () => {
    await Promise.allSettled([bare, ...loaders].map((c) => c.close()));
  });
  const tokens = {
    staff: await login(service, world.users.staff),
    project: await login(service, world.users.project),
    maker: await login(service, world.users.maker),
  };

  const curl = opt.client === 'curl' && (await curlFound());
  say(NAME, `timed requests through ${curl ? 'curl (-o /dev/null' + (ENCODING === 'zstd' ? ', --compressed' : ENCODING === 'gzip' ? ', --compressed, gzip alone' : '') + ')' : 'node:http'}`);
  const client = new HttpClient(ENCODING, curl);
  r.onCleanup(() => client.stop());
  const figures: Figure[] = [];
  if (PUSH_REQUESTS > 0) figures.push(...(await push(service, client, bare, tokens.maker)));
  if (opt.only === 'push') return figures;

  const loaded = await history(loaders, world, config.dataDir);
  await settle(NAME, bare, SETTLE_S, [
    ...Object.values(MM_FAMILIES).flatMap((f) => Object.values(f.tables)),
    ...['mm_reported', 'book_hours', 'book_days', 'trade_hours', 'trade_days'],
  ]);
  figures.unshift({
    figure: 'history loaded',
    value: `${DAYS} days, ${MAKERS} market makers x ${world.pairs.length} pairs (${world.wallets.length} wallets): ${fmtInt(loaded.counts.hours)} hour, ${fmtInt(loaded.counts.days)} day and ${fmtInt(loaded.counts.minutes)} minute rows, ${fmtInt(loaded.counts.reported)} reported values${loaded.ms === undefined ? ' (reused)' : ` in ${fmtMs(loaded.ms)}`}`,
    goal: '—',
    result: 'info',
  });
  if (LOAD_ONLY) return figures;

  const recorder = new QueryRecorder(service.deps.ch);
  const emptyCaches = await cacheDropper(bare, service);
  const results = new Map<string, Series>();
  say(NAME, `--- ${SELECTED.length} series, ${REQUESTS} requests each (at most ${SERIES_MS / 1000} s), the client ${ENCODING === 'identity' ? 'taking plain text' : `accepting ${ENCODING}`} ---`);
  for (const s of SELECTED) results.set(s.name, await series(service, client, tokens[s.who], bare, recorder, s, emptyCaches));
  for (const s of SELECTED) figures.push(seriesFigure(s, results.get(s.name)!));

  // Broken down and profiled: the goal's summary and the widest answer, when their series ran.
  // Every summary and reconciliation series run; with --profile-first yes, profiled first asked.
  // Each endpoint's read of its values, as its handler runs it.
  const READS: Record<string, [MmHandler, ValuesRead]> = {
    summary: [summary, (s, req) => s.readings.values(req, { trustedDepth: true, trustedVolume: true, reported: 'untrusted', market: true })],
    reconciliation: [reconciliation, (s, req) => reconcile(s.readings, req, s.deps.config.latenessMs)],
  };
  const examined = ENDPOINTS.filter((e) => SELECTED.some((s) => s.endpoint === e) && !e.name.includes('levels'))
    .map((e) => [e, ...(READS[e.name.split(' ')[0]!] ?? [])] as const)
    .filter((x): x is readonly [Endpoint, MmHandler, ValuesRead] => x.length === 3);
  if (BREAKDOWN_RUNS > 0) {
    const user = await service.deps.users.byEmail(world.users.staff.email);
    if (!user) throw new Error('the staff user is missing');
    for (const [endpoint, handler, read] of examined) {
      const b = await breakdown(service, recorder, bare, withoutHash(user), endpoint, handler, read);
      const s = results.get(`${endpoint.name}, staff, repeated`);
      figures.push(breakdownFigure(b, s));
    }
  }
  if (PROFILE) {
    for (const [endpoint] of examined) {
      const n = 10;
      const url = `${service.api.url}${endpoint.path}`;
      const file = PROFILE_DIR ? path.join(PROFILE_DIR, `${endpoint.name.replace(/\W+/g, '-')}.cpuprofile`) : undefined;
      const cold = opt['profile-first'] === 'yes';
      const { summary: profile } = await profiled(async () => {
        for (let i = 0; i < n; i++) {
          if (cold) await emptyCaches();
          await client.get(url, tokens.staff);
        }
      }, file);
      const lines = describeProfile(profile);
      const what = `${n} more requests of ${endpoint.name}${cold ? ', first asked' : ''}`;
      for (const l of lines) say(NAME, `  profile of ${what}: ${l}`);
      figures.push({ figure: `${endpoint.name}: the main thread during ${what} (staff, CPU profile)`, value: lines.join('; '), goal: '—', result: 'info' });
    }
  }
  return figures;
}

// ---------------------------------------------------------------------------------------
// Push

async function push(service: Service, client: HttpClient, ch: ClickHouse, token: string): Promise<Figure[]> {
  say(NAME, `push: ${PUSH_REQUESTS} requests of ${fmtInt(PUSH_ITEMS)} items, ${PUSH_CONCURRENCY} at a time, as a market maker's member...`);
  // From the client process: building and sending the requests is not the service's work.
  const run = (requests: number, base?: number) => client.push({ url: service.api.url, token, requests, itemsPerRequest: PUSH_ITEMS, concurrency: PUSH_CONCURRENCY, base });
  // The timed requests' buckets go back from an hour ago; the warm-up's lie before them, so every timed item is a new key.
  const base = Math.floor((Date.now() - 3_600_000) / FIVE_MINUTES) * FIVE_MINUTES;
  if (PUSH_WARMUP > 0) {
    const buckets = Math.ceil((PUSH_REQUESTS * PUSH_ITEMS) / MM_METRICS.length) + 1;
    say(NAME, `  warm-up: ${PUSH_WARMUP} requests, untimed...`);
    const warmSince = Date.now();
    await writtenAfter(ch, await run(PUSH_WARMUP, base - buckets * FIVE_MINUTES), warmSince);
  }
  const since = Date.now();
  const p: PushBenchResult = await run(PUSH_REQUESTS, base);
  say(NAME, `  ${fmtInt(p.items)} items accepted in ${p.seconds.toFixed(2)} s: ${fmtInt(p.itemsPerSecond)} items/s; request p50 ${fmtMs(p.p50Ms)}, p95 ${fmtMs(p.p95Ms)}`);
  const lag = await writtenAfter(ch, p, since);
  const figures: Figure[] = [
    {
      figure: 'push: items accepted per second',
      value: `${fmtInt(p.itemsPerSecond)} items/s (${p.requests} requests x ${fmtInt(PUSH_ITEMS)} items, ${PUSH_CONCURRENCY} at a time, ${p.seconds.toFixed(2)} s)`,
      goal: `≥ ${fmtInt(GOAL_ITEMS_PER_S)}/s`,
      result: check(p.itemsPerSecond >= GOAL_ITEMS_PER_S),
    },
    { figure: 'push: request p50 / p95', value: `${fmtMs(p.p50Ms)} / ${fmtMs(p.p95Ms)}`, goal: '—', result: 'info' },
    { figure: 'push: in mm_reported (processor), after the last accepted', value: lag, goal: '—', result: 'info' },
  ];
  if (PROFILE) {
    // Another push, untimed: the profiler slows the thread it samples.
    const n = Math.min(PUSH_REQUESTS, 20);
    const again = Date.now();
    const { result, summary } = await profiled(() => run(n), PROFILE_DIR ? path.join(PROFILE_DIR, 'push.cpuprofile') : undefined);
    await writtenAfter(ch, result, again);
    const lines = describeProfile(summary);
    for (const l of lines) say(NAME, `  profile of a push of ${n} requests: ${l}`);
    figures.push({ figure: `push: the main thread during another push of ${n} requests (CPU profile)`, value: lines.join('; '), goal: '—', result: 'info' });
  }
  return figures;
}

/** Waits until the reported processor wrote a push's items (so loading does not compete with it); how long after the push ended. */
async function writtenAfter(ch: ClickHouse, p: PushBenchResult, since: number): Promise<string> {
  const ended = performance.now();
  const written = () =>
    ch
      .query<{ n: string }>(
        `SELECT count() AS n FROM mm_reported WHERE organization = {org:String} AND exchange = {ex:String} AND pair = {pair:String}
           AND interval = '5m' AND pushed_at >= fromUnixTimestamp64Milli({since:Int64}, 'UTC')`,
        { org: p.target.organization, ex: p.target.exchange, pair: p.target.pair, since },
      )
      .then((rows) => Number(rows[0]?.n ?? 0));
  const ok = await until(async () => (await written()) >= p.items, 180_000, 250);
  const lag = performance.now() - ended;
  say(NAME, ok ? `  the reported processor wrote them ${fmtMs(lag)} after the last was accepted` : `  the reported processor had written ${fmtInt(await written())} of them after 3 minutes`);
  return ok ? fmtMs(lag) : `not all after ${fmtMs(lag)}`;
}

// ---------------------------------------------------------------------------------------
// History

interface Marker {
  makers: number;
  pairs: number;
  days: number;
  /** Hours written [from, to), the minute hours, and when (epoch ms). */
  from: number;
  to: number;
  minuteHours: number[];
  now: number;
}

/** Hours a window ending now reads minute rows of (its start's and the open hour), each with two more, for a run that crosses an hour. */
function minuteHoursAt(now: number, from: number, to: number): number[] {
  const starts = ['7-days', '1-month'].map((l) => lookbackRange(l, now)[0]);
  const out = new Set<number>();
  for (const t of [...starts, now]) for (let k = 0; k < 3; k++) out.add(Math.floor(t / HOUR) * HOUR + k * HOUR);
  return [...out].filter((h) => h >= from && h < to).sort((a, b) => a - b);
}

async function history(loaders: ClickHouse[], world: MmWorld, dataDir: string): Promise<{ counts: LoadCounts; ms?: number }> {
  const file = path.join(dataDir, 'bench-market-makers.json');
  const previous = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Marker) : undefined;
  const now = Date.now();
  const to = Math.floor(now / HOUR) * HOUR + 3 * HOUR;
  let plan: LoadPlan;
  if (previous && previous.makers === MAKERS && previous.pairs === PAIRS && previous.days === DAYS) {
    // Topped up to now: the hours since, the minute hours of now's windows, and the reports of the days since.
    const from = Math.min(previous.to, to);
    const minuteHours = minuteHoursAt(now, previous.from, to).filter((h) => !previous.minuteHours.includes(h));
    plan = { from, to, minuteHours, now, reportedFrom: Math.floor(previous.now / DAY) * DAY };
    say(NAME, `reusing the history loaded in ${dataDir}; topping it up: ${(to - from) / HOUR} hours, ${minuteHours.length} minute hours`);
    previous.minuteHours.push(...minuteHours);
    Object.assign(previous, { to: Math.max(previous.to, to), now });
    if (from < to || minuteHours.length > 0) await loadHistory(loaders, world, plan, (m) => say(NAME, m));
    fs.writeFileSync(file, JSON.stringify(previous));
    return { counts: await countRows(loaders[0]!) };
  }
  if (previous || (await countRows(loaders[0]!)).hours > 0) throw new Error(`${dataDir} already holds other history: give --keep-data a new folder`);
  const from = Math.floor((now - DAYS * DAY) / HOUR) * HOUR;
  plan = { from, to, minuteHours: minuteHoursAt(now, from, to), now, reportedFrom: from };
  say(
    NAME,
    `loading ${DAYS} days for ${world.pairs.length} pairs and ${MAKERS * world.pairs.length} wallet series: hour rows of 4 families, minute rows of ${plan.minuteHours.length} hours, day rows, reported values...`,
  );
  const t0 = performance.now();
  await loadHistory(loaders, world, plan, (m) => say(NAME, m));
  const ms = performance.now() - t0;
  const counts = await countRows(loaders[0]!);
  say(NAME, `loaded ${fmtInt(counts.hours)} hour, ${fmtInt(counts.days)} day, ${fmtInt(counts.minutes)} minute rows and ${fmtInt(counts.reported)} reported values in ${fmtMs(ms)}`);
  if (KEEP_DATA) fs.writeFileSync(file, JSON.stringify({ makers: MAKERS, pairs: PAIRS, days: DAYS, from, to, minuteHours: plan.minuteHours, now } satisfies Marker));
  return { counts, ms };
}

// ---------------------------------------------------------------------------------------
// Measuring

async function login(service: Service, who: Credentials): Promise<string> {
  const res = await fetch(`${service.api.url}/v1/login/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email: who.email, password: who.password }),
  });
  const body = (await res.json()) as { token?: string };
  if (res.status !== 200 || !body.token) throw new Error(`login of ${who.email} failed: ${res.status} ${JSON.stringify(body)}`);
  return body.token;
}

/** Empties the API's caches and those of the engine this build has (probed once). */
async function cacheDropper(ch: ClickHouse, service: Service): Promise<() => Promise<void>> {
  const statements: string[] = [];
  for (const s of ['SYSTEM DROP MARK CACHE', 'SYSTEM DROP UNCOMPRESSED CACHE', 'SYSTEM DROP PRIMARY INDEX CACHE', 'SYSTEM DROP QUERY CONDITION CACHE', 'SYSTEM DROP QUERY CACHE']) {
    try {
      await ch.command(s);
      statements.push(s);
    } catch {
      // Not in this engine's version: nothing of that kind to empty.
    }
  }
  say(NAME, `first-asked series empty before each request: the API's caches; ${statements.map((s) => s.replace('SYSTEM DROP ', '').toLowerCase()).join(', ')}`);
  return async () => {
    service.deps.uptimeCache.clear();
    service.deps.windowCache.clear();
    service.deps.marketMakerCaches.clear();
    // As after a restart: no compression of the last answer's pieces still running.
    await compressionIdle();
    for (const s of statements) await ch.command(s);
  };
}

/** The recorded statements run again as the endpoint ran them: each wave at once, rows parsed. */
async function bareOnce(bare: ClickHouse, queries: Captured[]): Promise<number> {
  const t = performance.now();
  for (const wave of [...new Set(queries.map((q) => q.wave))]) {
    await Promise.all(queries.filter((q) => q.wave === wave).map((q) => runAgain(bare, q)));
  }
  return performance.now() - t;
}

async function series(service: Service, client: HttpClient, token: string, bare: ClickHouse, recorder: QueryRecorder, spec: SeriesSpec, emptyCaches: () => Promise<void>): Promise<Series> {
  const url = `${service.api.url}${spec.endpoint.path}`;
  const prepare = () => (spec.cold ? emptyCaches() : Promise.resolve());
  const untimed = async (opts: { parse?: boolean } = {}) => {
    await prepare();
    return client.get(url, token, opts);
  };
  await untimed();
  // The recorded request is a repeated one (or, first asked, one like the timed ones).
  recorder.recording = [];
  const first = await untimed({ parse: true });
  const queries = recorder.recording;
  recorder.recording = undefined;
  if (queries.length === 0) throw new Error(`${spec.endpoint.path} ran no statement`);
  if (opt['dump-sql']) dumpSql(opt['dump-sql'], spec.name, queries);
  for (let i = 0; i < WARMUP; i++) {
    await prepare();
    await bareOnce(bare, queries);
    await untimed();
  }
  // Repeated, as a dashboard asks again: after the pieces the first answers kept are compressed.
  if (!spec.cold) await compressionIdle();
  const s: Series = { http: [], bare: [], rows: first.rows, bytes: first.bytes, wire: first.wire, statements: queries.length, otherCores: 0, faults: [], bareFaults: [], cpu: [], bareCpu: [] };
  // Memory touched the first time costs a page fault a page, on some virtual machines
  // microseconds each: a figure of its own.
  const faults = () => {
    const u = process.resourceUsage();
    return u.minorPageFault + u.majorPageFault;
  };
  const cpu = { machine: machineCpu(), self: process.cpuUsage() };
  // Alternating, so both see the same moments of background work; within a time budget.
  const started = performance.now();
  for (let i = 0; i < REQUESTS && (i < MIN_REQUESTS || performance.now() - started < SERIES_MS); i++) {
    await prepare();
    const f0 = faults();
    const c0 = process.cpuUsage();
    s.bare.push(await bareOnce(bare, queries));
    const f1 = faults();
    const bareCpu = cpuMs(process.cpuUsage(c0));
    const c1 = process.cpuUsage();
    const h = await untimed();
    s.bareFaults.push(f1 - f0);
    s.faults.push(faults() - f1);
    s.bareCpu.push(bareCpu);
    s.cpu.push(cpuMs(process.cpuUsage(c1)));
    s.http.push(h.ms);
    if (Number.isFinite(h.bytes)) s.bytes = h.bytes;
    s.wire = h.wire;
  }
  const seconds = (performance.now() - started) / 1000;
  const machine = machineCpu();
  const self = process.cpuUsage(cpu.self);
  s.otherCores = Math.max(0, ((machine.busy - cpu.machine.busy) / (machine.total - cpu.machine.total)) * os.cpus().length - (self.user + self.system) / 1e6 / seconds);
  say(
    NAME,
    `  ${spec.name} (${s.http.length} requests): HTTP p50 ${fmtMs(percentile(s.http, 50))} p95 ${fmtMs(percentile(s.http, 95))}; bare p50 ${fmtMs(percentile(s.bare, 50))} p95 ${fmtMs(percentile(s.bare, 95))} (${s.statements} statements); ${fmtInt(s.rows)} rows, ${sizeText(s)}; ${faultsText(s)}; other processes ${s.otherCores.toFixed(2)} cores`,
  );
  return s;
}

const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;

/**
 * CPU time and page faults p50 of a request and of its bare statements (a fault maps 4 KiB,
 * or 2 MiB in a huge page). CPU time near twice the request's is both cores busy throughout.
 */
function faultsText(s: Series): string {
  const [h, b] = [percentile(s.faults, 50), percentile(s.bareFaults, 50)];
  return `CPU p50 ${fmtMs(percentile(s.cpu, 50))}, bare ${fmtMs(percentile(s.bareCpu, 50))}; page faults p50 ${fmtInt(h)}, bare ${fmtInt(b)}`;
}

/** The answer's size, and as sent when that was less (compressed). */
function sizeText(s: Series): string {
  const mib = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`;
  return s.wire < s.bytes ? `${mib(s.bytes)} (${mib(s.wire)} ${ENCODING})` : mib(s.bytes);
}

function seriesFigure(spec: SeriesSpec, s: Series): Figure {
  const [p50, p95, b50, b95] = [percentile(s.http, 50), percentile(s.http, 95), percentile(s.bare, 50), percentile(s.bare, 95)];
  const g = spec.endpoint.goal;
  const goalMs = g && (!g.who || g.who === spec.who) ? (spec.cold ? g.first : g.repeated) : undefined;
  return {
    figure: `${spec.name}: HTTP p50 / p95; bare p50 / p95; HTTP/bare`,
    value: `${fmtMs(p50)} / ${fmtMs(p95)}; ${fmtMs(b50)} / ${fmtMs(b95)}; x${(p50 / b50).toFixed(1)} / x${(p95 / b95).toFixed(1)} (n=${s.http.length}; ${fmtInt(s.rows)} rows, ${sizeText(s)}; ${faultsText(s)}; other processes ${s.otherCores.toFixed(2)} cores)`,
    goal: goalMs !== undefined ? `p95 < ${fmtInt(goalMs)} ms` : '—',
    result: goalMs !== undefined ? check(p95 < goalMs) : 'info',
  };
}

/**
 * An endpoint's steps in this process, without HTTP, p50 of `BREAKDOWN_RUNS` runs:
 * parsing the request (the caller's scope, the makers and pairs it sees); the statements
 * as the endpoint's read of its values runs them (their rows parsed), and what that read
 * does after its last statement (merging their rows into cells, comparing);
 * building the answer's rows (the handler run again, less its request and values);
 * JSON.stringify of the rows, as Koa does before sending. Each run also times the same
 * statements on the bare connection.
 */
/** An endpoint's read of its values (statements, then what it makes of their rows). */
type ValuesRead = (s: MmServices, req: MmRequest) => Promise<unknown>;

async function breakdown(
  service: Service,
  recorder: QueryRecorder,
  bare: ClickHouse,
  user: ReturnType<typeof withoutHash>,
  endpoint: Endpoint,
  handler: MmHandler,
  read: ValuesRead,
): Promise<Breakdown> {
  const deps = service.deps;
  // Without the summary's kept buckets: the steps of an answer computed whole.
  const s: MmServices = { deps, readings: new MarketMakerReadings(deps.ch), caches: new MarketMakerCaches(0) };
  const query = Object.fromEntries(new URL(endpoint.path, 'http://x').searchParams);
  // What the handlers use of Koa's context: the query, the caller, and the body they set.
  // Summary and reconciliation write their pieces to the response themselves (`res`).
  const ctxOf = () => {
    const written: Buffer[] = [];
    const res = { cork() {}, write: (b: Buffer) => written.push(b) > 0, end() {} };
    return { query: { ...query }, state: { principal: { user, via: 'token' } }, body: undefined as unknown, set() {}, vary() {}, acceptsEncodings: () => 'identity', type: '', res, written } as unknown as Context & { written: Buffer[] };
  };
  const t = { parse: [] as number[], statements: [] as number[], merge: [] as number[], build: [] as number[], stringify: [] as number[], bare: [] as number[] };
  let bytes = 0;
  let rows = 0;
  let flagged = 0;
  let captured: Captured[] = [];
  for (let i = 0; i < BREAKDOWN_RUNS + 1; i++) {
    const t0 = performance.now();
    const req = await parseMmRequest(deps, ctxOf(), { ...query }, { validate: validators.any, intervals: INTERVALS });
    const t1 = performance.now();
    recorder.recording = [];
    await read(s, req);
    const t2 = performance.now();
    const statements = recorder.recording;
    recorder.recording = undefined;
    captured = statements;
    const ctx = ctxOf();
    recorder.recording = [];
    await handler(s)(ctx, { ...query });
    const t3 = performance.now();
    const again = recorder.recording;
    recorder.recording = undefined;
    // Summary and reconciliation write their JSON text themselves, in pieces (joined here,
    // as the client would); the others give rows to stringify.
    const body = ctx.body as unknown;
    const json = ctx.written.length > 0 ? Buffer.concat(ctx.written) : JSON.stringify(body);
    const t4 = performance.now();
    const bareMs = await bareOnce(bare, statements);
    bytes = Buffer.byteLength(json);
    const answer = Buffer.isBuffer(json) ? (JSON.parse(json.toString()) as unknown) : body;
    rows = Array.isArray(answer) ? answer.length : 0;
    flagged = Array.isArray(answer) ? (answer as { flag?: boolean }[]).filter((r) => r.flag === true).length : 0;
    if (i === 0) continue; // the first run warms up
    const lastEnd = Math.max(t1, ...statements.map((c) => c.ended ?? t2));
    t.parse.push(t1 - t0);
    t.statements.push(lastEnd - t1);
    t.merge.push(t2 - lastEnd);
    // The handler's own run: after its statements, its merge (timed above) and the answer's rows.
    t.build.push(t3 - Math.max(...again.map((c) => c.ended ?? t3)) - (t2 - lastEnd));
    t.stringify.push(t4 - t3);
    t.bare.push(bareMs);
  }
  const p = (x: number[]) => percentile(x, 50);
  // Each statement alone: which one the wait is for.
  const alone: Breakdown['alone'] = [];
  for (const c of captured) {
    const times: number[] = [];
    let n = 0;
    for (let i = 0; i < BREAKDOWN_RUNS; i++) {
      const t0 = performance.now();
      n = await runAgain(bare, c);
      times.push(performance.now() - t0);
    }
    alone.push({ label: labelOf(c), ms: p(times), rows: n });
  }
  const b: Breakdown = { name: endpoint.name, parse: p(t.parse), statements: p(t.statements), merge: p(t.merge), build: p(t.build), stringify: p(t.stringify), bare: p(t.bare), alone, bytes, rows, flagged };
  say(
    NAME,
    `  breakdown of ${endpoint.name} (staff, p50 of ${BREAKDOWN_RUNS}): request ${fmtMs(b.parse)}, statements ${fmtMs(b.statements)} (bare ${fmtMs(b.bare)}; alone: ${aloneText(b)}), merge into cells ${fmtMs(b.merge)}, answer rows ${fmtMs(b.build)}, JSON.stringify ${fmtMs(b.stringify)} (${fmtInt(rows)} rows, ${(bytes / 2 ** 20).toFixed(1)} MiB)`,
  );
  return b;
}

const aloneText = (b: Breakdown) => b.alone.map((a) => `${a.label} ${fmtMs(a.ms)} (${fmtInt(a.rows)} rows)`).join(', ');

/** What a recorded statement reads: its family's tables, or the reported values. */
function labelOf(c: Captured): string {
  if (/\bmm_reported\b/.test(c.sql)) return 'reported';
  const table = [c.params.d_table, c.params.h_table, c.params.m_table].find((t) => typeof t === 'string') as string | undefined;
  return table ? table.replace(/_(minutes|hours|days)$/, '') : 'statement';
}

/** Appends an endpoint's statements to a JSON file (tuples as arrays: TupleParam holds its values). */
function dumpSql(file: string, name: string, queries: Captured[]): void {
  const all: Record<string, unknown> = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : {};
  const plain = (v: unknown): unknown => (v instanceof TupleParam ? v.values : Array.isArray(v) ? v.map(plain) : v);
  all[name] = queries.map((q) => ({ label: labelOf(q), sql: q.sql, params: Object.fromEntries(Object.entries(q.params).map(([k, v]) => [k, plain(v)])), settings: q.settings }));
  fs.writeFileSync(file, JSON.stringify(all, null, 1));
}

function breakdownFigure(b: Breakdown, s: Series | undefined): Figure {
  const inProcess = b.parse + b.statements + b.merge + b.build + b.stringify;
  const http = s ? percentile(s.http, 50) : undefined;
  return {
    figure: `where ${b.name} spends its time (staff, p50 of ${BREAKDOWN_RUNS}, in the service's process)`,
    value:
      `request ${fmtMs(b.parse)}; statements ${fmtMs(b.statements)} (the same bare: ${fmtMs(b.bare)}; each alone: ${aloneText(b)}); merging their rows into cells ${fmtMs(b.merge)}; ` +
      `building the answer's rows ${fmtMs(b.build)}; JSON.stringify ${fmtMs(b.stringify)} (${fmtInt(b.rows)} rows${b.flagged > 0 ? `, ${fmtInt(b.flagged)} flagged` : ''}, ${(b.bytes / 2 ** 20).toFixed(1)} MiB); sum ${fmtMs(inProcess)}` +
      (http !== undefined ? ` (HTTP p50 of the series: ${fmtMs(http)})` : ''),
    goal: '—',
    result: 'info',
  };
}

/** Jiffies the machine spent busy and in all since boot (/proc/stat). */
function machineCpu(): { busy: number; total: number } {
  const [, ...fields] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const n = fields.map(Number);
  const total = n.reduce((a, b) => a + b, 0);
  return { busy: total - n[3]! - (n[4] ?? 0), total }; // idle and iowait are not busy
}

await runBench(NAME, main, { keepDataDir: KEEP_DATA || undefined });
