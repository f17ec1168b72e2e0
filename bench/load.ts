// bench:load: many clients at once (issue 18, item 5). The service with the demo's
// reference data, a day of minute history for its pairs (with the hour and day rollups)
// and the demo's synthetic feed running; autocannon, in a process of its own, drives 50
// connections for 30 s per run. Each scenario runs twice, against two APIs over the same
// service: the service's own (answers shared by identical requests, ANSWER_REUSE_MS, and a
// window's minutes from hour blocks, WINDOW_BLOCK_MAX_PAIRS) and one that computes every
// request as the service did before either (the baseline: sharing and blocks off, sealed
// pieces kept), so the ratio is of the same data, machine and moment.
//   same window:      every client asks /v2/metrics/summary/?lookback=1-hour
//   dashboard:        every client asks the five market endpoints' rolling hour in turn
//   different windows: each client its own rolling hour on the summary (the i-th ending i
//                     minutes ago, to the second), asked again and again
//   worst case:       every request an hour of its own (ending at a random second of the
//                     last day): nothing to share, what the caches and the engine give
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { RecentAnswers } from '../api/market-caches/recent-answers.ts';
import { startApi, type RunningApi } from '../api/server.ts';
import { book, derivative, trade } from '../domain/market/families/index.ts';
import { Rollups } from '../domain/market/repositories/rollups.ts';
import { startSyntheticFeed, type RunningFeed } from '../ingest/synthetic/feed.ts';
import { openClickHouse } from '../lib/clickhouse.ts';
import { createKafka } from '../lib/kafka.ts';
import { deleteSubjects } from '../schemas/registration.ts';
import { startService } from '../ops/service.ts';
import { DERIVATIVES_GROUP } from '../processors/derivatives/processor.ts';
import { FILLS_GROUP } from '../processors/market-makers/fills.ts';
import { OWN_ORDERS_GROUP } from '../processors/market-makers/own-orders.ts';
import { ORDERBOOK_GROUP } from '../processors/orderbook/processor.ts';
import { REPORTED_GROUP } from '../processors/reported/processor.ts';
import { TRADES_GROUP } from '../processors/trades/processor.ts';
import type { FixtureFile } from '../schemas/index.ts';
import { check, deleteTopicsAndGroups, flags, fmtInt, fmtMs, positiveInt, say, settle, sleep, type BenchPair, type BenchRun, type Figure, dropRedisKeys, runBench } from './common.ts';
import type { LoadResult, LoadSpec } from './load-client.ts';
import { rng } from '../ingest/synthetic/market.ts';
import { writeMinutes } from './market-history.ts';

const NAME = 'bench:load';
const FIXTURE = fileURLToPath(new URL('../ops/demo/fixture.json', import.meta.url));
const CLIENT = fileURLToPath(new URL('./load-client.ts', import.meta.url));

const opts = flags(
  NAME,
  {
    connections: { default: '50', help: 'clients at once' },
    seconds: { default: '30', help: 'length of each run' },
    hours: { default: '26', help: 'hours of minute history written for the demo pairs before the runs' },
    user: { default: 'owner@acme.example', help: "the demo user the clients sign in as (staff: staff@demo.example)" },
    only: { default: '', help: 'run only the scenarios whose name contains this (e.g. "different")' },
  },
  'many clients at once on the market endpoints, shared answers against computing every request',
);
const CONNECTIONS = positiveInt('connections', opts.connections);
const SECONDS = positiveInt('seconds', opts.seconds);
const HOURS = positiveInt('hours', opts.hours);
/** The issue's figure for the same window before this work: the baseline here should be near it. */
const ISSUE_RATE = 42;

interface Scenario {
  name: string;
  spec: Omit<LoadSpec, 'url' | 'token' | 'connections' | 'seconds'>;
}

const SCENARIOS: Scenario[] = [
  { name: 'same window (summary, lookback=1-hour)', spec: { paths: ['/v2/metrics/summary/?lookback=1-hour'] } },
  {
    name: 'dashboard (the five market endpoints, rolling hour)',
    spec: {
      paths: [
        '/v2/metrics/summary/?lookback=1-hour',
        '/v2/leaderboard/?lookback=1-hour',
        '/v2/metrics/uptime/spread/?lookback=1-hour&interval=5m',
        '/v2/metrics/uptime/depth/?lookback=1-hour&interval=5m',
        '/v2/metrics/volume/regional/?lookback=1-hour&interval=5m',
      ],
    },
  },
  { name: 'different windows (summary, each client its own rolling hour)', spec: { paths: [], windows: { path: '/v2/metrics/summary/', per: 'client', spreadHours: 0 } } },
  { name: 'worst case (summary, every request an hour of its own)', spec: { paths: [], windows: { path: '/v2/metrics/summary/', per: 'request', spreadHours: 24 } } },
];

function load(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLIENT, JSON.stringify(spec)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      const line = out.trim().split('\n').pop();
      if (code !== 0 || !line) reject(new Error(`the load client exited (${code})`));
      else resolve(JSON.parse(line) as LoadResult);
    });
  });
}

/** The demo pairs as the history writer wants them: a price and a book shape each, fixed by the seed. */
function historyPairs(fixture: FixtureFile): BenchPair[] {
  const random = rng(18);
  const prices = new Map<string, number>();
  return (fixture.pairs ?? []).map((p) => {
    const base = p.asset.replace(/_PERP$/, '');
    if (!prices.has(base)) prices.set(base, Number((10 ** (-1 + random() * 5)).toPrecision(5)));
    return { exchange: p.exchange, pair: p.pair, asset: p.asset, market_type: p.market_type === 'perp' ? 'perp' : 'spot', price: prices.get(base)!, levelUsd: 2_000 + random() * 60_000, halfSpreadBps: 0.3 + random() * 8, stepBps: 0.5 + random() * 4 };
  });
}

async function main(r: BenchRun): Promise<Figure[]> {
  const { config, log, runId } = r;
  const redisPrefix = `mmbench:${runId}:`;
  const kafka = createKafka(config, 'mm-bench-load', log.child('kafka'));
  const groups = [ORDERBOOK_GROUP, TRADES_GROUP, DERIVATIVES_GROUP, OWN_ORDERS_GROUP, FILLS_GROUP, REPORTED_GROUP];
  r.onCleanup(() => deleteTopicsAndGroups(kafka, config, groups.map((g) => config.topicPrefix + g)));
  r.onCleanup(() => dropRedisKeys(config.redisUrl, redisPrefix));

  say(NAME, `starting the service (answers shared for ${config.answerReuseMs} ms)...`);
  const service = await startService(config, log, { redisPrefix, evaluateTargets: false });
  r.onCleanup(() => deleteSubjects(service.registry, config));
  r.onCleanup(() => service.stop());
  const fixture = JSON.parse(fs.readFileSync(FIXTURE, 'utf8')) as FixtureFile;
  await service.deps.loadFixture(fixture);
  const user = (fixture.users ?? []).find((u) => u.email === opts.user);
  if (!user?.password) throw new Error(`--user ${opts.user} is not a demo user with a password`);

  const pairs = historyPairs(fixture);
  const end = Math.floor(Date.now() / 60_000) * 60;
  say(NAME, `writing ${HOURS} hours of minute history for the ${pairs.length} demo pairs, with their rollups...`);
  const loader = openClickHouse(config, 'bench-load-history');
  try {
    await writeMinutes(loader, pairs, end - HOURS * 3600, end);
    const hours: number[] = [];
    for (let h = Math.floor((end - HOURS * 3600) / 3600) * 3600; h < end; h += 3600) hours.push(h * 1000);
    const keys = (ps: BenchPair[]) => ps.flatMap((p) => hours.map((minute) => ({ exchange: p.exchange, pair: p.pair, minute })));
    await new Rollups(loader, book).recompute(keys(pairs));
    await new Rollups(loader, trade).recompute(keys(pairs));
    await new Rollups(loader, derivative).recompute(keys(pairs.filter((p) => p.market_type === 'perp')));
    // The first run measured the merges of this history otherwise (18 req/s where later runs gave 1,100).
    await settle(NAME, loader, 90, Object.values({ book, trade, derivative }).flatMap((f) => Object.values(f.tables)));
  } finally {
    await loader.close();
  }

  // The demo's feed, minus the recorded pair it keeps for replays (ops/cli/demo.ts).
  const fed = (fixture.pairs ?? []).filter((p) => !(p.exchange === 'coinbase' && p.pair === 'BTC/USD'));
  let feed: RunningFeed | undefined = await startSyntheticFeed(createKafka(config, 'mm-bench-load-feed', log.child('feed')), service.registry, config, fed, log.child('feed'), 1000);
  r.onCleanup(async () => {
    await feed?.stop();
    feed = undefined;
  });

  // The baseline: a second API over the same service, computing every request.
  const baseline: RunningApi = await startApi(
    { ...service.deps, config: { ...service.deps.config, windowBlockMaxPairs: 0 }, marketAnswers: new RecentAnswers({ reuseMs: 0, now: service.deps.now }) },
    '127.0.0.1',
    0,
  );
  r.onCleanup(() => baseline.close());
  const login = await fetch(`${service.api.url}/v1/login/`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email: user.email, password: user.password }) });
  const token = ((await login.json()) as { token?: string }).token;
  if (!token) throw new Error(`sign-in as ${user.email} failed (${login.status})`);
  say(NAME, `signed in as ${user.email}; shared answers at ${service.api.url}, baseline at ${baseline.url}; ${CONNECTIONS} connections, ${SECONDS} s a run`);
  await sleep(5_000); // the feed's first minute on its way

  const figures: Figure[] = [];
  const row = (x: LoadResult) => `${fmtInt(x.perSecond)} req/s; p50 ${fmtMs(x.p50)}, p99 ${fmtMs(x.p99)}; non-2xx ${fmtInt(x.non2xx)} (5xx ${fmtInt(x.status5xx)}), errors ${fmtInt(x.errors)}`;
  const selected = SCENARIOS.filter((s) => s.name.includes(opts.only));
  if (selected.length === 0) throw new Error(`--only ${opts.only}: no scenario's name contains it`);
  const cache = service.deps.windowCache;
  for (const s of selected) {
    const base = { token, connections: CONNECTIONS, seconds: SECONDS, ...s.spec };
    say(NAME, `--- ${s.name}: warming up (5 s), then the baseline, then shared answers ---`);
    await load({ ...base, url: baseline.url, seconds: 5 });
    const off = await load({ ...base, url: baseline.url });
    say(NAME, `  baseline (every request computed): ${row(off)}`);
    const [hits, misses] = [cache.hits, cache.misses];
    const on = await load({ ...base, url: service.api.url });
    say(NAME, `  shared answers: ${row(on)}; window cache ${fmtInt(cache.hits - hits)} pieces kept, ${fmtInt(cache.misses - misses)} computed`);
    const ratio = on.perSecond / off.perSecond;
    const distinct = s.spec.windows !== undefined;
    const worst = s.spec.windows?.per === 'request';
    figures.push({ figure: `${s.name}: baseline, every request computed`, value: row(off), goal: '—', result: 'info' });
    figures.push({
      figure: `${s.name}: shared answers`,
      value: row(on),
      goal: distinct && !worst ? 'p99 < 1 s, no 5xx' : 'no 5xx',
      result: check(on.status5xx === 0 && on.errors === 0 && (!distinct || worst || on.p99 < 1000)),
    });
    figures.push({
      figure: `${s.name}: rate shared / baseline (and / the issue's ${ISSUE_RATE} req/s)`,
      value: `${ratio.toFixed(1)}x (${(on.perSecond / ISSUE_RATE).toFixed(1)}x)`,
      goal: distinct ? '—' : '≥ 10x',
      result: distinct ? 'info' : check(ratio >= 10),
    });
  }
  const consumers = service.consumers.map((c) => `${c.name.replace(config.topicPrefix, '')} ${fmtInt(c.stats.ok)}`).join(', ');
  figures.push({ figure: 'messages the processors wrote meanwhile (the feed ran throughout)', value: consumers, goal: '—', result: 'info' });
  await feed?.stop();
  feed = undefined;
  // The last run's requests still in the service when autocannon stopped finish before the stop.
  await sleep(3_000);
  return figures;
}

// Last, so every constant above is initialised before the run starts.
await runBench(NAME, main, { title: () => `${NAME} — ${CONNECTIONS} connections, ${SECONDS} s a run, demo pairs with ${HOURS} h of history, as ${opts.user} — ${new Date().toISOString()}` });
