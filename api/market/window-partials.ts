// The partial aggregates of books, trades and derivatives over a whole window (interval
// `a`: summary and leaderboard), with the sealed pieces of the window kept between
// requests. A window is tiled by pieces of minute, hour and day rows (window.ts); all but
// the last (the minutes of the open hour, and the hour rows of the current day during the
// lateness after an hour closes) are sealed. A piece's partials per pair are kept with the
// write count of its hours (market_writes) and used while that count stands, as the
// uptime rows are (docs/architecture.md). Per request the open pieces are computed anew;
// so is, each minute, the first piece, whose minutes the window's start cuts. Merging partials is the SQL's outer aggregation (query.ts) done
// in Node: sums, the earliest first mid and latest last mid, the smallest tick, the latest
// funding rate and open interest.
import type { BookPartial, DerivativePartial, Family, MarketQuery, MarketRepository, TradePartial } from './query.ts';
import { ByteLru, sealedBefore, writesIn, type SealingOptions } from './sealing.ts';
import type { Piece } from './window.ts';

type Partial = BookPartial | TradePartial | DerivativePartial;

export interface WindowPartialsResult {
  books: BookPartial[];
  trades: TradePartial[];
  derivatives: DerivativePartial[];
}

interface Entry {
  version: number;
  /** By pair key; null: the pair was computed and has no rows in the piece. */
  rows: Map<string, Partial | null>;
  bytes: number;
}

/** About what a partial costs in memory: its numbers, keys and object. */
function partialBytes(p: Partial | null): number {
  if (!p) return 64;
  return 'bid_depth' in p ? 8 * (p.bid_depth.length + p.ask_depth.length + p.bid_count.length + p.ask_count.length) + 400 : 300;
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
  put(key: string, version: number, rows: [string, Partial | null][]): void {
    if (!this.enabled) return;
    const old = this.get(key);
    const e: Entry = old && old.version === version ? old : { version, rows: new Map(), bytes: 0 };
    for (const [pair, p] of rows) {
      const before = e.rows.get(pair);
      if (before !== undefined) e.bytes -= partialBytes(before);
      e.rows.set(pair, p);
      e.bytes += partialBytes(p);
    }
    this.set(key, e);
  }
}

const FAMILIES: Family[] = ['book', 'trade', 'derivative'];

export class WindowPartials {
  constructor(
    private readonly market: MarketRepository,
    private readonly cache: PartialsCache,
    private readonly opts: SealingOptions,
  ) {}

  /** Books, trades and derivatives over the whole window of `q` (interval `a`), a partial per pair with data. */
  async window(q: MarketQuery): Promise<WindowPartialsResult> {
    if (q.interval !== 'a') throw new Error('WindowPartials answers interval a only');
    if (!this.cache.enabled || q.pairs.length === 0 || q.pieces.length === 0) {
      const [books, trades, derivatives] = await Promise.all([this.market.book(q), this.market.trades(q), this.market.derivatives(q)]);
      return { books, trades, derivatives };
    }
    const sealed = sealedBefore(this.opts);
    const kept = q.pieces.filter((p) => p.to <= sealed);
    const open = q.pieces.filter((p) => p.to > sealed);
    const keys = q.pairs.map((p) => `${p.exchange}\u0000${p.pair}`);
    const pieceKey = (family: Family, p: Piece) => `${family}|${p.table}|${p.from}|${p.to}`;
    /** A kept piece's partials for every pair asked, at `version` (or at any, to guess). */
    const lookup = (family: Family, p: Piece, version?: number) => {
      const e = version === undefined ? this.cache.get(pieceKey(family, p)) : this.cache.at(pieceKey(family, p), version);
      return e && keys.every((k) => e.rows.has(k)) ? e.rows : undefined;
    };
    // A piece must be computed after the counts are read (its version is the count it was
    // computed at, so a write after the read must show in a later count). When every kept
    // piece was computed before, the open pieces are computed while the counts are read;
    // when some never were, after them, in one statement with those (a round less: a cold
    // window took 191 ms in two rounds, 154 ms in one).
    const known = FAMILIES.map((f) => kept.map((p) => lookup(f, p) !== undefined));
    const early = known.every((k) => k.every(Boolean));
    // A sealed piece is kept only once asked for a second time: computing the pieces'
    // partials apart costs more than the window's one statement, which a one-off window
    // should not pay. A window none of whose pieces is kept or was asked for before is
    // that statement, without reading the counts.
    const admit = FAMILIES.map((f, fi) => kept.map((p, i) => known[fi]![i]! || this.cache.seen.check(pieceKey(f, p))));
    if (admit.every((a) => !a.includes(true))) {
      this.cache.misses += FAMILIES.length * kept.length;
      const [books, trades, derivatives] = await Promise.all([this.market.book(q), this.market.trades(q), this.market.derivatives(q)]);
      return { books, trades, derivatives };
    }
    const [writes, opened] = await Promise.all([
      kept.length > 0 ? this.market.writes(FAMILIES, Math.min(...kept.map((p) => p.from)), Math.max(...kept.map((p) => p.to))) : undefined,
      early ? Promise.all(FAMILIES.map((f) => this.compute(f, q, [open]))) : undefined,
    ]);
    const merged = await Promise.all(
      FAMILIES.map(async (family, fi) => {
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
          this.cache.put(pieceKey(family, kept[i]!), versions[i]!, [...found[i]!]);
        });
        const out: Partial[] = [];
        q.pairs.forEach((pair, p) => {
          let acc = merge(family, opened?.[fi]![0]![p], computed[0]![p]);
          for (const rows of found) if (rows) acc = merge(family, acc, rows.get(keys[p]!) ?? undefined);
          if (acc) out.push({ ...acc, exchange: pair.exchange, pair: pair.pair, b: 0 });
        });
        return out;
      }),
    );
    return { books: merged[0] as BookPartial[], trades: merged[1] as TradePartial[], derivatives: merged[2] as DerivativePartial[] };
  }

  /** Each group of pieces' partials (a group's pieces summed), by group then pair index (undefined: no rows). */
  private async compute(family: Family, q: MarketQuery, groups: Piece[][]): Promise<(Partial | undefined)[][]> {
    const out = groups.map(() => new Array<Partial | undefined>(q.pairs.length));
    const pieces = groups.flatMap((g, bucket) => g.map((p) => ({ ...p, bucket })));
    if (pieces.length === 0) return out;
    const index = new Map(q.pairs.map((p, i) => [`${p.exchange}\u0000${p.pair}`, i]));
    // Interval `c` groups by the bucket index each piece carries: here, its group's; `a`,
    // when all are in the first group, spares the engine finding each row's bucket (10-15 ms).
    const interval = pieces.every((p) => p.bucket === 0) ? 'a' : 'c';
    const rows = await this.market.run<Partial>(family, { pairs: q.pairs, interval, zone: q.zone, pieces });
    for (const r of rows) out[r.b]![index.get(`${r.exchange}\u0000${r.pair}`)!] = r;
    return out;
  }
}

const addArrays = (a: number[], b: number[]) => (a.length >= b.length ? a.map((x, i) => x + (b[i] ?? 0)) : b.map((x, i) => x + (a[i] ?? 0)));

/** Two partials of one pair as one, as the SQL's outer aggregation would (query.ts). */
function merge(family: Family, a: Partial | undefined, b: Partial | undefined): Partial | undefined {
  if (!a || !b) return a ?? b;
  if (family === 'trade') {
    const x = a as TradePartial;
    const y = b as TradePartial;
    return { ...x, trades: x.trades + y.trades, amount: x.amount + y.amount, notional: x.notional + y.notional, volume_usd: x.volume_usd + y.volume_usd, usd_trades: x.usd_trades + y.usd_trades };
  }
  if (family === 'derivative') {
    const x = a as DerivativePartial;
    const y = b as DerivativePartial;
    // max() of (time, value) tuples: the later time, then the larger value.
    const later = (t1: number, v1: number, t2: number, v2: number) => t2 > t1 || (t2 === t1 && v2 > v1);
    const funding = later(x.funding_ts, x.funding, y.funding_ts, y.funding) ? y : x;
    const oi = later(x.oi_ts, x.open_interest, y.oi_ts, y.open_interest) ? y : x;
    return { ...x, funding_ts: funding.funding_ts, funding: funding.funding, oi_ts: oi.oi_ts, open_interest: oi.open_interest };
  }
  const x = a as BookPartial;
  const y = b as BookPartial;
  // min() and max() of (time, mid) tuples.
  const first = y.first_ts < x.first_ts || (y.first_ts === x.first_ts && y.first_mid < x.first_mid) ? y : x;
  const last = y.last_ts > x.last_ts || (y.last_ts === x.last_ts && y.last_mid > x.last_mid) ? y : x;
  return {
    ...x,
    minutes: x.minutes + y.minutes,
    samples: x.samples + y.samples,
    mid_sum: x.mid_sum + y.mid_sum,
    first_mid: first.first_mid,
    first_ts: first.first_ts,
    last_mid: last.last_mid,
    last_ts: last.last_ts,
    tick: x.tick === null ? y.tick : y.tick === null ? x.tick : Math.min(x.tick, y.tick),
    depth_minutes: x.depth_minutes + y.depth_minutes,
    bid_depth: addArrays(x.bid_depth, y.bid_depth),
    ask_depth: addArrays(x.ask_depth, y.ask_depth),
    bid_count: addArrays(x.bid_count, y.bid_count),
    ask_count: addArrays(x.ask_count, y.ask_count),
  };
}
