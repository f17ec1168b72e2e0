// The summary's answer for sealed buckets, kept between requests as the JSON text of its
// rows (bytes, as sent: encoding a large text for the socket on every request cost more
// than copying kept bytes), per bucket and per market maker and pair. A summary of many
// market makers and pairs is thousands of rows of over a hundred columns: reading,
// merging, building and writing them all cost far more than the open buckets alone, and
// all its buckets but the first (cut by the window's start) and the last (open) are
// sealed (docs/benchmarks.md, "Measurements behind the code"). A bucket's text is kept with the write count of
// its hours (market_writes, all the summary's sources together: trusted, reported, book,
// trade) and used while that count stands, as the market caches keep theirs
// (api/market-caches/sealing.ts); the text of a market maker and pair is the same for
// every caller who sees it, so callers share it.
import { ByteLru } from '../../market-caches/sealing.ts';

interface Entry {
  version: number;
  /** By market maker and pair: its rows in the bucket, JSON objects joined by commas (empty for none), as sent. */
  cells: Map<string, Buffer>;
  bytes: number;
}

/** Bytes kept by default: the rows of about ten 7-day summaries of the benchmark's size. */
export const SEALED_ROWS_BYTES = 256 * 2 ** 20;

export class SealedRowsCache extends ByteLru<Entry> {
  constructor(maxBytes = SEALED_ROWS_BYTES) {
    super(maxBytes, (e) => e.bytes);
  }

  /** The bucket's texts if computed at this write count and holding every cell asked; a stale entry is dropped. */
  at(key: string, version: number, cells: readonly string[]): Map<string, Buffer> | undefined {
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
  put(key: string, version: number, cells: Iterable<[string, Buffer]>): void {
    if (!this.enabled) return;
    const old = this.get(key);
    const e: Entry = old && old.version === version ? old : { version, cells: new Map(), bytes: 0 };
    for (const [cell, text] of cells) {
      const before = e.cells.get(cell);
      if (before !== undefined) e.bytes -= before.length + cell.length;
      e.cells.set(cell, text);
      e.bytes += text.length + cell.length;
    }
    this.set(key, e);
  }
}

/** Caches by the API's dependencies: one per running API, reachable by the benchmark to empty it. */
const caches = new WeakMap<object, SealedRowsCache>();

export function sealedRowsOf(deps: object): SealedRowsCache {
  let c = caches.get(deps);
  if (!c) {
    c = new SealedRowsCache();
    caches.set(deps, c);
  }
  return c;
}
