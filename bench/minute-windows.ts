// npm run bench:windows — what a processor's minute-window bookkeeping costs per second of
// feed at a fixed message rate, at 3,000 pairs against a baseline of 300 (issue 18: cost
// growing no faster than the work). The same messages a second reach each size; what may
// grow with the pairs is the work done on each flush (the commit point of every partition)
// and on each tick (closing the minutes the clock has sealed), which runs in the process
// that answers the API's requests.
//
// Simulated time, no Kafka and no ClickHouse: each simulated second adds --rate messages
// spread over the pairs and partitions, then flushes as the shell does (takes the closed
// minutes, records them written, asks each partition's commit point) and ticks (closeIdle).
// The sizes run in turns, --rounds times each; the figures are the median CPU time of a
// simulated second per part, and the ratio of the larger size to the baseline.
import { MinuteWindows, type Accumulator } from '../processors/shell/minute-windows.ts';
import { flags, machine, percentile, positiveInt, printTable, say, type Figure } from './common.ts';

const NAME = 'bench:windows';
const opt = flags(
  NAME,
  {
    pairs: { default: '3000', help: 'pairs of the larger size' },
    'baseline-pairs': { default: '300', help: 'pairs of the baseline' },
    rate: { default: '3000', help: 'messages per simulated second, at both sizes' },
    partitions: { default: '3', help: "the topic's partitions (md.* have 3)" },
    seconds: { default: '600', help: 'simulated seconds per run (the first 180 warm up and are not counted)' },
    rounds: { default: '3', help: 'runs at each size, in turns' },
    'lateness-seconds': { default: '120', help: 'LATENESS_SECONDS' },
  },
  "the minute windows' bookkeeping per second of feed at a fixed rate, at two sizes",
);
const PAIRS = positiveInt('pairs', opt.pairs);
const BASELINE = positiveInt('baseline-pairs', opt['baseline-pairs']);
const RATE = positiveInt('rate', opt.rate);
const PARTITIONS = positiveInt('partitions', opt.partitions);
const SECONDS = positiveInt('seconds', opt.seconds);
const ROUNDS = positiveInt('rounds', opt.rounds);
const LATENESS_MS = positiveInt('lateness-seconds', opt['lateness-seconds']) * 1000;
const WARMUP_S = 180;
/** Below this a difference is the clock's granularity, not a walk (one over 3,000 pairs costs hundreds of µs). */
const SLACK_US = 20;
if (SECONDS <= WARMUP_S) throw new Error(`--seconds must be more than the ${WARMUP_S} s of warm-up`);

/** As cheap as an accumulator can be, so the figures are the bookkeeping's. */
class Last implements Accumulator<number, number> {
  private v = 0;
  add(x: number): void {
    this.v = x;
  }
  row(): number {
    return this.v;
  }
}

interface Parts {
  accept: number[];
  flush: number[];
  tick: number[];
}

/** CPU time of what follows, in µs (user + system of the process: this is all it does). */
function cpu<T>(fn: () => T): [T, number] {
  const before = process.cpuUsage();
  const out = fn();
  const used = process.cpuUsage(before);
  return [out, used.user + used.system];
}

function run(pairs: number): Parts {
  const clock = { t: Date.UTC(2026, 10, 26, 12) };
  const w = new MinuteWindows<number, number, Last>({ latenessMs: LATENESS_MS, create: () => new Last(), now: () => clock.t });
  w.load([], new Map());
  const names = Array.from({ length: pairs }, (_, i) => `P${i}/USDT`);
  const offsets = new Array<bigint>(PARTITIONS).fill(0n);
  const read = new Map(Array.from({ length: PARTITIONS }, (_, p) => [p, 1000] as const));
  const parts: Parts = { accept: [], flush: [], tick: [] };
  let next = 0;
  for (let s = 0; s < SECONDS; s++) {
    const [, accept] = cpu(() => {
      for (let i = 0; i < RATE; i++) {
        const pair = next++ % pairs;
        // A pair keeps to one partition, as a keyed topic does.
        const partition = pair % PARTITIONS;
        const ts = clock.t + Math.floor((i * 1000) / RATE);
        w.accept('bench', names[pair]!, ts, i, partition, String(offsets[partition]!++));
      }
    });
    clock.t += 1000;
    const [, flush] = cpu(() => {
      const closed = w.takeClosed();
      w.persisted(closed, new Map());
      let sum = 0n;
      for (let p = 0; p < PARTITIONS; p++) sum += w.commitPoint(p, offsets[p]!);
      return sum;
    });
    const [, tick] = cpu(() => w.closeIdle(read));
    if (s >= WARMUP_S) {
      parts.accept.push(accept);
      parts.flush.push(flush);
      parts.tick.push(tick);
    }
  }
  return parts;
}

const median = (xs: number[]): number => percentile(xs, 50);
const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

say(NAME, `machine: ${machine()}`);
say(NAME, `${RATE} messages a simulated second over ${PARTITIONS} partitions, lateness ${LATENESS_MS / 1000} s, ${SECONDS} s a run (${WARMUP_S} s warm-up), ${ROUNDS} rounds`);
const pooled = new Map<number, Parts>([
  [BASELINE, { accept: [], flush: [], tick: [] }],
  [PAIRS, { accept: [], flush: [], tick: [] }],
]);
for (let round = 1; round <= ROUNDS; round++) {
  const order = round % 2 === 1 ? [BASELINE, PAIRS] : [PAIRS, BASELINE];
  for (const pairs of order) {
    const started = performance.now();
    const parts = run(pairs);
    const into = pooled.get(pairs)!;
    for (const k of ['accept', 'flush', 'tick'] as const) into[k].push(...parts[k]);
    say(NAME, `round ${round} of ${ROUNDS}, ${pairs} pairs: ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
}

const base = pooled.get(BASELINE)!;
const large = pooled.get(PAIRS)!;
const us = (x: number) => `${x.toFixed(0)} µs`;
const figures: Figure[] = [];
const versus = (l: number, b: number) => `${us(l)} at ${PAIRS}, ${us(b)} at ${BASELINE} (${(l / b).toFixed(2)}x)`;
// Messages open and close a minute per pair, so the larger size closes ten times the minute
// rows it writes: that part is work, and only shown.
figures.push({ figure: 'messages (accept), median a second', value: versus(median(large.accept), median(base.accept)), goal: 'info', result: 'info' });
const perSecond = (p: Parts) => p.flush.map((f, i) => f + p.tick[i]!);
const [l, b] = [median(perSecond(large)), median(perSecond(base))];
figures.push({
  figure: 'flush (commit points) + tick (closeIdle), median a second',
  value: versus(l, b),
  goal: `no walk over the pairs: at most 1.10x, or within ${SLACK_US} µs`,
  result: l <= 1.1 * b || l - b <= SLACK_US ? 'PASS' : 'MISS',
});
const total = (p: Parts) => mean(p.accept) + mean(p.flush) + mean(p.tick);
figures.push({ figure: 'all of it, mean a second', value: `${versus(total(large), total(base))}; ${((100 * total(large)) / 1e6).toFixed(2)} % of a core at ${PAIRS}`, goal: 'info', result: 'info' });
printTable(`bench:windows: ${RATE} messages/s at ${PAIRS} pairs against ${BASELINE}`, figures);
