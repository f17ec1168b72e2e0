// The partial aggregates of every metric family over a whole window (interval
// `a`: summary and leaderboard), with the sealed pieces of the window kept between
// requests. A window is tiled by pieces of minute, hour and day rows (window.ts); all but
// the last (the minutes of the open hour, and the hour rows of the current day during the
// lateness after an hour closes) are sealed. A piece's partials per pair are kept with the
// write count of its hours (market_writes) and used while that count stands, as the
// uptime rows are (docs/architecture.md). Per request the open pieces are computed anew;
// so is, each minute, the first piece, whose minutes the window's start cuts. Partials are
// merged in Node as each family declares (domain/market/families/family.ts: mergePartials).
import { mergePartials, partialBytes } from '../../domain/market/families/family.ts';
import { FAMILIES, type FamilyName, type PartialKey, type Partials } from '../../domain/market/families/index.ts';
import type { PartialsRepository } from '../../domain/market/repositories/partials.ts';
import type { MarketQuery } from '../../domain/market/repositories/stored-rows.ts';
import type { WriteCounts } from '../../domain/market/repositories/write-counts.ts';
import type { Piece } from '../../domain/market/window.ts';
import { ByteLru, sealedBefore, writesIn, type SealingOptions } from './sealing.ts';

/** Each family's partials over the window, one per pair with data. */
export type WindowPartialsResult = { [F in FamilyName]: Partials[F][] };

interface Entry {
  version: number;
  /** By pair key; null: the pair was computed and has no rows in the piece. */
  rows: Map<string, PartialKey | null>;
  bytes: number;
}

/** Pieces' partials per pair, by family and piece. */
export class PartialsCache extends ByteLru<Entry> {
  constructor(maxBytes: number) {
    super(maxBytes, (e) => e.bytes);
  }

  /** The piece's partials if computed at this write count; a stale entry is dropped. */
  at(key: string, version: number): Entry | undefined {
    const e = this.get(key);
    if (e && e.version !== version) {
      this.delete(key);
      return undefined;
    }
    return e;
  }

  /** Adds the partials of pairs computed at `version` (to the entry of that version, or in place of another). */
  put(family: FamilyName, key: string, version: number, rows: [string, PartialKey | null][]): void {
    if (!this.enabled) return;
    const old = this.get(key);
    const e: Entry = old && old.version === version ? old : { version, rows: new Map(), bytes: 0 };
    for (const [pair, p] of rows) {
      const before = e.rows.get(pair);
      if (before !== undefined) e.bytes -= partialBytes(FAMILIES[family], before);
      e.rows.set(pair, p);
      e.bytes += partialBytes(FAMILIES[family], p);
    }
    this.set(key, e);
  }
}

const NAMES = Object.keys(FAMILIES) as FamilyName[];

export class WindowPartials {
  constructor(
    private readonly partials: PartialsRepository,
    private readonly writeCounts: WriteCounts,
    private readonly cache: PartialsCache,
    private readonly opts: SealingOptions,
  ) {}

  /** Every family's partials over the whole window of `q` (interval `a`), a partial per pair with data. */
  async window(q: MarketQuery): Promise<WindowPartialsResult> {
    if (q.interval !== 'a') throw new Error('WindowPartials answers interval a only');
    if (!this.cache.enabled || q.pairs.length === 0 || q.pieces.length === 0) return this.uncached(q);
    const sealed = sealedBefore(this.opts);
    const kept = q.pieces.filter((p) => p.to <= sealed);
    const open = q.pieces.filter((p) => p.to > sealed);
    const keys = q.pairs.map((p) => `${p.exchange}\u0000${p.pair}`);
    const pieceKey = (family: FamilyName, p: Piece) => `${family}|${p.table}|${p.from}|${p.to}`;
    /** A kept piece's partials for every pair asked, at `version` (or at any, to guess). */
    const lookup = (family: FamilyName, p: Piece, version?: number) => {
      const e = version === undefined ? this.cache.get(pieceKey(family, p)) : this.cache.at(pieceKey(family, p), version);
      return e && keys.every((k) => e.rows.has(k)) ? e.rows : undefined;
    };
    // A piece must be computed after the counts are read (its version is the count it was
    // computed at, so a write after the read must show in a later count). When every kept
    // piece was computed before, the open pieces are computed while the counts are read;
    // when some never were, after them, in one statement with those (a round less).
    const known = NAMES.map((f) => kept.map((p) => lookup(f, p) !== undefined));
    const early = known.every((k) => k.every(Boolean));
    // A sealed piece is kept only once asked for a second time: computing the pieces'
    // partials apart costs more than the window's one statement, which a one-off window
    // should not pay. A window none of whose pieces is kept or was asked for before is
    // that statement, without reading the counts.
    const admit = NAMES.map((f, fi) => kept.map((p, i) => known[fi]![i]! || this.cache.seen.check(pieceKey(f, p))));
    if (admit.every((a) => !a.includes(true))) {
      this.cache.misses += NAMES.length * kept.length;
      return this.uncached(q);
    }
    const [writes, opened] = await Promise.all([
      kept.length > 0 ? this.writeCounts.read(NAMES, Math.min(...kept.map((p) => p.from)), Math.max(...kept.map((p) => p.to))) : undefined,
      early ? Promise.all(NAMES.map((f) => this.compute(f, q, [open]))) : undefined,
    ]);
    const merged = await Promise.all(
      NAMES.map(async (family, fi) => {
        const versions = kept.map((p) => writesIn(writes![family], p.from, p.to));
        const found = kept.map((p, i) => lookup(family, p, versions[i]!));
        const missing = kept.map((_, i) => i).filter((i) => !found[i]);
        this.cache.hits += kept.length - missing.length;
        this.cache.misses += missing.length;
        // A missing piece asked for before is computed on its own and kept; one asked for
        // the first time is summed with the open pieces into one partial.
        const admitted = missing.filter((i) => admit[fi]![i]);
        const rest = [...(opened ? [] : open), ...missing.filter((i) => !admitted.includes(i)).map((i) => kept[i]!)];
        const computed = await this.compute(family, q, [rest, ...admitted.map((i) => [kept[i]!])]);
        admitted.forEach((i, m) => {
          found[i] = new Map(keys.map((k, p) => [k, computed[m + 1]![p] ?? null]));
          this.cache.put(family, pieceKey(family, kept[i]!), versions[i]!, [...found[i]!]);
        });
        const out: PartialKey[] = [];
        q.pairs.forEach((pair, p) => {
          let acc = mergePartials(FAMILIES[family], opened?.[fi]![0]![p], computed[0]![p]);
          for (const rows of found) if (rows) acc = mergePartials(FAMILIES[family], acc, rows.get(keys[p]!) ?? undefined);
          if (acc) out.push({ ...acc, exchange: pair.exchange, pair: pair.pair, b: 0 });
        });
        return out;
      }),
    );
    return Object.fromEntries(NAMES.map((f, i) => [f, merged[i]])) as WindowPartialsResult;
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
    const index = new Map(q.pairs.map((p, i) => [`${p.exchange}\u0000${p.pair}`, i]));
    // Interval `c` groups by the bucket index each piece carries: here, its group's; `a`,
    // when all are in the first group, spares the engine finding each row's bucket.
    const interval = pieces.every((p) => p.bucket === 0) ? 'a' : 'c';
    const rows: PartialKey[] = await this.partials.read(family, { pairs: q.pairs, interval, zone: q.zone, pieces });
    for (const r of rows) out[r.b]![index.get(`${r.exchange}\u0000${r.pair}`)!] = r;
    return out;
  }
}
