// What the reconciliation compares (its endpoint: api/resources/market-makers/reconciliation.ts):
// per market maker, exchange, pair and bucket where it both reported and was measured, each
// metric's reported value and its wallets' trusted value over the same reported buckets.
//
// Each reported bucket is compared with the trusted values of the minutes its latest push
// covers (reporting.ts), not with the window's: a report of an open bucket covers the
// minutes ended before its push, a daily report all of its day whatever the window. A row
// over several reported buckets (`a`) compares the mean (volume: the sum) of the buckets
// both sides have (compareBuckets in values.ts).
import { LEVELS_BPS, levelIndex, levelName } from '../market/facts.ts';
import { planBuckets, type Range } from '../market/window.ts';
import type { Pair, Wallet } from '../reference/repository.ts';
import type { ReportedValuesOf } from './metrics.ts';
import { REPORTED_INTERVALS, type ReportedInterval } from './reported.ts';
import { inAnswerOrder, type MarketMakerReadings, type MmQuery } from './readings.ts';
import { coveredMinutes } from './reporting.ts';
import { addPackedWallet, coarsestReported, compareBuckets, oneBucketComparedPacked, packedWallet, type PackedCompared } from './values.ts';
import { TwoKeyMap } from '../../lib/map-key.ts';
import { RowPool } from '../../lib/row-pool.ts';
import { MINUTE_MS } from '../../lib/time.ts';

/**
 * The rows: per market maker, pair and bucket, each metric's two sides. The sides of all
 * rows are packed in one array each, row i's metric j at `i * width + j`, not a view per
 * row: a month is 30,000 rows, and views are objects the collector moves while the answer
 * is made (docs/benchmarks.md).
 */
export interface Reconciled {
  /** In the answers' order. */
  rows: readonly { maker: string; pair: Pair; b: number }[];
  /** Metrics per row (volume, then bid and ask at each level asked: reconciledMetrics). */
  width: number;
  /** The reported side; NaN where unknown. */
  reported: Float64Array;
  /** The trusted side; NaN where unknown. */
  trusted: Float64Array;
  /** 1 where both sides cover the same buckets (only then is a difference shown and judged). */
  matched: Uint8Array;
}

/** The names of the compared metrics, in the order of a Reconciled row's. */
export function reconciledMetrics(levels: readonly number[]): string[] {
  return ['volume', ...levels.map((l) => `bid_${levelName(l)}bps`), ...levels.map((l) => `ask_${levelName(l)}bps`)];
}


/** The rows: per market maker, pair and bucket of the answer, each metric's two sides over the same reported buckets; in the answers' order. */
export async function reconcile(readings: MarketMakerReadings, req: MmQuery, latenessMs: number): Promise<Reconciled> {
  const w = req.window;
  const names = req.levels.map(levelName);
  const metricIds = ['volume/volume', ...names.map((l) => `depth/bid_${l}bps`), ...names.map((l) => `depth/ask_${l}bps`)];
  const keys = [...req.makers].flatMap(([organization, m]) => m.pairs.map((p) => ({ organization, exchange: p.exchange, pair: p.pair })));
  const width = metricIds.length;
  if (keys.length === 0) return { rows: [], width, reported: new Float64Array(0), trusted: new Float64Array(0), matched: new Uint8Array(0) };
  const read = await readings.metrics.reportedBuckets({ keys, metrics: metricIds, ranges: w.ranges, interval: w.interval, zone: w.zone });
  // With `a`, each market maker's coarsest interval reported in the window, as the summary.
  const buckets = w.interval === 'a' ? coarsestReported(read) : read;
  const pairs = new TwoKeyMap<string, string, Pair>(req.pairs.map((p) => [p.exchange, p.pair, p]));
  // Rows matched by the pair object read and numbers, never by a text made per row: a
  // month is 30,000 reported buckets and twice as many wallets' trusted rows.
  const covered = buckets.flatMap((r) => {
    const range = coveredMinutes(r.interval, r.start, r.pushedAt, latenessMs);
    const pair = pairs.get(r.exchange, r.pair);
    return range && pair && req.makers.get(r.organization)?.pairs.includes(pair) ? [{ r, range, pair }] : [];
  });
  const trusted = await trustedOver(
    readings,
    req,
    pairs,
    covered.map(({ r, range, pair }) => ({ interval: r.interval, range, pair })),
  );

  const walletsOf = new Map<string, Wallet[]>();
  for (const wallet of req.wallets.values()) walletsOf.set(wallet.organization, [...(walletsOf.get(wallet.organization) ?? []), wallet]);
  // Each reported bucket's wallets summed, a row of `sums` each.
  const sums = new RowPool(width, covered.length);
  type Cell = { maker: string; pair: Pair; b: number; both: { reported: ReportedValuesOf; trusted: number }[] };
  const cells = new Map<string, TwoKeyMap<Pair, number, Cell>>();
  for (const { r, range, pair } of covered) {
    // Its wallets together, in the wallets' order.
    const key = rangeKey(r.interval, range);
    let sum = -1;
    for (const wallet of walletsOf.get(r.organization) ?? []) {
      const t = trusted.offsets.get(pair, wallet.id)?.get(key);
      if (t === undefined) continue;
      if (sum < 0) sum = sums.copy(trusted.rows.data, t);
      else addPackedWallet(sums.data, sum, trusted.rows.data, t, width);
    }
    if (sum < 0) continue;
    let ofMaker = cells.get(r.organization);
    if (!ofMaker) cells.set(r.organization, (ofMaker = new TwoKeyMap()));
    let c = ofMaker.get(pair, r.b);
    if (!c) {
      c = { maker: r.organization, pair, b: r.b, both: [] };
      ofMaker.set(pair, r.b, c);
    }
    c.both.push({ reported: r, trusted: sum });
  }

  // Per row, each metric's two sides in arrays, not an object per metric: a month is over
  // a million comparisons. Both sides by their metric's position in metricIds, NaN unknown.
  const ordered = inAnswerOrder([...cells.values()].flatMap((m) => m.values()));
  const all: PackedCompared = { reported: new Float64Array(ordered.length * width), trusted: new Float64Array(ordered.length * width), matched: new Uint8Array(ordered.length * width) };
  const orNull = (x: number) => (Number.isNaN(x) ? null : x);
  ordered.forEach((c, row) => {
    const at = row * width;
    // One reported bucket, as every row but those of `a` has, compared packed.
    if (c.both.length === 1) oneBucketComparedPacked(c.both[0]!.reported.values, sums.data, c.both[0]!.trusted, all, at);
    else {
      for (let j = 0; j < width; j++) {
        const x = compareBuckets(
          c.both.map((b) => ({ reported: orNull(b.reported.values[j]!), trusted: orNull(sums.data[b.trusted + j]!) })),
          j === 0 ? 'sum' : 'mean',
        );
        all.reported[at + j] = x.reported ?? NaN;
        all.trusted[at + j] = x.trusted ?? NaN;
        all.matched[at + j] = x.matched ? 1 : 0;
      }
    }
  });
  return { rows: ordered, width, ...all };
}

/**
 * A reported interval and a range of whole minutes as one number (exact: the range's start
 * in minutes times 2^21 plus its length in minutes, under 2^21, then times 4 plus the
 * interval's position).
 */
const rangeKey = (interval: ReportedInterval, [from, to]: Range): number =>
  ((from / MINUTE_MS) * 2 ** 21 + (to - from) / MINUTE_MS) * 4 + REPORTED_INTERVALS.indexOf(interval);

/**
 * The trusted values of each wallet over each reported bucket's covered minutes, at the
 * levels asked, each a row of `rows` whose offset is found by pair and wallet, then by the bucket's
 * interval and range (rangeKey): volume, then bid and ask at each level
 * (reconciledMetrics' order), NaN where unknown
 * (trustedVolume's and mean's null). A read takes one range per bucket start, so buckets
 * of one start covered to different minutes (pushes at other times) are read in turns:
 * usually one read per reported interval.
 */
async function trustedOver(
  readings: MarketMakerReadings,
  req: MmQuery,
  pairs: TwoKeyMap<string, string, Pair>,
  wanted: { interval: ReportedInterval; range: Range; pair: Pair }[],
): Promise<{ rows: RowPool; offsets: TwoKeyMap<Pair, number, Map<number, number>> }> {
  const at = req.levels.map(levelIndex);
  const n = at.length;
  const wallets = [...req.wallets.keys()];
  // About a row per wanted bucket and wallet of its market maker.
  const rows = new RowPool(1 + 2 * n, wanted.length * Math.ceil(wallets.length / Math.max(1, req.makers.size)));
  const out = { rows, offsets: new TwoKeyMap<Pair, number, Map<number, number>>() };
  if (wallets.length === 0) return out;
  const every = n === LEVELS_BPS.length;
  for (const interval of REPORTED_INTERVALS) {
    // Per bucket start: the distinct ends wanted, and the pairs wanting each.
    const ends = new Map<number, Map<number, Set<Pair>>>();
    for (const x of wanted) {
      if (x.interval !== interval) continue;
      let byEnd = ends.get(x.range[0]);
      if (!byEnd) ends.set(x.range[0], (byEnd = new Map()));
      let wanting = byEnd.get(x.range[1]);
      if (!wanting) byEnd.set(x.range[1], (wanting = new Set()));
      wanting.add(x.pair);
    }
    for (let turn = 0; ; turn++) {
      const ranges: Range[] = [];
      const wantedPairs = new Set<Pair>();
      for (const [start, byEnd] of ends) {
        const end = [...byEnd.keys()].sort((a, b) => a - b)[turn];
        if (end === undefined) continue;
        ranges.push([start, end]);
        for (const p of byEnd.get(end)!) wantedPairs.add(p);
      }
      if (ranges.length === 0) break;
      ranges.sort((a, b) => a[0] - b[0]);
      const q = { pairs: req.pairs.filter((p) => wantedPairs.has(p)), interval, zone: 'UTC', pieces: planBuckets(interval, ranges, 'UTC', req.window.rolledUpTo).pieces };
      const { depth, volume } = await readings.metrics.trusted(q, wallets, { depth: true, volume: true }, every ? undefined : at);
      const endOf = new Map(ranges.map(([a, b]) => [a, b]));
      const slot = (wallet: number, exchange: string, pairName: string, b: number) => {
        const pair = pairs.get(exchange, pairName);
        if (!pair) return undefined;
        const start = b * 1000;
        const range = rangeKey(interval, [start, endOf.get(start) ?? start]);
        let byRange = out.offsets.get(pair, wallet);
        if (!byRange) out.offsets.set(pair, wallet, (byRange = new Map()));
        let m = byRange.get(range);
        if (m === undefined) {
          m = rows.add();
          packedWallet.empty(n, rows.data, m);
          byRange.set(range, m);
        }
        return m;
      };
      for (let i = 0; i < depth.length; i++) {
        const m = slot(depth.wallet_id[i]!, depth.exchange[i]!, depth.pair[i]!, depth.b[i]!);
        if (m !== undefined) packedWallet.depth(depth, i, n, rows.data, m);
      }
      for (let i = 0; i < volume.length; i++) {
        const m = slot(volume.wallet_id[i]!, volume.exchange[i]!, volume.pair[i]!, volume.b[i]!);
        if (m !== undefined) packedWallet.volume(volume, i, rows.data, m);
      }
    }
  }
  return out;
}
