// A market-maker answer (summary, reconciliation) as JSON text put together from pieces:
// per market maker and pair (a cell, in the answer's order) and per block of buckets (the
// buckets of one day in the window's zone that are all sealed or all not), the text of its
// rows. The text of a sealed block, and of the open one for its end's minute, is kept
// between requests (sealed-rows.ts) with the write count of its hours and used while that
// count stands; the other blocks are read and written anew, all in one read. The pieces
// are sent as they are, or compressed piece by piece (zstd or gzip:
// api/http/compressed-pieces.ts), kept pieces compressed once; in zstd, a cell's pieces of
// whole sealed days one after the other are compressed as one run, which answers of the same
// days send as one frame.
import { DateTime } from 'luxon';
import { COMMA, CLOSE, OPEN, Piece, compressInBackground, compressRunsInBackground, type Encoding } from '../../http/compressed-pieces.ts';
import { bucketsOf, mergeRanges, planBuckets, sealedBefore, type Range } from '../../../domain/market/window.ts';
import type { Pair } from '../../../domain/reference/repository.ts';
import { writesIn } from '../../market-caches/sealing.ts';
import { MINUTE_MS } from '../../../lib/time.ts';
import { TwoKeyMap } from '../../../lib/map-key.ts';
import { makerPairColumns, type MmRequest } from './request.ts';
import type { MmServices } from './services.ts';
import type { SealedRowsCache } from './sealed-rows.ts';

export interface AnswerCell {
  maker: string;
  pair: Pair;
  /** The cell's key in the cache: everything its text is made of besides the buckets' values. */
  key: string;
  /** `{"organization":...,"asset":...,"exchange":...,"pair":...`, the start of each row's text. */
  head: string;
}

/**
 * Rows' text by cell key and bucket start (epoch s); a cell's rows of a bucket joined by
 * commas. Bytes, not strings: a month of rows held as strings until sent made the
 * collector's work grow with them.
 */
export type Texts = Map<string, Map<number, Buffer>>;

/** Sets `texts[cell][b]` to the rows' text, after what is there. */
export function addText(texts: Texts, cell: string, b: number, text: Uint8Array): void {
  let m = texts.get(cell);
  if (!m) texts.set(cell, (m = new Map()));
  const before = m.get(b);
  const bytes = Buffer.from(text.buffer, text.byteOffset, text.byteLength);
  m.set(b, before === undefined ? bytes : Buffer.concat([before, COMMA_BYTES, bytes]));
}

interface Block {
  /** Its first bucket's start (epoch s). */
  b: number;
  from: number;
  to: number;
  /** The window's parts in it. */
  ranges: Range[];
  /** Whether it holds whole buckets only, from the start of its day. */
  whole: boolean;
  /** Whether it holds its whole day: whole and to the day's end. */
  day: boolean;
  sealed: boolean;
}

const COMMA_BYTES = Buffer.from(',');

/** Blocks computed in two halves only from twice this many: each half is a read of its own. */
const HALF_MIN_BLOCKS = 5;

/** The window's buckets in blocks: a day's buckets (in the window's zone) that are all sealed, or all not. */
function blocksOf(w: MmRequest['window'], sealed: number): Block[] {
  const out: Block[] = [];
  let dayEnd = -Infinity;
  let dayStart = 0;
  for (const bk of bucketsOf(w.interval as '5m' | '1h' | '1d', w.ranges, w.zone)) {
    if (bk.start >= dayEnd) {
      const local = DateTime.fromMillis(bk.start, { zone: w.zone }).startOf('day');
      dayStart = local.toMillis();
      dayEnd = local.plus({ days: 1 }).toMillis();
    }
    const isSealed = bk.end <= sealed;
    const whole = bk.ranges.reduce((n, [a, z]) => n + z - a, 0) === bk.end - bk.start;
    const last = out[out.length - 1];
    if (last && last.to === bk.start && bk.start !== dayStart && last.sealed === isSealed) {
      last.to = bk.end;
      last.ranges.push(...bk.ranges);
      last.whole &&= whole;
      last.day = last.whole && bk.end === dayEnd;
    } else {
      const first = whole && bk.start === dayStart;
      out.push({ b: Math.floor(bk.start / 1000), from: bk.start, to: bk.end, ranges: [...bk.ranges], whole: first, day: first && bk.end === dayEnd, sealed: isSealed });
    }
  }
  return out;
}

/**
 * The answer's JSON array as pieces to send: kept blocks' text from `cache` while their
 * write counts stand, the rest from `compute` (given a request narrowed to those blocks'
 * ranges), which writes each cell's rows of each bucket. `variant` names what else the text
 * depends on (endpoint, levels, parameters). `a` (one bucket over the window) is computed
 * whole. With an `encoding`, kept pieces not compressed into it yet are, after the answer.
 */
export async function sealedAnswer(
  s: MmServices,
  req: MmRequest,
  opts: { cache: SealedRowsCache; variant: string; cells: AnswerCell[]; compute: (part: MmRequest) => Promise<Texts>; encoding: Encoding | undefined },
): Promise<Piece[]> {
  const w = req.window;
  const { cache, cells } = opts;
  const cellKeys = cells.map((c) => c.key);
  const narrowed = (blocks: Block[]): MmRequest => {
    const ranges = mergeRanges(blocks.flatMap((bk) => bk.ranges));
    return { ...req, window: { ...w, ranges, plan: planBuckets(w.interval, ranges, w.zone, w.rolledUpTo) } };
  };
  // Many blocks are computed in two halves at once: the engine reads one half's values while
  // this thread makes the other half's rows. A half keeps only the rows of its own buckets
  // (a report reaching into the second half from the first is the first's); the first also
  // those before it (blockText).
  const computeBlocks = async (bks: Block[]): Promise<Texts> => {
    if (bks.length === 0) return new Map();
    if (bks.length < 2 * HALF_MIN_BLOCKS) return opts.compute(narrowed(bks));
    const sorted = [...bks].sort((a, b) => a.from - b.from);
    const halves = [sorted.slice(0, sorted.length >> 1), sorted.slice(sorted.length >> 1)];
    const [first, second] = (await Promise.all(halves.map((h) => opts.compute(narrowed(h))))) as [Texts, Texts];
    const from = halves[1]![0]!.from / 1000;
    for (const [cell, byB] of second) {
      let m = first.get(cell);
      if (!m) first.set(cell, (m = new Map()));
      for (const [b, text] of byB) if (b >= from) m.set(b, text);
    }
    return first;
  };

  if (w.interval === 'a') return assemble(cells, [], [await opts.compute(req)]).pieces;
  const blocks = blocksOf(w, sealedBefore({ latenessMs: s.deps.config.latenessMs, now: s.deps.now }));
  // An open block whose part in the window is one range from its first bucket's start
  // (today's, at `1d`) is kept too, under its end: an end on a minute's start alone, any end
  // strictly inside a minute for that minute. Every row read is a whole minute's or an
  // aligned bucket's, so such ends read the same rows, whether a read takes the rows that
  // start before the end or those that end by it; a write into the block since shows as a
  // new count.
  const openEnd = (bk: Block): string | undefined => {
    const end = bk.ranges[0]?.[1];
    if (bk.sealed || bk.ranges.length !== 1 || bk.ranges[0]![0] !== bk.from || end === undefined) return undefined;
    return end % MINUTE_MS === 0 ? `at ${end}` : `within ${Math.floor(end / MINUTE_MS)}`;
  };
  // A sealed block cut by the window (its first day, from a lookback's start) is kept by its
  // part in the window: that part moves with the window, so such an entry serves a few requests.
  const keyOf = (bk: Block) =>
    `${opts.variant}|${w.interval}|${w.zone}|${w.zoned}|${bk.b}|${bk.to}|${!bk.sealed ? `open ${openEnd(bk)}` : bk.whole ? '' : bk.ranges.map((r) => r.join('-')).join(',')}`;
  const keepable = cache.enabled ? blocks.filter((bk) => bk.sealed || openEnd(bk) !== undefined) : [];
  const open = blocks.filter((bk) => !keepable.includes(bk));
  const versionsOf = async (bks: Block[]): Promise<Map<Block, number>> => {
    const writes = await s.readings.metrics.summaryWrites(Math.min(...bks.map((bk) => bk.from)), Math.max(...bks.map((bk) => bk.to)));
    return new Map(bks.map((bk) => [bk, writesIn(writes, bk.from, bk.to)]));
  };
  // Blocks computed now are kept, and sent from what was kept (their text encoded once).
  const keep = (bks: Block[], versions: Map<Block, number>, texts: Texts) => {
    const byCell = cellKeys.map((k) => blockTexts(texts.get(k), bks, blocks[0]!));
    bks.forEach((bk, i) => {
      const cellTexts = new Map(cellKeys.map((k, c) => [k, new Piece(byCell[c]![i]!)]));
      cache.put(keyOf(bk), versions.get(bk)!, cellTexts);
      kept.push([bk, cellTexts]);
    });
  };

  const kept: [Block, Map<string, Piece>][] = [];
  const fresh: Texts[] = [];
  let found = 0;
  if (keepable.length === 0) {
    fresh.push(await computeBlocks(open));
  } else {
    // When every block that can be kept was kept before, the others are computed while the
    // counts are read. A block computed after its count was read is kept with that count, so
    // a write after the read shows as a new count next time.
    const likely = keepable.every((bk) => cache.holds(keyOf(bk), cellKeys));
    const [versions, opened] = await Promise.all([versionsOf(keepable), likely ? computeBlocks(open) : undefined]);
    const missing: Block[] = [];
    for (const bk of keepable) {
      const texts = cache.at(keyOf(bk), versions.get(bk)!, cellKeys);
      if (texts) kept.push([bk, texts]);
      else missing.push(bk);
    }
    found = kept.length;
    const computed = await computeBlocks(opened ? missing : [...open, ...missing]);
    keep(missing, versions, computed);
    if (opened) fresh.push(opened);
    fresh.push(computed);
  }
  cache.hits += found;
  cache.misses += keepable.length - found;
  const { pieces, runs } = assemble(cells, kept, fresh, blocks[0]);
  // Kept pieces sent uncompressed this time are compressed for the next requests: in zstd,
  // those of runs as runs only (kept with the run's first block), the others one by one.
  const encoding = opts.encoding;
  if (encoding) {
    const inRuns = new Set<Piece>();
    if (encoding === 'zstd') {
      for (const [bk, rs] of runs) {
        compressRunsInBackground(rs, () => cache.has(keyOf(bk)), () => cache.recount(keyOf(bk)));
        for (const r of rs) for (const p of r) inRuns.add(p);
      }
    }
    for (const [bk, texts] of kept) {
      const alone = [...texts.values()].filter((p) => !inRuns.has(p));
      compressInBackground(alone, encoding, () => cache.has(keyOf(bk)), () => cache.recount(keyOf(bk)));
    }
  }
  return pieces;
}

/**
 * A cell's text of each block's buckets, in order (empty for none), for blocks `bks`. The
 * window's first block (`first`) also holds rows of buckets before it: a reconciliation row
 * of a report that began before the window (and reaches into it) has its bucket there. The
 * cell's buckets are sorted once and each block's found by bisection: a month is 30 blocks
 * of 30 buckets for each of a thousand cells.
 */
function blockTexts(texts: Map<number, Buffer> | undefined, bks: readonly Block[], first: Block): Buffer[] {
  if (!texts || texts.size === 0) return bks.map(() => EMPTY);
  const starts = Float64Array.from(texts.keys()).sort();
  return bks.map((bk) => {
    const lo = bk === first ? -Infinity : bk.from / 1000;
    const hi = bk.to / 1000;
    // The first bucket at or after lo.
    let i = 0;
    for (let j = starts.length; i < j; ) {
      const mid = (i + j) >> 1;
      if (starts[mid]! < lo) i = mid + 1;
      else j = mid;
    }
    // Buckets whose texts lie one after the other, a comma between (as written: row-text.ts),
    // are one view of those bytes; only the rest is copied. The byte between is checked:
    // two small buffers addText joined may lie so in Node's shared pool, padding between.
    const parts: Buffer[] = [];
    let run: Buffer | undefined;
    let runBytes: Uint8Array | undefined;
    for (; i < starts.length && starts[i]! < hi; i++) {
      const text = texts.get(starts[i]!)!;
      if (run && text.buffer === run.buffer && text.byteOffset === run.byteOffset + run.length + 1 && (runBytes ??= new Uint8Array(run.buffer))[text.byteOffset - 1] === COMMA_BYTES[0]) {
        run = Buffer.from(run.buffer, run.byteOffset, run.length + 1 + text.length);
        continue;
      }
      if (run) parts.push(run, COMMA_BYTES);
      run = text;
      runBytes = undefined;
    }
    if (run) parts.push(run);
    return parts.length === 0 ? EMPTY : parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  });
}

const EMPTY = Buffer.alloc(0);

/**
 * Per cell, kept blocks and fresh buckets in order of their start, between brackets and
 * commas. And the runs: a cell's pieces (not empty) of kept sealed whole days, one after
 * the other in the answer, two or more, by their first block; answers of the same days hold
 * the same runs, where the first day of a moving window, and today's sealed part, change
 * with the minute.
 */
function assemble(cells: AnswerCell[], kept: [Block, Map<string, Piece>][], fresh: Texts[], firstBlock?: Block): { pieces: Piece[]; runs: Map<Block, Piece[][]> } {
  const out: Piece[] = [OPEN];
  const runs = new Map<Block, Piece[][]>();
  const push = (p: Piece) => {
    if (p.raw.length === 0) return;
    if (out.length > 1) out.push(COMMA);
    out.push(p);
  };
  // A computed bucket in a kept block is sent from the block.
  const inKept = new Map<number, boolean>();
  const isKept = (b: number) => {
    let k = inKept.get(b);
    if (k === undefined) inKept.set(b, (k = kept.some(([bk]) => (bk === firstBlock || b * 1000 >= bk.from) && b * 1000 < bk.to)));
    return k;
  };
  let run: Piece[] = [];
  let runStart: Block | undefined;
  const endRun = () => {
    if (run.length > 1) {
      const list = runs.get(runStart!) ?? [];
      list.push(run);
      runs.set(runStart!, list);
    }
    run = [];
  };
  for (const cell of cells) {
    const parts: [number, Piece, Block | undefined][] = [];
    for (const [bk, texts] of kept) parts.push([bk.b, texts.get(cell.key)!, bk]);
    for (const f of fresh) for (const [b, text] of f.get(cell.key) ?? []) if (!isKept(b)) parts.push([b, new Piece(text), undefined]);
    parts.sort((x, y) => x[0] - y[0]);
    for (const [, piece, bk] of parts) {
      push(piece);
      if (piece.raw.length === 0) continue;
      if (bk?.sealed && bk.day) {
        if (run.length === 0) runStart = bk;
        run.push(piece);
      } else endRun();
    }
    endRun();
  }
  out.push(CLOSE);
  return { pieces: out, runs };
}

/**
 * The answer's cell of a market maker and a pair (the pair read: the same objects as the
 * request's), undefined for one not shown. Rows come in the answer's order, so the last
 * cell found is asked first: a month is tens of thousands of rows for a thousand cells.
 */
export function cellFinder(cells: readonly AnswerCell[]): (maker: string, pair: Pair) => AnswerCell | undefined {
  const byPair = new TwoKeyMap<string, Pair, AnswerCell>(cells.map((c) => [c.maker, c.pair, c]));
  let last: AnswerCell | undefined;
  return (maker, pair) => {
    if (last !== undefined && last.pair === pair && last.maker === maker) return last;
    const found = byPair.get(maker, pair);
    if (found) last = found;
    return found;
  };
}

/** The market makers and pairs the caller sees, in the answer's order (market maker, asset, exchange, pair). */
export function answerCells(req: MmRequest): AnswerCell[] {
  const wallets = new Map<string, [number, number][]>();
  for (const wallet of req.wallets.values()) {
    const list = wallets.get(wallet.organization) ?? [];
    list.push([wallet.id, wallet.number]);
    wallets.set(wallet.organization, list);
  }
  const out: AnswerCell[] = [];
  for (const [maker, { pairs }] of req.makers) {
    // A wallet's id and number are written in its rows: a change of them is another text.
    const signature = JSON.stringify((wallets.get(maker) ?? []).sort((a, b) => a[0] - b[0]));
    for (const pair of pairs) {
      // The row's first columns as JSON.stringify writes them, the object left open.
      const head = JSON.stringify(makerPairColumns(req, maker, pair)).slice(0, -1);
      out.push({ maker, pair, key: [signature, head].join('\u0000'), head });
    }
  }
  return out.sort(
    (a, b) => a.maker.localeCompare(b.maker) || a.pair.asset.localeCompare(b.pair.asset) || a.pair.exchange.localeCompare(b.pair.exchange) || a.pair.pair.localeCompare(b.pair.pair),
  );
}
