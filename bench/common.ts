// Shared by the benchmark scripts (bench/ingest.ts, bench/api.ts): a temporary home for
// the run (embedded ClickHouse folder, a broker and a schema registry started here if none
// answers), Redis, Kafka and the registry brought up the way `npm start` does, a topic prefix of its own, a synthetic
// reference world, figures, and one clean-up path for normal ends, errors and Ctrl-C.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import type { Kafka } from 'kafkajs';
import { embeddedStatementKiller, type ClickHouse } from '../lib/clickhouse.ts';
import { loadConfig, type Config } from '../lib/config.ts';
import { topicConfigs } from '../lib/kafka.ts';
import { createLogger, type Logger } from '../lib/log.ts';
import type { FixtureFile, Level, OrderBookMessage } from '../schemas/index.ts';
import { ensureKafka, ensureRedis, ensureSchemaRegistry, stopAll, type Started } from '../ops/infra.ts';
import { exitWhenIdle, SHUTDOWN_DEADLINE_MS } from '../ops/cli/run.ts';
import { rng } from '../ingest/synthetic/market.ts';

// ---------------------------------------------------------------------------------------
// Progress and figures

export function say(bench: string, msg: string): void {
  process.stdout.write(`[${bench}] ${msg}\n`);
}

export const fmtInt = (n: number): string => Math.round(n).toLocaleString('en-US');
export const fmtMs = (ms: number): string => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(ms < 10 ? 1 : 0)} ms`);
export const fmtPct = (x: number): string => `${(100 * x).toFixed(0)} %`;

/** Nearest-rank percentile of unsorted samples. */
export function percentile(samples: number[], p: number): number {
  if (samples.length === 0) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export type Verdict = 'PASS' | 'MISS' | 'info';

export interface Figure {
  figure: string;
  value: string;
  goal: string;
  result: Verdict;
}

export const check = (ok: boolean): Verdict => (ok ? 'PASS' : 'MISS');

/** A Markdown table, so the block can go into docs/benchmarks.md as it is. */
export function printTable(title: string, figures: Figure[]): void {
  if (figures.length === 0) return;
  const head = ['figure', 'value', 'goal', 'result'];
  const rows = figures.map((f) => [f.figure, f.value, f.goal, f.result]);
  const width = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(width[i]!)).join(' | ')} |`;
  const out = [
    '',
    `### ${title}`,
    '',
    line(head),
    `|${width.map((w) => '-'.repeat(w + 2)).join('|')}|`,
    ...rows.map(line),
    '',
  ];
  process.stdout.write(out.join('\n') + '\n');
}

/** Where the run happens: machine facts for the figures' header. */
export function machine(): string {
  const cpus = os.cpus();
  return `${cpus.length} cores (${cpus[0]?.model.trim() ?? 'unknown CPU'}), ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM, Node ${process.versions.node}, ${new Date().toISOString()}`;
}

// ---------------------------------------------------------------------------------------
// Flags

type FlagSpec = Record<string, { default: string; help: string }>;

/** `--name value` flags, each with a default; `--help` prints them. Values stay strings. */
export function flags<S extends FlagSpec>(bench: string, spec: S, about: string): { [K in keyof S]: string } {
  const options = Object.fromEntries(Object.keys(spec).map((k) => [k, { type: 'string' as const }]));
  const parsed = parseArgs({ options: { ...options, help: { type: 'boolean' } }, allowPositionals: false, strict: true });
  const values = parsed.values as Record<string, string | boolean | undefined>;
  if (values.help) {
    process.stdout.write(`${bench}: ${about}\n\nflags:\n`);
    for (const [k, v] of Object.entries(spec)) process.stdout.write(`  --${k.padEnd(16)} ${v.help} (default ${v.default})\n`);
    process.exit(0);
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(spec)) {
    const given = values[k];
    out[k] = typeof given === 'string' ? given : v.default;
  }
  return out as { [K in keyof S]: string };
}

/** Flags of the benchmarks that load a history before timing (bench:api, bench:market-makers, bench:web). */
export const HISTORY_FLAGS = {
  'load-connections': { default: '2', help: 'inserts running at once while loading the history' },
  settle: { default: '90', help: 'most seconds to wait for background merges after loading' },
} satisfies FlagSpec;

/** Flags of the benchmarks that time series of requests against a loaded history (bench:api, bench:market-makers). */
export const SERIES_FLAGS = {
  'series-seconds': { default: '45', help: 'most seconds per timed series (fewer requests when a query is slow; at least 5)' },
  'load-only': { default: 'no', help: '"yes": stop after loading (with --keep-data, to measure later)' },
} satisfies FlagSpec;

export function positiveInt(name: string, raw: string): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive whole number, not ${JSON.stringify(raw)}`);
  return n;
}

// ---------------------------------------------------------------------------------------
// The run's environment

export interface BenchRun {
  name: string;
  /** Fresh per run: TOPIC_PREFIX, DATA_DIR (temporary unless kept), PORT 0. */
  config: Config;
  log: Logger;
  runId: string;
  tmpDir: string;
  /** Registers a step of the clean-up (run last-registered first). */
  onCleanup(step: () => Promise<void> | void): void;
  /** Runs the clean-up once (also on Ctrl-C and on errors). */
  cleanup(): Promise<void>;
}

/**
 * A benchmark from start to end: its run (startRun), its figures as one table under `title`
 * (the benchmark's name and the date when none is given), the run's clean-up whatever
 * happened, and the process's end (whatever a client left behind, such as a reconnect timer
 * after a broker went away, ends with it).
 */
export async function runBench(
  name: string,
  main: (run: BenchRun) => Promise<Figure[]>,
  opts: { env?: Record<string, string | undefined>; keepDataDir?: string; title?: () => string } = {},
): Promise<never> {
  const run = await startRun(name, opts.env, { keepDataDir: opts.keepDataDir });
  try {
    const figures = await main(run);
    printTable(opts.title?.() ?? `${name} — ${new Date().toISOString()}`, figures);
  } catch (e) {
    say(name, `failed: ${(e as Error).stack ?? String(e)}`);
    process.exitCode = 1;
  } finally {
    await run.cleanup();
  }
  process.exit(process.exitCode ?? 0);
}

/**
 * Starts what a benchmark needs, as `npm start` would: Redis, Kafka and the schema
 * registry are reused when they answer at REDIS_URL / KAFKA_BROKERS / SCHEMA_REGISTRY_URL
 * and started otherwise (a broker or registry started here lives in the temporary folder
 * and is stopped at the end). ClickHouse is embedded in a
 * fresh temporary folder; topics get a prefix of their own.
 */
export async function startRun(name: string, env: Record<string, string | undefined> = {}, opts: { keepDataDir?: string } = {}): Promise<BenchRun> {
  const runId = `bench${Date.now().toString(36)}${crypto.randomBytes(2).toString('hex')}`;
  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), `mm-${name.replace(/\W/g, '-')}-`));
  const dataDir = opts.keepDataDir ? path.resolve(opts.keepDataDir) : tmpDir;
  fs.mkdirSync(dataDir, { recursive: true });
  const config = loadConfig({
    ...process.env,
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    TOPIC_PREFIX: `${runId}.`,
    // A ClickHouse server would be shared and not fresh: the benchmarks measure the embedded engine.
    CLICKHOUSE_URL: '',
    ...env,
  });
  const log = createLogger(process.env.BENCH_LOG_LEVEL === 'debug' ? 'debug' : process.env.BENCH_LOG_LEVEL === 'info' ? 'info' : 'warn', name);
  const steps: (() => Promise<void> | void)[] = [];
  const started: (Started | undefined)[] = [];
  let done: Promise<void> | undefined;
  const cleanup = () =>
    (done ??= (async () => {
      for (const step of steps.reverse()) {
        // Bounded: a broker that went away must not hold up the rest (kafkajs retries).
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), 30_000);
        });
        try {
          if ((await Promise.race([Promise.resolve().then(step), timeout])) === 'timeout') log.warn('clean-up step timed out; going on');
        } catch (e) {
          log.warn('clean-up step failed', { err: e as Error });
        } finally {
          clearTimeout(timer);
        }
      }
      await stopAll(started, log);
      fs.rmSync(tmpDir, { recursive: true, force: true });
      say(name, `cleaned up (${tmpDir} removed${opts.keepDataDir ? `; ${dataDir} kept` : ''})`);
    })());
  // Ctrl-C reaches this process twice (from the terminal and forwarded by ops/bootstrap.mjs):
  // only a second one more than a second later forces the exit.
  let interruptedAt = 0;
  const onSignal = (signal: string) => {
    if (interruptedAt > 0) {
      if (Date.now() - interruptedAt > 1000) void exitWhenIdle(log, 130, 0);
      return;
    }
    interruptedAt = Date.now();
    say(name, `${signal}: cleaning up (again to force)...`);
    // The benchmark's own loops hold connections out of reach here: every statement of the
    // run's engine is killed, and again while the clean-up runs, as the loops start new ones
    // (the process could not exit while one runs). Bounded like a service's stop.
    const killer = embeddedStatementKiller(config);
    const kill = () => void killer.kill().catch(() => undefined);
    kill();
    const killing = setInterval(kill, 250);
    const deadline = new Promise<void>((resolve) => setTimeout(resolve, SHUTDOWN_DEADLINE_MS - 2_000));
    void Promise.race([cleanup(), deadline]).finally(() => {
      clearInterval(killing);
      void exitWhenIdle(log, 130, 1_000);
    });
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));

  say(name, `machine: ${machine()}`);
  say(name, `data in ${dataDir}${opts.keepDataDir ? ' (kept)' : ''}; topics prefixed ${config.topicPrefix}`);
  const redis = await ensureRedis(config, log);
  started.push(redis);
  say(name, redis ? `Redis: none answered at ${config.redisUrl}; started one for this run` : `Redis: reusing ${config.redisUrl}`);
  // A broker started by the benchmark keeps its data in the temporary folder.
  const brokers = config.kafkaBrokers.join(',');
  const kafka = await ensureKafka({ ...config, dataDir: path.join(tmpDir, 'kafka-home') }, log);
  started.push(kafka);
  say(name, kafka ? `Kafka: none answered at ${brokers}; started a broker for this run` : `Kafka: reusing the broker at ${brokers}`);
  const registry = await ensureSchemaRegistry({ ...config, dataDir: path.join(tmpDir, 'schema-registry-home') }, log);
  started.push(registry);
  say(name, registry ? `schema registry: none answered at ${config.schemaRegistryUrl}; started one for this run` : `schema registry: reusing ${config.schemaRegistryUrl}`);
  return { name, config, log, runId, tmpDir, onCleanup: (s) => void steps.push(s), cleanup };
}

/** Deletes a prefix's topics (and their .dlq twins) and the given consumer groups. */
export async function deleteTopicsAndGroups(kafka: Kafka, config: Pick<Config, 'topicPrefix'>, groups: string[]): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    if (groups.length > 0) await admin.deleteGroups(groups).catch(() => undefined);
    const existing = new Set(await admin.listTopics());
    const topics = topicConfigs(config).map((t) => t.topic).filter((t) => existing.has(t));
    if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 30_000 });
  } finally {
    await admin.disconnect();
  }
}

// ---------------------------------------------------------------------------------------
// A synthetic world: exchanges, a project owning every asset, and pairs in threes per base
// asset (X/USDT and X/USD spot on two exchanges, X_PERP/USDT on a third).

export interface BenchPair {
  exchange: string;
  pair: string;
  asset: string;
  market_type: 'spot' | 'perp';
  /** Mid price in the quote currency, a typical level size (USD) and the book's shape (bps). */
  price: number;
  levelUsd: number;
  halfSpreadBps: number;
  stepBps: number;
}

export interface BenchWorld {
  pairs: BenchPair[];
  exchanges: string[];
  fixture: FixtureFile;
  staff: { email: string; password: string };
}

export function benchWorld(opts: { pairs: number; exchangePrefix: string; exchanges?: number; seed?: number }): BenchWorld {
  const random = rng(opts.seed ?? 7);
  const nEx = opts.exchanges ?? 6;
  const exchanges = Array.from({ length: nEx }, (_, i) => `${opts.exchangePrefix}${i}`);
  const regions = ['asia', 'europe', 'americas'];
  const assets: { symbol: string; name: string; owner: string }[] = [];
  const pairs: BenchPair[] = [];
  const bases = Math.ceil(opts.pairs / 3);
  for (let i = 0; i < bases && pairs.length < opts.pairs; i++) {
    const sym = `TK${String(i).padStart(4, '0')}`;
    // Log-uniform prices from 0.001 to 50,000 USD.
    const price = Number((10 ** (-3 + random() * 7.7)).toPrecision(5));
    assets.push({ symbol: sym, name: `Token ${i}`, owner: 'bench-project' });
    const shapes = () => ({ levelUsd: 2_000 + random() * 60_000, halfSpreadBps: 0.3 + random() * 8, stepBps: 0.5 + random() * 4 });
    const variants: [string, string, 'spot' | 'perp', number][] = [
      [`${sym}/USDT`, sym, 'spot', 0],
      [`${sym}/USD`, sym, 'spot', 1],
      [`${sym}_PERP/USDT`, `${sym}_PERP`, 'perp', 2],
    ];
    for (const [pair, asset, market_type, k] of variants) {
      if (pairs.length >= opts.pairs) break;
      if (market_type === 'perp') assets.push({ symbol: asset, name: `Token ${i} perpetual`, owner: 'bench-project' });
      pairs.push({ exchange: exchanges[(i + k) % nEx]!, pair, asset, market_type, price, ...shapes() });
    }
  }
  const staff = { email: 'bench-staff@bench.example', password: crypto.randomBytes(12).toString('hex') };
  const fixture: FixtureFile = {
    exchanges: exchanges.map((slug, i) => ({ slug, name: `Bench exchange ${i}`, region: regions[i % regions.length]! })),
    organizations: [
      { slug: 'bench-project', name: 'Bench project', kind: 'project' },
      { slug: 'bench-mm', name: 'Bench market maker', kind: 'market_maker' },
    ],
    assets,
    pairs: pairs.map(({ exchange, pair, asset, market_type }) => ({ exchange, pair, asset, market_type })),
    users: [{ email: staff.email, username: 'bench-staff', password: staff.password, is_staff: true, organizations: [] }],
  };
  return { pairs, exchanges, fixture, staff };
}

/** A regular (not staff) user and what its organization covers. */
export interface BenchUser {
  email: string;
  password: string;
  organization: string;
  /** The organization's assets, in the world's order. */
  assets: string[];
  /** How many of the world's pairs those assets have. */
  pairs: number;
}

/**
 * The world with a regular user, the only member of a second project that owns the assets
 * of the world's first pairs, `assets` of them (all when the world has fewer). The market
 * endpoints answer a regular user on the assets of its organizations (callerScope), so its
 * requests read those pairs only, whatever the world's size. A token and its perpetual are
 * two assets with three pairs between them, so 100 assets have 150 pairs here, not 300.
 * The world itself is left as it is (bench:ingest and the others use it without a user).
 */
export function withUser(world: BenchWorld, opts: { assets: number }): BenchWorld & { user: BenchUser } {
  const organization = 'bench-user-project';
  const owned = new Set<string>();
  for (const p of world.pairs) {
    if (owned.size >= opts.assets) break;
    owned.add(p.asset);
  }
  const user: BenchUser = {
    email: 'bench-user@bench.example',
    password: crypto.randomBytes(12).toString('hex'),
    organization,
    assets: [...owned],
    pairs: world.pairs.filter((p) => owned.has(p.asset)).length,
  };
  const f = world.fixture;
  const fixture: FixtureFile = {
    ...f,
    organizations: [...(f.organizations ?? []), { slug: organization, name: 'Bench user project', kind: 'project' }],
    assets: (f.assets ?? []).map((a) => (owned.has(a.symbol) ? { ...a, owner: organization } : a)),
    users: [...(f.users ?? []), { email: user.email, username: 'bench-user', password: user.password, is_staff: false, organizations: [organization] }],
  };
  return { ...world, fixture, user };
}

/**
 * Order-book snapshots of one pair: a random walk of the mid, a spread and level steps
 * around the pair's shape, sizes around its typical level size; six significant digits,
 * like exchanges print. `levels` per side.
 */
export class BookGenerator {
  private readonly random: () => number;
  private readonly mids: number[];

  constructor(
    private readonly pairs: BenchPair[],
    private readonly levels: number,
    seed = 11,
  ) {
    this.random = rng(seed);
    this.mids = pairs.map((p) => p.price);
  }

  book(i: number, ts: number | string): OrderBookMessage {
    const p = this.pairs[i]!;
    const r = this.random;
    const mid = (this.mids[i] = this.mids[i]! * Math.exp(0.0003 * (r() - 0.5)));
    const half = p.halfSpreadBps * (0.6 + r() * 0.8);
    const bids: Level[] = new Array(this.levels);
    const asks: Level[] = new Array(this.levels);
    let offBid = half;
    let offAsk = half;
    for (let k = 0; k < this.levels; k++) {
      const bidPrice = sig6(mid * (1 - offBid / 1e4));
      const askPrice = sig6(mid * (1 + offAsk / 1e4));
      bids[k] = [bidPrice, sig6((p.levelUsd * (0.2 + r() * 1.6) * (1 + k / 10)) / bidPrice)];
      asks[k] = [askPrice, sig6((p.levelUsd * (0.2 + r() * 1.6) * (1 + k / 10)) / askPrice)];
      offBid += p.stepBps * (0.7 + r() * 0.6);
      offAsk += p.stepBps * (0.7 + r() * 0.6);
    }
    return { exchange: p.exchange, pair: p.pair, ts, bids, asks };
  }
}

const sig6 = (x: number): number => Number(x.toPrecision(6));

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` every `everyMs` until it returns true; false after `timeoutMs`. */
export async function until(fn: () => Promise<boolean>, timeoutMs: number, everyMs = 100): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await fn()) return true;
    if (Date.now() > end) return false;
    await sleep(everyMs);
  }
}

/**
 * Brings `tables` to the parts of a service that has been up a while: waits (at most
 * `maxSeconds`) until no merge has run for 3 s, then merges every partition still in
 * several parts into one, as the engine's merges would in time, and says what the tables
 * hold (active parts and bytes). Without this the engine merges loaded history while the
 * timed requests run, which at ten times the pairs rewrites ten times the bytes: merges of
 * a whole day's minutes started during the timed series at 3,000 pairs (docs/benchmarks.md).
 */
export async function settle(bench: string, ch: ClickHouse, maxSeconds: number, tables: string[]): Promise<void> {
  const t0 = performance.now();
  let quiet = 0;
  await until(
    async () => {
      const n = Number((await ch.query<{ n: number }>('SELECT count() AS n FROM system.merges'))[0]?.n ?? 0);
      quiet = n === 0 ? quiet + 1 : 0;
      return quiet >= 3;
    },
    maxSeconds * 1000,
    1000,
  );
  const split = await ch.query<{ table: string; partition_id: string; parts: number; size: string }>(
    `SELECT table, partition_id, count() AS parts, formatReadableSize(sum(bytes_on_disk)) AS size FROM system.parts
     WHERE active AND database = currentDatabase() AND table IN {tables:Array(String)}
     GROUP BY table, partition_id HAVING parts > 1 ORDER BY sum(bytes_on_disk)`,
    { tables },
  );
  for (const [i, p] of split.entries()) {
    const t = performance.now();
    await ch.command('OPTIMIZE TABLE {table:Identifier} PARTITION ID {partition:String} FINAL', { table: p.table, partition: p.partition_id }, { idempotent: true });
    const ms = performance.now() - t;
    if (ms > 1000) say(bench, `merged ${p.table} partition ${p.partition_id} (${p.parts} parts, ${p.size}) in ${fmtMs(ms)} (${i + 1} of ${split.length})`);
  }
  const parts = await ch.query<{ table: string; parts: number; size: string }>(
    `SELECT table, count() AS parts, formatReadableSize(sum(bytes_on_disk)) AS size FROM system.parts
     WHERE active AND database = currentDatabase() AND table IN {tables:Array(String)} GROUP BY table ORDER BY table`,
    { tables },
  );
  say(bench, `merges ${quiet >= 3 ? 'settled' : 'still running'}, ${split.length} partitions merged into one part each, after ${fmtMs(performance.now() - t0)}; active parts: ${parts.map((p) => `${p.table} ${p.parts} (${p.size})`).join(', ')}`);
}

/** Deletes a run's keys (the service's, under its prefix) from Redis when the run is done. */
export async function dropRedisKeys(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  redis.on('error', () => {});
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
