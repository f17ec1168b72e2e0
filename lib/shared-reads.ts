// Reads that every request makes and that change rarely — the caller's user row, the
// reference lists — shared by the requests of one process. Each cost a ClickHouse
// read on every request (docs/benchmarks.md, "Measurements behind the code").

export interface SharedReadsOptions {
  /** A value this old is still served, and the next request starts a new read in the background. */
  refreshAfterMs: number;
  /** A value this old is not served: the request waits for a new read. */
  maxAgeMs: number;
  /** Keys kept at most; the least recently read goes first. */
  maxEntries?: number;
  now?: () => number;
}

/** What the service uses: fresh enough for reference data and account changes, see docs/architecture.md. */
export const SHARED_READS = { refreshAfterMs: 2_000, maxAgeMs: 10_000 } as const;

interface Entry<V> {
  at: number;
  value: Promise<V>;
  refreshing: boolean;
}

/**
 * A value younger than `refreshAfterMs` is served as read. An older one is still served
 * while a new read runs in the background, so a steady stream of requests never waits for
 * a refresh; past `maxAgeMs` the request waits. A read that fails is not kept (a failed
 * refresh leaves the old value until `maxAgeMs`). `invalidate` drops values at once, and
 * reads begun before it are not kept: a write made through this process is seen by its
 * next request; other processes see it within `maxAgeMs`.
 */
export class SharedReads<K, V> {
  private readonly entries = new Map<K, Entry<V>>();
  private generation = 0;
  private readonly now: () => number;

  constructor(
    private readonly read: (key: K) => Promise<V>,
    private readonly opts: SharedReadsOptions,
  ) {
    if (opts.refreshAfterMs > opts.maxAgeMs) throw new Error('refreshAfterMs must not exceed maxAgeMs');
    this.now = opts.now ?? Date.now;
  }

  get(key: K): Promise<V> {
    const now = this.now();
    const entry = this.entries.get(key);
    if (entry && now - entry.at < this.opts.maxAgeMs) {
      // Most recently read last, so eviction takes the front.
      this.entries.delete(key);
      this.entries.set(key, entry);
      if (now - entry.at >= this.opts.refreshAfterMs && !entry.refreshing) this.refresh(key, entry, now);
      return entry.value;
    }
    const fresh: Entry<V> = { at: now, value: this.read(key), refreshing: false };
    this.store(key, fresh);
    fresh.value.catch(() => {
      if (this.entries.get(key) === fresh) this.entries.delete(key);
    });
    return fresh.value;
  }

  /** Drops one key's value, or every value; a read in flight still answers its callers. */
  invalidate(key?: K): void {
    this.generation++;
    if (key === undefined) this.entries.clear();
    else this.entries.delete(key);
  }

  private refresh(key: K, entry: Entry<V>, now: number): void {
    entry.refreshing = true;
    const generation = this.generation;
    this.read(key).then(
      (value) => {
        if (generation === this.generation && this.entries.get(key) === entry) this.store(key, { at: now, value: Promise.resolve(value), refreshing: false });
      },
      () => {
        entry.refreshing = false;
      },
    );
  }

  private store(key: K, entry: Entry<V>): void {
    this.entries.delete(key);
    this.entries.set(key, entry);
    const max = this.opts.maxEntries ?? Infinity;
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= max) break;
      this.entries.delete(oldest);
    }
  }
}
