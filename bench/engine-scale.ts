// npm run bench:engine-scale — the statements an endpoint ran at two sizes, run again side
// by side: what the engine itself costs at 3,000 pairs against 300, to a few per cent
// (issue 18, item 2).
//
// HTTP timings of two runs minutes apart differ by more than 10 % at the same size
// (docs/benchmarks.md, "In turns"). Here each size's kept folder is opened by an idle
// engine in a process of its own, and the two are asked in turns, one statement set at a
// time (A B B A ...), so a slow moment of the machine falls on both. Each set is the SQL
// with the bound values that bench:api recorded from the API at that size (--dump-sql;
// bench:api-scale writes it into each folder as statements.json). Per series: wall time
// and the process's CPU time (all its threads) per set, p50 / p95, and the ratios.
// Background merges are stopped in both engines while they are timed, so what is timed is
// the statements alone, on the parts the folders hold. A series whose statements bind the
// same pairs at both sizes (a regular user's: the same assets at every size) runs the
// larger size's statements in both engines: each size's own were recorded at another
// moment, and a window's pieces differ with the minute it is asked in (one recorded on the
// hour reads no minute rows at all), which moved a ratio by 0.4 (docs/benchmarks.md).
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openClickHouse } from '../lib/clickhouse.ts';
import { loadConfig } from '../lib/config.ts';
import { API_CLICKHOUSE } from '../ops/service.ts';
import { check, flags, fmtMs, percentile, positiveInt, printTable, say, type Figure } from './common.ts';
import { readStatements, runStatements, STATEMENTS_FILE, type Captured } from './statements.ts';

const NAME = 'bench:engine-scale';
/** A regular user's answers may grow by this much (issue 18, item 2). */
const USER_GOAL = 1.1;

interface Timing {
  ms: number;
  cpuMs: number;
}

if (process.env.BENCH_ENGINE_FOLDER) {
  await engine(process.env.BENCH_ENGINE_FOLDER);
} else {
  try {
    await main();
  } catch (e) {
    say(NAME, `failed: ${(e as Error).stack ?? String(e)}`);
    process.exitCode = 1;
  }
  process.exit(process.exitCode ?? 0);
}

/** What the parent asks a child: a series, from the child's own statements or the shared ones. */
interface Ask {
  series: string;
  shared: boolean;
}

/** A child: one folder's engine, running the named series' statements once per message. */
async function engine(folder: string): Promise<void> {
  const own = readStatements(path.join(folder, STATEMENTS_FILE));
  const shared = readStatements(process.env.BENCH_ENGINE_SHARED!);
  const ch = openClickHouse({ clickhouseUrl: undefined, clickhouseDatabase: 'default', dataDir: folder, uncompressedCacheBytes: loadConfig().uncompressedCacheBytes }, 'engine-scale', API_CLICKHOUSE);
  await ch.command('SYSTEM STOP MERGES');
  process.on('message', ({ series, shared: fromShared }: Ask) => {
    void (async () => {
      try {
        const cpu = process.cpuUsage();
        const { ms } = await runStatements(ch, (fromShared ? shared : own).get(series)!);
        const used = process.cpuUsage(cpu);
        process.send!({ ms, cpuMs: (used.user + used.system) / 1000 } satisfies Timing);
      } catch (e) {
        process.send!({ error: `${folder}: ${(e as Error).message}` });
      }
    })();
  });
  process.send!('ready');
}

async function main(): Promise<void> {
  const opt = flags(
    NAME,
    {
      baseline: { default: '', help: `the baseline's kept folder, with its ${STATEMENTS_FILE} (bench:api-scale --data <dir>: <dir>/p300-d2)` },
      data: { default: '', help: `the larger size's kept folder, with its ${STATEMENTS_FILE}` },
      only: { default: 'user (', help: 'the series whose name contains this, or one of these separated by |' },
      runs: { default: '100', help: 'timed runs of each series at each size' },
    },
    "the statements bench:api recorded at two sizes, run again in two idle engines in turns: the engine's own cost, wall and CPU, and its ratio",
  );
  if (!opt.baseline || !opt.data) throw new Error('--baseline and --data are required');
  const runs = positiveInt('runs', opt.runs);
  await compare(opt.baseline, opt.data, opt.only, runs);
}

/** Prints the paired table of the series both folders recorded (and --only selects). */
async function compare(baseline: string, data: string, only: string, runs: number): Promise<void> {
  const [a, b] = [readStatements(path.join(baseline, STATEMENTS_FILE)), readStatements(path.join(data, STATEMENTS_FILE))];
  const names = [...a.keys()].filter((n) => b.has(n) && only.split('|').some((part) => n.includes(part)));
  if (names.length === 0) throw new Error(`no series recorded in both folders matches ${JSON.stringify(only)}`);
  const shared = path.join(data, STATEMENTS_FILE);
  const [base, big] = await Promise.all([start(baseline, shared), start(data, shared)]);
  const figures: Figure[] = [];
  try {
    for (const name of names) {
      const same = samePairs(a.get(name)!, b.get(name)!);
      const what: Ask = { series: name, shared: same };
      for (let i = 0; i < 5; i++) for (const e of [base, big]) await ask(e, what);
      const t: [Timing[], Timing[]] = [[], []];
      for (let i = 0; i < runs; i++) {
        // A B, then B A: neither size is always the one asked right after the other.
        const order = i % 2 === 0 ? [0, 1] : [1, 0];
        for (const k of order) t[k]!.push(await ask(k === 0 ? base : big, what));
      }
      say(NAME, `${name}: ${runs} runs at each size, ${same ? "the larger size's statements in both" : 'each its own statements'}`);
      figures.push(...paired(same ? `${name} (the same statements)` : name, t[0], t[1]));
    }
  } finally {
    for (const e of [base, big]) e.kill();
  }
  printTable(`bench:engine-scale — ${path.basename(data)} against ${path.basename(baseline)}, ${runs} runs of each series in turns, ${new Date().toISOString()}`, figures);
}

function paired(name: string, base: Timing[], big: Timing[]): Figure[] {
  const line = (what: string, f: (t: Timing) => number): Figure => {
    const [b, g] = [base.map(f), big.map(f)];
    const r95 = percentile(g, 95) / percentile(b, 95);
    const user = !name.includes('staff');
    return {
      figure: `${name}: ${what} p50 / p95, baseline; larger; ratio`,
      value: `${fmtMs(percentile(b, 50))} / ${fmtMs(percentile(b, 95))}; ${fmtMs(percentile(g, 50))} / ${fmtMs(percentile(g, 95))}; ${(percentile(g, 50) / percentile(b, 50)).toFixed(2)} / ${r95.toFixed(2)}`,
      goal: user ? `p95 ratio <= ${USER_GOAL.toFixed(1)}` : '—',
      result: user ? check(r95 <= USER_GOAL) : 'info',
    };
  };
  return [line('wall time of the statements', (t) => t.ms), line('CPU time of the process', (t) => t.cpuMs)];
}

/** Whether two recordings of a series bind the same pairs: then either size's statements ask the same of both. */
function samePairs(a: Captured[], b: Captured[]): boolean {
  const pairs = (qs: Captured[]) => JSON.stringify(qs.map((q) => q.params.pairs));
  return a.length > 0 && pairs(a) === pairs(b);
}

function start(folder: string, shared: string): Promise<ChildProcess> {
  const child = fork(fileURLToPath(import.meta.url), [], { env: { ...process.env, BENCH_ENGINE_FOLDER: folder, BENCH_ENGINE_SHARED: shared }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('message', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`the engine of ${folder} ended with code ${code} before it was ready`)));
  });
}

function ask(child: ChildProcess, { series, shared }: Ask): Promise<Timing> {
  return new Promise((resolve, reject) => {
    const ended = (code: number | null) => reject(new Error(`an engine ended with code ${code} while running ${series}`));
    child.once('exit', ended);
    child.once('message', (m: Timing | { error: string }) => {
      child.off('exit', ended);
      if ('error' in m) reject(new Error(m.error));
      else resolve(m);
    });
    child.send({ series, shared } satisfies Ask);
  });
}
