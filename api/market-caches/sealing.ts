// What the caches of sealed market data (uptime.ts, window-partials.ts) share: how its
// hours' write counts are read and summed, and a map bounded by bytes (when data is
// sealed: sealedBefore in domain/market/window.ts).
import type { FamilyName } from '../../domain/market/families/index.ts';
import type { WriteCounts } from '../../domain/market/repositories/write-counts.ts';
import { DAY_MS, HOUR_MS } from '../../lib/time.ts';

/** How the caches key a pair's rows: exchange and pair, joined by a character neither holds. */
export const pairKey = (p: { exchange: string; pair: string }): string => `${p.exchange}\u0000${p.pair}`;

/**
 * The writes into the hours [from, to) touches (market_writes, per hour start): it grows
 * with every write into them and never repeats a value, so equal sums mean no write between.
 */
export function writesIn(writes: Map<number, number>, from: number, to: number): number {
  let n = 0;
  for (let h = Math.floor(from / HOUR_MS) * HOUR_MS; h < to; h += HOUR_MS) n += writes.get(h) ?? 0;
  return n;
}

/**
 * Keys asked for before, at most `max` of them (the oldest forgotten first). The caches
 * keep only what is asked for a second time: filling them costs more than answering
 * without them (per-piece partials, per-pair segments), which a one-off request should
 * not pay.
 */
export class SeenBefore {
  private readonly keys = new Set<string>();

  constructor(private readonly max = 100_000) {}

  /** Whether the key was asked for before; remembers it either way. */
  check(key: string): boolean {
    if (this.keys.has(key)) return true;
    this.keys.add(key);
    if (this.keys.size > this.max) this.keys.delete(this.keys.values().next().value!);
    return false;
  }

  get size(): number {
    return this.keys.size;
  }

  clear(): void {
    this.keys.clear();
  }
}

/** Values that cost bytes, at most maxBytes of them; the least recently used go first. */
export class ByteLru<V> {
  private readonly entries = new Map<string, { value: V; bytes: number }>();
  private total = 0;
  /** What was asked for before: what a cache over this one admits (SeenBefore). */
  readonly seen = new SeenBefore();
  /** What was answered from it and computed, for operators (admin status) and tests. */
  hits = 0;
  misses = 0;

  /** maxBytes 0 turns it off. */
  constructor(
    public maxBytes: number,
    private readonly sizeOf: (value: V) => number,
  ) {}

  get enabled(): boolean {
    return this.maxBytes > 0;
  }

  get bytes(): number {
    return this.total;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Whether it holds the key (not counted as a use). */
  has(key: string): boolean {
    return this.entries.has(key);
  }

  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    this.entries.delete(key);
    this.entries.set(key, e); // now the most recently used
    return e.value;
  }

  set(key: string, value: V): void {
    this.delete(key);
    if (!this.enabled) return;
    const bytes = this.sizeOf(value);
    this.entries.set(key, { value, bytes });
    this.total += bytes;
    // Map iteration is insertion order: the first keys are the least recently used.
    for (const [k, e] of this.entries) {
      if (this.total <= this.maxBytes) break;
      this.entries.delete(k);
      this.total -= e.bytes;
    }
  }

  delete(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.total -= e.bytes;
  }

  /** Empties it, and forgets what was asked for (as a restart would), unless keepSeen. */
  clear(opts: { keepSeen?: boolean } = {}): void {
    this.entries.clear();
    this.total = 0;
    if (!opts.keepSeen) this.seen.clear();
  }
}

type Counts = Record<FamilyName, Map<number, number>>;

/**
 * Write-count reads shared by the requests that ask while one is in flight. Every request
 * that keeps sealed data reads the counts first, and on this engine, which runs statements
 * one at a time, that read was most of what a request with everything kept cost. A request
 * joining a read begun before it came sees the writes up to that read's start: at most one
 * read's time earlier than its own. Reads cover whole UTC days, so that rolling windows
 * asked by many clients ask for the same read.
 */
export class SharedWriteCounts {
  private readonly inFlight = new Set<{ families: string; from: number; to: number; read: Promise<Counts> }>();
  /** Reads run, and requests that joined one, for tests and operators. */
  reads = 0;
  joined = 0;

  constructor(private readonly counts: WriteCounts) {}

  /** The counts of the families over at least [from, to): a read in flight that covers them, or a new one. */
  read(families: FamilyName[], from: number, to: number): Promise<Counts> {
    const [f, t, names] = [Math.floor(from / DAY_MS) * DAY_MS, Math.ceil(to / DAY_MS) * DAY_MS, families.join(',')];
    for (const r of this.inFlight) {
      if (r.families === names && r.from <= f && r.to >= t) {
        this.joined++;
        return r.read;
      }
    }
    this.reads++;
    const entry = { families: names, from: f, to: t, read: this.counts.read(families, f, t) };
    this.inFlight.add(entry);
    void entry.read.finally(() => this.inFlight.delete(entry)).catch(() => {});
    return entry.read;
  }
}
