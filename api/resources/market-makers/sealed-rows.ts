// What the summary and the reconciliation keep between requests (sealed-answer.ts): the
// JSON text of their rows of a sealed block of buckets (a day's, or its sealed part), or of
// the open block as read to an end within a minute, per market maker and pair, as bytes as
// sent. Reading, merging and writing thousands of rows of over a hundred columns costs far
// more than copying their text. A block's text is kept with the write count of its hours
// (market_writes, all the sources together: trusted, reported, book, trade) and used while
// that count stands, as the market caches keep theirs (api/market-caches/sealing.ts); the
// text of a market maker and pair is the same for every caller who sees it, so callers
// share it. A piece is compressed once per encoding (zstd, gzip), after a client that takes it first gets it
// (api/http/compressed-pieces.ts), and kept so. One MarketMakerCaches per API's
// dependencies (ApiDeps.marketMakerCaches).
import { ByteLru } from '../../market-caches/sealing.ts';
import type { Piece } from '../../http/compressed-pieces.ts';

interface Entry {
  version: number;
  /** By market maker and pair: its rows in the bucket, JSON objects joined by commas (empty for none), as sent. */
  cells: Map<string, Piece>;
}

function bytesOf(e: Entry): number {
  let n = 0;
  for (const [cell, piece] of e.cells) n += cell.length + piece.bytes;
  return n;
}

/** Bytes kept by default, per endpoint: the rows of a few month-long summaries of the benchmark's size. */
export const SEALED_ROWS_BYTES = 256 * 2 ** 20;

export class SealedRowsCache extends ByteLru<Entry> {
  constructor(maxBytes = SEALED_ROWS_BYTES) {
    super(maxBytes, bytesOf);
  }

  /** The bucket's texts if computed at this write count and holding every cell asked; a stale entry is dropped. */
  at(key: string, version: number, cells: readonly string[]): Map<string, Piece> | undefined {
    const e = this.get(key);
    if (e && e.version !== version) {
      this.delete(key);
      return undefined;
    }
    return e && cells.every((c) => e.cells.has(c)) ? e.cells : undefined;
  }

  /** Whether a bucket's entry holds every cell asked, at whatever count (a guess, checked against the count later). */
  holds(key: string, cells: readonly string[]): boolean {
    const e = this.get(key);
    return e !== undefined && cells.every((c) => e.cells.has(c));
  }

  /** Adds cells computed at `version` (to the entry of that version, or in place of another). */
  put(key: string, version: number, cells: Iterable<[string, Piece]>): void {
    if (!this.enabled) return;
    const old = this.get(key);
    const e: Entry = old && old.version === version ? old : { version, cells: new Map() };
    for (const [cell, piece] of cells) e.cells.set(cell, piece);
    this.set(key, e);
  }

  /** Counts an entry's bytes again (its pieces compressed since). */
  recount(key: string): void {
    const e = this.get(key);
    if (e) this.set(key, e);
  }
}

/** What the market-maker endpoints keep between requests: one per API's dependencies (ApiDeps), emptied together. */
export class MarketMakerCaches {
  /** The summary's JSON text of sealed blocks. */
  readonly summary: SealedRowsCache;
  /** The reconciliation's. */
  readonly reconciliation: SealedRowsCache;

  constructor(maxBytes = SEALED_ROWS_BYTES) {
    this.summary = new SealedRowsCache(maxBytes);
    this.reconciliation = new SealedRowsCache(maxBytes);
  }

  clear(): void {
    this.summary.clear();
    this.reconciliation.clear();
  }
}
