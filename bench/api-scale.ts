// npm run bench:api-scale — bench:api at two sizes (3,000 pairs against a baseline of 300),
// in turns, on the same machine in the same hour (issue 18, item 2).
//
// Two runs of bench:api a few minutes apart can differ by more than the 10 % the goal
// allows (docs/benchmarks.md, "In turns"), so one run per size says little. This loads
// each size's history once into a kept folder, then runs bench:api on it in rounds, the
// sizes in turns and the order reversed every round (baseline first, then last), so slow
// minutes of the machine fall on both. Each series' samples are pooled over the rounds; the table gives both
// sizes' p50 / p95, their ratio, and the ratio of each round's pair of runs. Round 1 also
// records the statements each series ran, into each folder; bench:engine-scale then runs
// them again at both sizes side by side, which resolves a few per cent where HTTP cannot.
// With --pairs equal to --baseline-pairs it measures the baseline against itself: the
// ratios two runs of one size differ by, against which the sizes' ratios are read.
// With --interleave yes, each round runs both sizes at once, idle, their timed requests in
// turns one at a time (bench/lockstep.ts): the machine's slow minutes, which decided whole
// rounds of runs in turns, fall on both sides alike.
//
// A window reads the open hour from minute rows after the market families' mark, which
// moves every ten minutes (OPEN_STEP_MS), so a run costs more the later in a step it asks:
// each run starts `--align` seconds after a step of the clock, so both sizes ask at the
// same offsets from their mark (docs/benchmarks.md, "The open hour rolled up every ten
// minutes").
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { OPEN_STEP_MS } from '../domain/market/repositories/rollup-marks.ts';
import { check, flags, fmtMs, percentile, positiveInt, printTable, say, sleep, startRun, type Figure } from './common.ts';
import { LockstepCoordinator } from './lockstep.ts';
import { STATEMENTS_FILE } from './statements.ts';

const NAME = 'bench:api-scale';
const opt = flags(
  NAME,
  {
    pairs: { default: '3000', help: 'pairs of the larger size (equal to --baseline-pairs: the baseline against itself, the ratio two runs of one size differ by)' },
    'baseline-pairs': { default: '300', help: 'pairs of the baseline' },
    days: { default: '2', help: 'days of minute history loaded at each size' },
    rounds: { default: '2', help: 'runs at each size, in turns' },
    only: { default: '', help: "the series to time, as bench:api's --only (default: all)" },
    phases: { default: 'idle,ingesting', help: "bench:api's --phases, in turns (interleaved runs time the idle phase only)" },
    'series-seconds': { default: '30', help: "bench:api's --series-seconds" },
    'ingesting-seconds': { default: '65', help: "bench:api's --ingesting-seconds" },
    data: { default: '', help: 'keep both sizes\' history in this folder and reuse it in a later run (default: a temporary folder, removed at the end)' },
    align: { default: '30', help: 'start each run this many seconds after a ten-minute step of the clock ("no": at once)' },
    interleave: {
      default: 'no',
      help: '"yes": both sizes\' services up at once, idle, their timed requests in turns one at a time (bench/lockstep.ts), so the machine\'s slow minutes fall on both; the idle phase only',
    },
    'engine-runs': { default: '100', help: 'then run the statements round 1 recorded at both sizes again, in turns, this many times each (bench:engine-scale; 0: not)' },
  },
  'bench:api at two sizes in turns, each series pooled over the rounds, with the ratio of the larger size to the baseline',
);
const PAIRS = positiveInt('pairs', opt.pairs);
const BASELINE = positiveInt('baseline-pairs', opt['baseline-pairs']);
const DAYS = positiveInt('days', opt.days);
const ROUNDS = positiveInt('rounds', opt.rounds);
const ENGINE_RUNS = opt['engine-runs'] === '0' ? 0 : positiveInt('engine-runs', opt['engine-runs']);
const ALIGN_MS = opt.align === 'no' ? undefined : Number(opt.align) * 1000;
if (ALIGN_MS !== undefined && !(ALIGN_MS >= 0 && ALIGN_MS < OPEN_STEP_MS)) throw new Error(`--align: seconds after a step, 0 to ${OPEN_STEP_MS / 1000 - 1}, or "no"`);
const INTERLEAVE = opt.interleave === 'yes';
if (INTERLEAVE && opt.phases !== 'idle,ingesting' && opt.phases !== 'idle') throw new Error('--interleave yes times the idle phase only');
/** A regular user's answers may grow by this much (issue 18, item 2). */
const USER_GOAL = 1.1;

/** One bench:api run's output (bench/api.ts: writeSamples). */
interface RunSamples {
  pairs: number;
  series: { phase: 'idle' | 'ingesting'; query: string; http: number[]; bare: number[] }[];
  /** Absent when the run timed the idle phase only. */
  ingest?: { books: number; trades: number; machineCores: number; serviceCores: number };
}

const here = path.dirname(fileURLToPath(import.meta.url));
const SCRIPTS = { 'bench:api': path.join(here, 'api.ts'), 'bench:engine-scale': path.join(here, 'engine-scale.ts') };

/** The child benchmarks running now (two at once when interleaved), and their ends. */
const running = new Map<ChildProcess, Promise<void>>();

/** A benchmark as a child process (bench:api: its own service, on the broker and registry this run started). */
function start(bench: keyof typeof SCRIPTS, label: string, args: string[], opts: { ipc?: boolean } = {}): { proc: ChildProcess; done: Promise<void> } {
  say(NAME, `${label}: ${bench} ${args.join(' ')}`);
  const proc = spawn(process.execPath, ['--import', 'tsx', SCRIPTS[bench], ...args], { stdio: opts.ipc ? ['inherit', 'inherit', 'inherit', 'ipc'] : 'inherit' });
  const done = new Promise<void>((resolve, reject) => {
    proc.once('error', reject);
    proc.once('exit', (code, signal) => (code === 0 ? resolve() : reject(new Error(`${bench} ${label} ended with ${signal ?? `code ${code}`}`))));
  }).finally(() => running.delete(proc));
  running.set(proc, done);
  return { proc, done };
}
const child = (bench: keyof typeof SCRIPTS, label: string, args: string[]) => start(bench, label, args).done;
const benchApi = (label: string, args: string[]) => child('bench:api', label, args);

/** Waits for the next instant ALIGN_MS after a step of the marks. */
async function alignToStep(): Promise<void> {
  if (ALIGN_MS === undefined) return;
  const now = Date.now();
  let at = Math.floor(now / OPEN_STEP_MS) * OPEN_STEP_MS + ALIGN_MS;
  if (at < now) at += OPEN_STEP_MS;
  say(NAME, `waiting ${fmtMs(at - now)}, to start ${ALIGN_MS / 1000} s after a step of the marks (${new Date(at).toISOString().slice(11, 19)})`);
  await sleep(at - now);
}

const run = await startRun(NAME);
// Stopped (Ctrl-C, SIGTERM), the run's bench:api cleans up first: it uses the broker this one stops.
run.onCleanup(async () => {
  for (const proc of running.keys()) proc.kill('SIGINT');
  await Promise.allSettled(running.values());
});
const home = opt.data ? path.resolve(opt.data) : run.tmpDir;
// By side, not by size: the baseline against itself (--pairs equal to --baseline-pairs)
// measures what two runs of the same size differ by, the floor a ratio is read against.
const sides = [
  { side: 0, pairs: BASELINE },
  { side: 1, pairs: PAIRS },
] as const;
type Side = (typeof sides)[number];
/** A side's history. Interleaved, one size against itself needs a second copy: one engine per folder. */
const folder = ({ side, pairs }: Side) => path.join(home, `p${pairs}-d${DAYS}${INTERLEAVE && side === 1 && PAIRS === BASELINE ? '-twin' : ''}`);
const common = ['--days', String(DAYS), '--series-seconds', opt['series-seconds'], '--ingesting-seconds', opt['ingesting-seconds'], ...(opt.only ? ['--only', opt.only] : [])];
const label = (round: number, { side, pairs }: Side) => `round ${round} of ${ROUNDS}, ${pairs} pairs${side === 0 ? ' (baseline)' : ''}`;

/** bench:api's arguments for a side's run in a round; round 1 records the statements each series ran, for bench:engine-scale. */
function runArgs(round: number, s: Side): { file: string; args: string[] } {
  const file = path.join(run.tmpDir, `samples-${s.side}-${s.pairs}-${round}.json`);
  const statements = path.join(folder(s), STATEMENTS_FILE);
  if (round === 1) fs.rmSync(statements, { force: true });
  const record = round === 1 && ENGINE_RUNS > 0 ? ['--dump-sql', statements] : [];
  return { file, args: ['--pairs', String(s.pairs), '--keep-data', folder(s), '--samples-json', file, ...record, ...common] };
}
const samplesOf = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8')) as RunSamples;

/** Both sides at once, idle, their timed requests in turns; the side going first alternates by round. */
async function interleaved(round: number): Promise<[RunSamples, RunSamples]> {
  const [a, b] = sides.map((s) => {
    const { file, args } = runArgs(round, s);
    return { file, ...start('bench:api', `${label(round, s)}, in turns`, [...args, '--phases', 'idle', '--lockstep', 'yes'], { ipc: true }) };
  }) as [{ file: string; proc: ChildProcess; done: Promise<void> }, { file: string; proc: ChildProcess; done: Promise<void> }];
  const coordinator = new LockstepCoordinator([a.proc, b.proc], round % 2 === 1 ? 0 : 1);
  await Promise.race([Promise.all([a.done, b.done]), coordinator.broken]);
  return [samplesOf(a.file), samplesOf(b.file)];
}

try {
  const loads = new Map(sides.map((s) => [folder(s), s.pairs]));
  const twin = folder(sides[1]) !== folder(sides[0]) && PAIRS === BASELINE ? folder(sides[1]) : undefined;
  if (twin) loads.delete(twin);
  for (const [dir, pairs] of loads) await benchApi(`loading ${pairs} pairs`, ['--pairs', String(pairs), '--days', String(DAYS), '--keep-data', dir, '--load-only', 'yes']);
  // One size against itself, at once: the second engine gets a copy of the first's folder,
  // the same rows and parts, so the two sides differ by nothing but their process (made
  // anew each time: the first folder changes with every run on it).
  if (twin) {
    say(NAME, `copying ${folder(sides[0])} to ${twin}`);
    fs.rmSync(twin, { recursive: true, force: true });
    fs.cpSync(folder(sides[0]), twin, { recursive: true });
  }
  const runs: [RunSamples[], RunSamples[]] = [[], []];
  for (let round = 1; round <= ROUNDS; round++) {
    if (INTERLEAVE) {
      const [base, large] = await interleaved(round);
      runs[0].push(base);
      runs[1].push(large);
      continue;
    }
    const order = round % 2 === 1 ? sides : ([sides[1], sides[0]] as const);
    for (const s of order) {
      const { file, args } = runArgs(round, s);
      await alignToStep();
      await benchApi(label(round, s), [...args, '--phases', opt.phases]);
      runs[s.side].push(samplesOf(file));
    }
  }
  const how = INTERLEAVE ? 'interleaved, idle' : 'in turns';
  printTable(`bench:api-scale — ${PAIRS} against ${BASELINE} pairs, ${DAYS} day(s), ${ROUNDS} rounds ${how}, ${new Date().toISOString()}`, figures(runs[0], runs[1]));
  if (ENGINE_RUNS > 0) {
    await child('bench:engine-scale', 'the recorded statements in turns', ['--baseline', folder(sides[0]), '--data', folder(sides[1]), '--only', opt.only || 'user (', '--runs', String(ENGINE_RUNS)]);
  }
} catch (e) {
  say(NAME, `failed: ${(e as Error).stack ?? String(e)}`);
  process.exitCode = 1;
} finally {
  await run.cleanup();
}
process.exit(process.exitCode ?? 0);

function figures(base: RunSamples[], big: RunSamples[]): Figure[] {
  const out: Figure[] = [];
  const rowsRatio = PAIRS / BASELINE;
  for (const { phase, query } of base[0]!.series) {
    const samples = (runs: RunSamples[]) => runs.map((r) => r.series.find((s) => s.phase === phase && s.query === query)?.http ?? []);
    const [b, g] = [samples(base), samples(big)];
    const pooled = (xs: number[][], p: number) => percentile(xs.flat(), p);
    const ratio = (p: number) => pooled(g, p) / pooled(b, p);
    const perRound = b.map((x, i) => `${(percentile(g[i]!, 50) / percentile(x, 50)).toFixed(2)} / ${(percentile(g[i]!, 95) / percentile(x, 95)).toFixed(2)}`);
    const staff = query.startsWith('staff');
    // Staff read every pair: their answers may grow with their rows, not faster.
    const limit = staff ? rowsRatio : USER_GOAL;
    out.push({
      figure: `${query}, ${phase === 'idle' ? 'idle' : 'while ingesting'}: HTTP p50 / p95 at ${BASELINE} and ${PAIRS} pairs; ${PAIRS} / ${BASELINE}`,
      value: `${fmtMs(pooled(b, 50))} / ${fmtMs(pooled(b, 95))}; ${fmtMs(pooled(g, 50))} / ${fmtMs(pooled(g, 95))}; ${ratio(50).toFixed(2)} / ${ratio(95).toFixed(2)} (each round: ${perRound.join(', ')}; n=${b.flat().length} and ${g.flat().length})`,
      goal: `p95 ratio <= ${limit.toFixed(1)}`,
      result: check(ratio(95) <= limit),
    });
  }
  // Interleaved runs are idle only.
  if (!base.every((r) => r.ingest) || !big.every((r) => r.ingest)) return out;
  const mean = (runs: RunSamples[], f: (r: Required<RunSamples>) => number) => runs.reduce((n, r) => n + f(r as Required<RunSamples>), 0) / runs.length;
  const books = [mean(base, (r) => r.ingest.books), mean(big, (r) => r.ingest.books)] as const;
  out.push({
    figure: `ingest while the requests ran: snapshots/s at ${BASELINE} and ${PAIRS} pairs (mean of rounds); cores busy, machine (service)`,
    value: `${books[0].toFixed(0)} and ${books[1].toFixed(0)}, ${(books[1] / books[0]).toFixed(2)}; ${mean(base, (r) => r.ingest.machineCores).toFixed(2)} (${mean(base, (r) => r.ingest.serviceCores).toFixed(2)}) and ${mean(big, (r) => r.ingest.machineCores).toFixed(2)} (${mean(big, (r) => r.ingest.serviceCores).toFixed(2)})`,
    goal: 'ratio >= 0.90',
    result: check(books[1] / books[0] >= 0.9),
  });
  return out;
}
