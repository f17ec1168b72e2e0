// The uptime endpoints' JSON rows (specification 2.6), from ClickHouse and the cache of
// sealed buckets (uptime-cache.ts). For a fixed interval:
//
// 1. the window's buckets, each with the minutes of the window in it (window.ts);
// 2. the write count of each hour the kept buckets span is read (market_writes), and the
//    buckets that cannot be kept — cut by the window's edges, or not sealed (ended less
//    than the lateness and a minute ago) — are computed meanwhile, or, when some kept
//    bucket was never computed, after it with those;
// 3. each pair's kept buckets come from its segment in the cache when they were computed
//    at the same write counts; a bucket any pair lacks is computed for all, after step 2,
//    and put in the segments;
// 4. rows in the order of the uncached answer, pairs in (exchange, pair) order, then
//    buckets in time order, in the bytes ClickHouse's JSON array would have: a pair's run
//    of kept buckets is one slice of its segment.
//
// A write into an hour after its count was read raises the count, so the next request
// computes the bucket again: rows are never older than the writes counted before them.
// `a` (one row per pair over the whole window) and `c` are computed whole each time, as are
// answers too large to keep (maxCachedRows: a third of the cache) and views asked for the first time.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { levelName, type FixedInterval } from '../../domain/market/facts.ts';
import { rowRanks, type UptimeQuery, type UptimeRepository } from '../../domain/market/repositories/uptime.ts';
import type { WriteCounts } from '../../domain/market/repositories/write-counts.ts';
import { writesIn } from './sealing.ts';
import { SEP, locate, withBuckets, type Segment, type UptimeCache } from './uptime-cache.ts';
import { bucketsOf, mergeRanges, planBuckets, sealedBefore, spanOf, type SealingOptions, type WindowBucket } from '../../domain/market/window.ts';
import { HOUR_MS } from '../../lib/time.ts';

const MIN = 60_000;

/** Shortest length of each fixed interval's buckets, to bound an answer's rows before listing them. */
const SHORTEST_MS: Record<FixedInterval, number> = {
  '1m': MIN,
  '5m': 5 * MIN,
  '15m': 15 * MIN,
  '30m': 30 * MIN,
  '1h': HOUR_MS,
  '4h': 4 * HOUR_MS,
  '1d': 23 * HOUR_MS,
  '1w': 7 * 23 * HOUR_MS,
  '1M': 28 * 23 * HOUR_MS,
};

/** What a kept spread uptime row takes in a segment (25 levels: about 450 bytes of JSON). */
const ROW_BYTES = 450;

/**
 * The most rows of an answer that is kept: a third of the cache, so one view cannot push
 * out every other (200,000 rows at the default 256 MiB). Larger answers are computed whole.
 */
export const maxCachedRows = (cacheBytes: number): number => Math.floor(cacheBytes / 3 / ROW_BYTES);

/** Rows computed now: by bucket start (epoch ms), the row of each pair (by index), without separator. */
type Computed = Map<number, (Buffer | undefined)[]>;

export class UptimeRows {
  constructor(
    private readonly uptime: UptimeRepository,
    private readonly writeCounts: WriteCounts,
    private readonly cache: UptimeCache,
    private readonly opts: SealingOptions,
  ) {}

  /** The response body: a JSON array of rows. */
  async json(q: UptimeQuery): Promise<Readable | string> {
    const { interval, ranges } = q.window;
    if (!this.cache.enabled || interval === 'a' || interval === 'c' || q.pairs.length === 0 || ranges.length === 0) return this.uptime.json(q);
    const span = spanOf(q.window);
    if (q.pairs.length * Math.ceil(span / SHORTEST_MS[interval] + 1) > maxCachedRows(this.cache.maxBytes)) return this.uptime.json(q);
    const buckets = bucketsOf(interval, ranges, q.window.zone);
    if (buckets.length === 0) return '[]';

    // Kept: whole buckets (the window's minutes are all of it) that are sealed.
    const sealed = sealedBefore(this.opts);
    const kept = buckets.map((b) => b.ranges.length === 1 && b.ranges[0]![0] === b.start && b.ranges[0]![1] === b.end && b.end <= sealed);
    const keptBuckets = buckets.filter((_, i) => kept[i]);
    const starts = keptBuckets.map((b) => b.start);
    const shape = shapeOf(q);
    const keys = q.pairs.map((p) => `${shape}|${p.exchange}\u0000${p.pair}\u0000${p.asset}`);
    // Buckets are computed after the counts are read (a bucket's version is the count it was
    // computed at). When every pair holds every kept bucket, at whatever count, the others
    // are computed while the counts are read; when some bucket was never computed (after a
    // restart, or a view not asked before), all that is computed waits for the counts and
    // is one statement: a round less.
    const early = keys.every((k) => locate(this.cache.get(k), starts).every((j) => j >= 0));
    // Segments are filled only for a view asked for before (its row shape, pairs and span):
    // building them costs more than the answer ClickHouse writes whole, which a one-off
    // view should not pay.
    if (!early && !this.cache.seen.check(createHash('sha1').update(`${span}\n${keys.join('\n')}`).digest('base64'))) return this.uptime.json(q);
    const [writes, opened] = await Promise.all([
      keptBuckets.length > 0 ? this.writeCounts.read(['book'], keptBuckets[0]!.start, keptBuckets[keptBuckets.length - 1]!.end).then((w) => w.book) : new Map<number, number>(),
      early ? this.compute(q, buckets.filter((_, i) => !kept[i])) : undefined,
    ]);

    const versions = keptBuckets.map((b) => writesIn(writes, b.start, b.end));
    let segments = keys.map((k) => this.cache.get(k));
    let where = segments.map((s) => locate(s, starts, versions));
    const missing = starts.map((_, k) => k).filter((k) => where.some((w) => w[k]! < 0));
    this.cache.hits += starts.length - missing.length;
    this.cache.misses += missing.length;
    let other = opened;
    if (missing.length > 0 || !other) {
      const fresh = await this.compute(q, [...(other ? [] : buckets.filter((_, i) => !kept[i])), ...missing.map((k) => keptBuckets[k]!)]);
      other ??= fresh;
      if (missing.length > 0) {
        // Buckets older than the window by more than its span are dropped: a segment does not
        // grow for ever, and a view twice as long still finds its buckets.
        const keepFrom = buckets[0]!.start - span;
        segments = segments.map((s, p) => withBuckets(s, missing.map((k) => ({ start: starts[k]!, version: versions[k]!, row: fresh.get(starts[k]!)![p] })), keepFrom));
        keys.forEach((key, p) => this.cache.set(key, segments[p]!));
        where = segments.map((s) => locate(s, starts, versions));
      }
    }
    return Readable.from(this.assemble(q, buckets, kept, segments as Segment[], where, other), { objectMode: false });
  }

  /** The given buckets' rows for every pair, from one query. */
  private async compute(q: UptimeQuery, buckets: WindowBucket[]): Promise<Computed> {
    const out: Computed = new Map(buckets.map((b) => [b.start, new Array<Buffer | undefined>(q.pairs.length)]));
    if (buckets.length === 0) return out;
    const ranges = mergeRanges(buckets.flatMap((b) => b.ranges));
    const sub = { ...q, window: { ...q.window, ranges, plan: planBuckets(q.window.interval, ranges, q.window.zone, q.window.rolledUpTo) } };
    const { text, lines } = await this.uptime.lines(sub);
    for (const line of lines) {
      const rows = out.get(line.bucket * 1000);
      // The SQL's buckets and bucketsOf's must agree: a row elsewhere would be lost silently.
      if (!rows || line.pair >= rows.length) throw new Error(`uptime row outside the planned buckets: pair ${line.pair}, bucket ${line.bucket}`);
      rows[line.pair] = text.subarray(line.start, line.end);
    }
    return out;
  }

  /** The answer's bytes, in pieces: each pair's runs of kept buckets as one slice of its segment. */
  private *assemble(q: UptimeQuery, buckets: WindowBucket[], kept: boolean[], segments: Segment[], where: number[][], other: Computed): Generator<Buffer> {
    const ranks = rowRanks(q.pairs);
    const order = q.pairs.map((_, i) => i).sort((a, b) => ranks[a]! - ranks[b]!);
    let first = true;
    // Every row carries `,\n` before it; the first one's is left out.
    const piece = (b: Buffer): Buffer => {
      if (!first) return b;
      first = false;
      return b.subarray(SEP.length);
    };
    yield Buffer.from('[\n');
    for (const p of order) {
      const s = segments[p]!;
      const w = where[p]!;
      let from = -1;
      let to = -1;
      let k = 0;
      for (let i = 0; i < buckets.length; i++) {
        if (kept[i]) {
          const j = w[k++]!;
          if (from >= 0 && to === s.offsets[j]) to = s.offsets[j + 1]!;
          else {
            if (to > from) yield piece(s.data.subarray(from, to));
            from = s.offsets[j]!;
            to = s.offsets[j + 1]!;
          }
          continue;
        }
        const row = other.get(buckets[i]!.start)![p];
        if (!row) continue;
        if (to > from) yield piece(s.data.subarray(from, to));
        from = to = -1;
        if (!first) yield SEP;
        first = false;
        yield row;
      }
      if (to > from) yield piece(s.data.subarray(from, to));
    }
    yield Buffer.from('\n]\n');
  }
}

/** What a row's bytes depend on besides its pair and bucket: kind, interval, zone, columns. */
function shapeOf(q: UptimeQuery): string {
  const levels = q.levels.map(levelName).join(',');
  const amounts = q.kind === 'depth' ? (q.amounts ?? []).map(levelName).join(',') : '';
  return [q.kind, q.window.interval, q.window.zone, q.window.zoned ? 'zoned' : 'utc-times', levels, amounts].join('|');
}
