// npm run bench:web — the web app's Markets view, timed in Chromium on the bench:api data.
//
// Starts the service (embedded ClickHouse) with bench:api's world (300 pairs; a regular user
// whose project owns 100 assets) and its 30 days of minute history (bench/api-data.ts):
// reused from a folder a run of bench:api or bench:web kept (`--keep-data`), loaded
// otherwise. Signs in through the app, opens the Markets view of one asset once (cold: its
// scripts counted and gzipped as the goal states them) and then `--loads` times more (warm:
// scripts cached, the API's caches filled), each timed in the browser from navigation
// start until every chart has drawn and every request the view made has been answered.
// Prints p50 and p95 against the goal and, for the median load, each request's start, end
// and size and the main thread's long tasks: where the time goes.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import type { Page } from 'playwright-core';
import { startService } from '../ops/service.ts';
import { ensureWebBuild, WEB_DIST } from '../ops/web-build.ts';
import { launch } from '../test/web/browser.ts';
import { apiWorld, ensureHistory } from './api-data.ts';
import { HISTORY_FLAGS, check, dropRedisKeys, flags, fmtInt, fmtMs, percentile, positiveInt, say, type BenchRun, type Figure, runBench } from './common.ts';

const NAME = 'bench:web';
const opt = flags(
  NAME,
  {
    pairs: { default: '300', help: "pairs of bench:api's world" },
    days: { default: '30', help: 'days of minute history' },
    'keep-data': { default: '', help: 'a folder bench:api (or bench:web) kept with --keep-data: its history is reused (same --pairs and --days), or loaded there and kept' },
    as: { default: 'user', help: '"user" (the regular user: its project\'s 100 assets) or "staff" (every pair)' },
    asset: { default: '', help: 'the asset shown (default: the user\'s first)' },
    view: { default: 'lookback=1-day&interval=1h&bps=10', help: 'the rest of the view\'s address: window, interval, level' },
    loads: { default: '20', help: 'timed warm loads' },
    ...HISTORY_FLAGS,
  },
  "the Markets view's time from navigation to every chart drawn (p50, p95 of warm loads) and the first view's gzipped JavaScript, on bench:api's data",
);
const PAIRS = positiveInt('pairs', opt.pairs);
const DAYS = positiveInt('days', opt.days);
const LOADS = positiveInt('loads', opt.loads);
if (opt.as !== 'user' && opt.as !== 'staff') throw new Error(`--as ${opt.as}: "user" or "staff"`);

const GOAL_P95_MS = 1000;
const GOAL_SCRIPT_KB = 350;

/** What one load of the view took, read from the page. */
interface Load {
  /** Navigation start to every chart drawn and every request answered (ms). */
  ms: number;
  requests: { name: string; start: number; end: number; bytes: number; body: number }[];
  /** Main-thread tasks over 50 ms: start and duration. */
  longTasks: [number, number][];
  /** The document's answer and DOMContentLoaded (ms after navigation start). */
  document: number;
  domReady: number;
}

// Runs in the page before its scripts: counts the market data requests in flight (the
// app's calls all go through fetch) and keeps long tasks, so a load ends when the view is
// drawn and none of the data it asked is still coming. The session, the organizations and
// the stream's ticket are not counted: the view shows them in no chart, and the app asks
// some of them again once the stream is open.
const INSTRUMENT = () => {
  type Bench = { inFlight: number; lastEnd: number; frames: number; longTasks: [number, number][] };
  const bench: Bench = { inFlight: 0, lastEnd: 0, frames: 0, longTasks: [] };
  (window as unknown as { __bench: Bench }).__bench = bench;
  const fetch0 = window.fetch.bind(window);
  window.fetch = (...args: Parameters<typeof fetch>) => {
    const [input] = args;
    const url = typeof input === 'string' ? input : input instanceof Request ? input.url : String(input);
    if (!/\/v2\/(metrics|leaderboard)\//.test(url)) return fetch0(...args);
    bench.inFlight++;
    const done = () => {
      bench.inFlight--;
      bench.lastEnd = performance.now();
      bench.frames = 0;
    };
    // The body is read by the app after this resolves: count the request done once read.
    return fetch0(...args).then(
      (r) => {
        const clone = r.clone();
        void clone.arrayBuffer().then(done, done);
        return r;
      },
      (e: unknown) => {
        done();
        throw e;
      },
    );
  };
  const tick = () => {
    bench.frames++;
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) bench.longTasks.push([e.startTime, e.duration]);
  }).observe({ type: 'longtask', buffered: true });
};

/**
 * Waits until every chart panel holds a drawn canvas, no "Loading…" is shown, no request is
 * in flight and two frames have passed since the last answer (React has drawn it); returns
 * the time of that frame.
 */
async function drawn(page: Page): Promise<number> {
  const handle = await page.waitForFunction(
    () => {
      const b = (window as unknown as { __bench?: { inFlight: number; lastEnd: number; frames: number } }).__bench;
      const charts = [...document.querySelectorAll('main .chart')];
      const ready = !!b && b.lastEnd > 0 && b.inFlight === 0 && b.frames >= 2 && charts.length >= 6 && charts.every((c) => c.querySelector('canvas')) && !document.querySelector('main [role="status"]');
      return ready ? performance.now() : false;
    },
    undefined,
    { timeout: 120_000, polling: 'raf' },
  ).catch(async (e: unknown) => {
    const state = await page.evaluate(() => ({
      url: location.href,
      bench: (window as unknown as { __bench?: unknown }).__bench,
      charts: document.querySelectorAll('main .chart').length,
      shown: document.querySelector('main')?.textContent?.slice(0, 400) ?? document.body.textContent?.slice(0, 400),
    }));
    throw new Error(`the view was not drawn: ${JSON.stringify(state)}`, { cause: e });
  });
  return (await handle.jsonValue()) as number;
}

async function readLoad(page: Page, ms: number): Promise<Load> {
  return page.evaluate((ms) => {
    const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
    const requests = (performance.getEntriesByType('resource') as PerformanceResourceTiming[])
      .filter((r) => /\/v[12]\//.test(r.name))
      .map((r) => {
        const u = new URL(r.name);
        return { name: `${u.pathname}${u.search}`, start: r.startTime, end: r.responseEnd, bytes: r.transferSize, body: r.decodedBodySize };
      });
    const b = (window as unknown as { __bench: { longTasks: [number, number][] } }).__bench;
    return { ms, requests, longTasks: b.longTasks, document: nav.responseEnd, domReady: nav.domContentLoadedEventEnd };
  }, ms);
}

/** A request's endpoint, and for the summary whether it is one bucket of the charts (time_start given) or the window. */
function kindOf(name: string): string {
  const u = new URL(name, 'http://x');
  if (u.pathname === '/v2/metrics/summary/') return u.searchParams.has('time_start') ? 'summary (one bucket of depth and volume over time)' : 'summary (the window)';
  return u.pathname;
}

async function main(r: BenchRun): Promise<Figure[]> {
  const { config, log, runId } = r;
  const redisPrefix = `mmbench:${runId}:`;
  r.onCleanup(() => dropRedisKeys(config.redisUrl, redisPrefix));
  const world = apiWorld(PAIRS);

  say(NAME, 'building the web app if it is stale...');
  await ensureWebBuild(log);
  say(NAME, 'starting the service (API + processors, embedded ClickHouse)...');
  const service = await startService(config, log, { redisPrefix });
  r.onCleanup(() => service.stop());
  const summary = await service.deps.loadFixture(world.fixture);
  say(NAME, `reference data loaded: ${summary.exchanges} exchanges, ${summary.assets} assets, ${summary.pairs} pairs`);
  await ensureHistory(NAME, config, world, { pairs: PAIRS, days: DAYS, connections: positiveInt('load-connections', opt['load-connections']), keep: !!opt['keep-data'], settleSeconds: Number(opt.settle) });

  const who = opt.as === 'staff' ? world.staff : world.user;
  const asset = opt.asset || world.user.assets[0]!;
  const pairs = world.pairs.filter((p) => p.asset === asset);
  const url = `${service.api.url}/app/markets?asset=${encodeURIComponent(asset)}&${opt.view}`;
  say(NAME, `signed in as ${opt.as} (${who.email}); the view: ${url} (${pairs.length} pairs)`);

  const browser = await launch();
  r.onCleanup(() => browser.close());
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US', timezoneId: 'UTC' });
  // tsx names the functions it compiles with a helper of its own (__name), which a function
  // sent to the page calls: the page gets one that does nothing.
  await context.addInitScript({ content: 'window.__name = (f) => f;' });
  await context.addInitScript(INSTRUMENT);
  const page = await context.newPage();
  await page.goto(`${service.api.url}/app/`);
  await page.getByLabel('Email').fill(who.email);
  await page.getByLabel('Password').fill(who.password);
  // Kept in localStorage, so a second page of the context is signed in too.
  await page.getByLabel('Keep me signed in on this browser').check();
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();

  // The first load in a new context: what its scripts are, gzipped as the goal counts them
  // (the files as built; the service sends brotli to a browser that takes it).
  const cold = await context.newPage();
  await cold.goto(url);
  const coldMs = await drawn(cold);
  const scripts = await cold.evaluate(() => (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).map((e) => new URL(e.name).pathname).filter((p) => p.endsWith('.js')));
  const sizes = scripts.map((p) => {
    const file = path.join(WEB_DIST, p.replace(/^\/app\//, ''));
    return { file: path.relative(WEB_DIST, file), gz: zlib.gzipSync(fs.readFileSync(file), { level: 9 }).length };
  });
  const scriptKb = sizes.reduce((a, s) => a + s.gz, 0) / 1024;
  await cold.close();
  say(NAME, `first view's scripts: ${sizes.map((s) => `${s.file} ${(s.gz / 1024).toFixed(1)} kB`).join(', ')}; the first load drawn after ${fmtMs(coldMs)}`);

  const loads: Load[] = [];
  for (let i = 0; i <= LOADS; i++) {
    await page.goto(url);
    const load = await readLoad(page, await drawn(page));
    if (i > 0) loads.push(load);
  }
  const times = loads.map((l) => l.ms);
  const p50 = percentile(times, 50);
  const p95 = percentile(times, 95);
  say(NAME, `${LOADS} warm loads: ${times.map((t) => t.toFixed(0)).join(', ')} ms`);

  // Where the time goes, in the median load: each request (start and end after navigation
  // start, bytes on the wire and decoded), by endpoint, and the long tasks.
  const median = [...loads].sort((a, b) => a.ms - b.ms)[Math.floor(loads.length / 2)]!;
  say(NAME, `the median load (${fmtMs(median.ms)}): document answered at ${fmtMs(median.document)}, DOMContentLoaded at ${fmtMs(median.domReady)}`);
  const byKind = new Map<string, Load['requests']>();
  for (const q of median.requests) byKind.set(kindOf(q.name), [...(byKind.get(kindOf(q.name)) ?? []), q]);
  for (const [kind, qs] of [...byKind].sort((a, b) => Math.min(...a[1].map((q) => q.start)) - Math.min(...b[1].map((q) => q.start)))) {
    const kb = (n: number) => `${(n / 1024).toFixed(1)} kB`;
    say(
      NAME,
      `  ${kind}: ${qs.length} request${qs.length > 1 ? 's' : ''}, first sent at ${fmtMs(Math.min(...qs.map((q) => q.start)))}, last answered at ${fmtMs(Math.max(...qs.map((q) => q.end)))}, each ${fmtMs(percentile(qs.map((q) => q.end - q.start), 50))} (p50) to ${fmtMs(Math.max(...qs.map((q) => q.end - q.start)))}; ${kb(qs.reduce((a, q) => a + q.bytes, 0))} on the wire, ${kb(qs.reduce((a, q) => a + q.body, 0))} decoded`,
    );
  }
  const tasks = median.longTasks.filter(([, d]) => d >= 50);
  say(NAME, `  main thread: ${tasks.length} long tasks, ${fmtMs(tasks.reduce((a, [, d]) => a + d, 0))} in all${tasks.length ? ` (${tasks.map(([s, d]) => `${fmtMs(d)} at ${fmtMs(s)}`).join(', ')})` : ''}`);
  const allRequests = loads.flatMap((l) => l.requests.length);

  return [
    {
      figure: `Markets view of ${asset} (${pairs.length} pairs; ${opt.view}) as the ${opt.as}, navigation to every chart drawn, ${LOADS} warm loads, p50 / p95`,
      value: `${fmtMs(p50)} / ${fmtMs(p95)} (${fmtInt(percentile(allRequests, 50))} requests a load)`,
      goal: `p95 < ${fmtMs(GOAL_P95_MS)}`,
      result: check(p95 < GOAL_P95_MS),
    },
    {
      figure: "the first view's JavaScript, gzipped",
      value: `${scriptKb.toFixed(1)} kB (${sizes.length} file${sizes.length > 1 ? 's' : ''})`,
      goal: `≤ ${GOAL_SCRIPT_KB} kB`,
      result: check(scriptKb <= GOAL_SCRIPT_KB),
    },
  ];
}

await runBench(NAME, main, { keepDataDir: opt['keep-data'] || undefined });
