// The partial aggregates of every metric family over a whole window (interval `a`: summary
// and leaderboard), with the sealed pieces of the window kept between requests. A window
// is tiled by pieces of minute, open-hour, hour and day rows (window.ts); all but the last
// (the minutes after the mark, and the hour rows of the current day during the lateness
// after an hour closes) are sealed; the open hour's rows of a mark are kept while the
// hour's write count stands, which its every minute moves. A piece's partials per pair are
// kept with the write count of its hours (market_writes) and used while that count stands,
// as the uptime rows are (docs/architecture.md). Per request the open pieces are computed
// anew; so is, each minute, the first piece, whose minutes the window's start cuts.
// Partials are merged in Node as each family declares (domain/market/families/family.ts:
// mergePartials).
import { mergePartials, partialBytes } from '../../domain/market/families/family.ts';
import { FAMILIES, type FamilyName, type PartialKey, type Partials } from '../../domain/market/families/index.ts';
import type { PartialsRepository } from '../../domain/market/repositories/partials.ts';
import type { MarketQuery } from '../../domain/market/repositories/stored-rows.ts';
import type { WriteCounts } from '../../domain/market/repositories/write-counts.ts';
import { blockOf, minuteIndex, segmentsOf, type Block } from './minute-blocks.ts';
import { ByteLru, SharedWriteCounts, pairKey, writesIn } from './sealing.ts';
import { sealedBefore, type Piece, type SealingOptions } from '../../domain/market/window.ts';
import { HOUR_MS } from '../../lib/time.ts';

const blockKey = (family: FamilyName, hour: number) => `${family}|block|${hour}`;

/** Each family's partials over the window, one per pair with data. */
export type WindowPartialsResult = { [F in FamilyName]: Partials[F][] };

interface PieceEntry {
  kind: 'piece';
  version: number;
  /** By pair key; null: the pair was computed and has no rows in the piece. */
  rows: Map<string, PartialKey | null>;
  bytes: number;
}

type Entry = PieceEntry | { kind: 'block'; version: number; block: Block; bytes: number };

/** Pieces' partials per pair, by family and piece, and hours' minute partials (minute-blocks.ts). */
export class PartialsCache extends ByteLru<Entry> {
  constructor(maxBytes: number) {
    super(maxBytes, (e) => e.bytes);
  }

  /** The piece's partials if computed at this write count; a stale entry is dropped. */
  at(key: string, version: number): PieceEntry | undefined {
    const e = this.get(key);
    if (e && (e.version !== version || e.kind !== 'piece')) {
      this.delete(key);
      return undefined;
    }
    return e;
  }

  /** The piece's partials at whichever count they were computed (to guess whether it is kept). */
  any(key: string): PieceEntry | undefined {
    const e = this.get(key);
    return e?.kind === 'piece' ? e : undefined;
  }

  /** Adds the partials of pairs computed at `version` (to the entry of that version, or in place of another). */
  put(family: FamilyName, key: string, version: number, rows: [string, PartialKey | null][]): void {
    if (!this.enabled) return;
    const old = this.any(key);
    const e: PieceEntry = old && old.version === version ? old : { kind: 'piece', version, rows: new Map(), bytes: 0 };
    for (const [pair, p] of rows) {
      const before = e.rows.get(pair);
      if (before !== undefined) e.bytes -= partialBytes(FAMILIES[family], before);
      e.rows.set(pair, p);
      e.bytes += partialBytes(FAMILIES[family], p);
    }
    this.set(key, e);
  }

  /** An hour's minute partials if computed at this write count (at any, without one); a stale block is dropped. */
  block(key: string, version?: number): Block | undefined {
    const e = this.get(key);
    if (!e || e.kind !== 'block') return undefined;
    if (version !== undefined && e.version !== version) {
      this.delete(key);
      return undefined;
    }
    return e.block;
  }

  /** Keeps a block (again, after pairs were added to it: its bytes are counted anew). */
  putBlock(key: string, block: Block): void {
    this.set(key, { kind: 'block', version: block.version, block, bytes: block.bytes });
  }
}

const NAMES = Object.keys(FAMILIES) as FamilyName[];

/**
 * Callers of at most this many pairs have their windows' minutes answered from hour blocks
 * (minute-blocks.ts), by default. A block is computed again after every write into its
 * hour, and the open hour is written every minute; and it holds 60 partials a pair (a book
 * minute's about 1.3 KB, with its running merges up to three times that): a window's two
 * hours of 50 pairs' books take about 23 MB of the 64 MB cache. For more pairs, computing
 * each request's open minutes in one aggregate costs less, as larger callers (staff over
 * every pair) do.
 */
export const BLOCK_MAX_PAIRS = 50;

export class WindowPartials {
  /** Write counts, read once for the requests that ask at the same time. */
  readonly counts: SharedWriteCounts;
  /** Blocks being computed, by cache key: requests asking for one meanwhile wait for it. */
  private readonly computing = new Map<string, Promise<Block>>();

  constructor(
    private readonly partials: PartialsRepository,
    writeCounts: WriteCounts,
    private readonly cache: PartialsCache,
    private readonly opts: SealingOptions,
    private readonly blockMaxPairs = BLOCK_MAX_PAIRS,
  ) {
    this.counts = new SharedWriteCounts(writeCounts);
  }

  /** Every family's partials over the whole window of `q` (interval `a`), a partial per pair with data. */
  async window(q: MarketQuery): Promise<WindowPartialsResult> {
    if (q.interval !== 'a') throw new Error('WindowPartials answers interval a only');
    if (!this.cache.enabled || q.pairs.length === 0 || q.pieces.length === 0) return this.uncached(q);
    const sealed = sealedBefore(this.opts);
    // With blocks, a window's minutes are runs of hours' minutes; its hour and day pieces
    // are kept as before.
    const segments = q.pairs.length <= this.blockMaxPairs ? segmentsOf(q.pieces) : [];
    const pieces = segments.length > 0 ? q.pieces.filter((p) => p.table !== 'minutes') : q.pieces;
    const hours = [...new Set(segments.map((x) => x.hour))];
    const kept = pieces.filter((p) => p.to <= sealed);
    const open = pieces.filter((p) => p.to > sealed);
    const keys = q.pairs.map(pairKey);
    const pieceKey = (family: FamilyName, p: Piece) => `${family}|${p.table}|${p.from}|${p.to}`;
    const covers = (rows: Map<string, unknown>) => keys.every((k) => rows.has(k));
    /** A kept piece's partials for every pair asked, at `version` (or at any, to guess). */
    const lookup = (family: FamilyName, p: Piece, version?: number) => {
      const e = version === undefined ? this.cache.any(pieceKey(family, p)) : this.cache.at(pieceKey(family, p), version);
      return e && covers(e.rows) ? e.rows : undefined;
    };
    const blockAt = (family: FamilyName, hour: number, version?: number) => {
      const b = this.cache.block(blockKey(family, hour), version);
      return b && covers(b.pairs) ? b : undefined;
    };
    // A piece must be computed after the counts are read (its version is the count it was
    // computed at, so a write after the read must show in a later count). When every kept
    // piece was computed before, the open pieces are computed while the counts are read;
    // when some never were, after them, in one statement with those (a round less).
    const known = NAMES.map((f) => kept.map((p) => lookup(f, p) !== undefined));
    const early = known.every((k) => k.every(Boolean));
    // A sealed piece or an hour's block is kept only once asked for a second time:
    // computing them apart costs more than the window's one statement, which a one-off
    // window should not pay. A window none of whose pieces or hours is kept or was asked
    // for before is that statement, without reading the counts.
    const admit = NAMES.map((f, fi) => kept.map((p, i) => known[fi]![i]! || this.cache.seen.check(pieceKey(f, p))));
    const admitHour = NAMES.map((f) => hours.map((h) => blockAt(f, h) !== undefined || this.cache.seen.check(blockKey(f, h))));
    if (admit.every((a) => !a.includes(true)) && admitHour.every((a) => !a.includes(true))) {
      this.cache.misses += NAMES.length * (kept.length + hours.length);
      return this.uncached(q);
    }
    const spans = [...kept, ...hours.map((h) => ({ from: h, to: h + HOUR_MS }))];
    const [writes, opened] = await Promise.all([
      spans.length > 0 ? this.counts.read(NAMES, Math.min(...spans.map((p) => p.from)), Math.max(...spans.map((p) => p.to))) : undefined,
      early ? Promise.all(NAMES.map((f) => this.compute(f, q, [open]))) : undefined,
    ]);
    const merged = await Promise.all(
      NAMES.map(async (family, fi) => {
        const versions = kept.map((p) => writesIn(writes![family], p.from, p.to));
        const found = kept.map((p, i) => lookup(family, p, versions[i]!));
        const missing = kept.map((_, i) => i).filter((i) => !found[i]);
        const blocks = await Promise.all(hours.map((h, i) => (admitHour[fi]![i] ? this.block(family, q, h, writes![family].get(h) ?? 0) : undefined)));
        this.cache.hits += kept.length - missing.length;
        const blockOfSegment = segments.map((x) => blocks[hours.indexOf(x.hour)]);
        // Blocks count their own hits and misses; an hour not admitted is a miss.
        this.cache.misses += missing.length + blocks.filter((b) => !b).length;
        // A missing piece asked for before is computed on its own and kept; one asked for
        // the first time is summed with the open pieces into one partial, and so are the
        // minutes of an hour asked for the first time.
        const admitted = missing.filter((i) => admit[fi]![i]);
        const rest = [
          ...(opened ? [] : open),
          ...missing.filter((i) => !admitted.includes(i)).map((i) => kept[i]!),
          ...segments.filter((_, i) => !blockOfSegment[i]).map((x): Piece => ({ table: 'minutes', from: x.from, to: x.to })),
        ];
        const computed = await this.compute(family, q, [rest, ...admitted.map((i) => [kept[i]!])]);
        admitted.forEach((i, m) => {
          found[i] = new Map(keys.map((k, p) => [k, computed[m + 1]![p] ?? null]));
          this.cache.put(family, pieceKey(family, kept[i]!), versions[i]!, [...found[i]!]);
        });
        const out: PartialKey[] = [];
        q.pairs.forEach((pair, p) => {
          let acc = mergePartials(FAMILIES[family], opened?.[fi]![0]![p], computed[0]![p]);
          for (const rows of found) if (rows) acc = mergePartials(FAMILIES[family], acc, rows.get(keys[p]!) ?? undefined);
          segments.forEach((x, i) => {
            const minutes = blockOfSegment[i]?.pairs.get(keys[p]!);
            if (minutes) acc = mergePartials(FAMILIES[family], acc, minutes.range(...minuteIndex(x)));
          });
          if (acc) out.push({ ...acc, exchange: pair.exchange, pair: pair.pair, b: 0 });
        });
        return out;
      }),
    );
    return Object.fromEntries(NAMES.map((f, i) => [f, merged[i]])) as WindowPartialsResult;
  }

  /**
   * The hour's block at `version` covering every pair of `q`, computed for the pairs it
   * lacks. One computation of a block at a time: a request asking meanwhile waits for it,
   * and finds its pairs there when it asked for the same ones.
   */
  private async block(family: FamilyName, q: MarketQuery, hour: number, version: number): Promise<Block> {
    const key = blockKey(family, hour);
    for (let running = this.computing.get(key); running; running = this.computing.get(key)) await running.catch(() => {});
    const kept = this.cache.block(key, version);
    const lacking = kept ? q.pairs.filter((p) => !kept.pairs.has(pairKey(p))) : q.pairs;
    if (kept && lacking.length === 0) {
      this.cache.hits++;
      return kept;
    }
    this.cache.misses++;
    const work = this.partials
      .read(family, { pairs: lacking, interval: '1m', zone: 'UTC', pieces: [{ table: 'minutes', from: hour, to: hour + HOUR_MS }] })
      .then((rows) => blockOf(family, hour, version, lacking.map(pairKey), rows, kept));
    this.computing.set(key, work);
    try {
      const block = await work;
      this.cache.putBlock(key, block);
      return block;
    } finally {
      this.computing.delete(key);
    }
  }

  private async uncached(q: MarketQuery): Promise<WindowPartialsResult> {
    const read = await Promise.all(NAMES.map((f) => this.partials.read(f, q)));
    return Object.fromEntries(NAMES.map((f, i) => [f, read[i]])) as WindowPartialsResult;
  }

  /** Each group of pieces' partials (a group's pieces summed), by group then pair index (undefined: no rows). */
  private async compute(family: FamilyName, q: MarketQuery, groups: Piece[][]): Promise<(PartialKey | undefined)[][]> {
    const out = groups.map(() => new Array<PartialKey | undefined>(q.pairs.length));
    const pieces = groups.flatMap((g, bucket) => g.map((p) => ({ ...p, bucket })));
    if (pieces.length === 0) return out;
    const index = new Map(q.pairs.map((p, i) => [pairKey(p), i]));
    // Interval `c` groups by the bucket index each piece carries: here, its group's; `a`,
    // when all are in the first group, spares the engine finding each row's bucket.
    const interval = pieces.every((p) => p.bucket === 0) ? 'a' : 'c';
    const rows: PartialKey[] = await this.partials.read(family, { pairs: q.pairs, interval, zone: q.zone, pieces });
    for (const r of rows) out[r.b]![index.get(pairKey(r))!] = r;
    return out;
  }
}
