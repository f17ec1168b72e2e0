// The minute partials of whole hours, per family and pair, kept between requests: what lets
// many different windows over the same recent minutes be answered without the engine.
// A rolling window's minutes are cut anew by every request (each client's "last hour" ends
// at its own moment), so pieces keyed by their bounds were computed for nearly every
// request (docs/benchmarks.md, bench:load). A block holds each minute of one
// hour apart, and any run of its minutes is merged from them: from the hour's start or to
// its end in one step (running merges kept per pair), a run inside the hour minute by
// minute. A block is kept at the write count of its hour, as the pieces are
// (window-partials.ts): a write into the hour makes it be computed again.
import { mergePartials, partialBytes } from '../../domain/market/families/family.ts';
import { FAMILIES, type FamilyName, type PartialKey } from '../../domain/market/families/index.ts';
import { pairKey } from './sealing.ts';
import { HOUR_MS } from '../../lib/time.ts';

const MIN = 60_000;
const PER_HOUR = 60;

/** A run of minutes [from, to) inside one hour (epoch ms, minute-aligned). */
export interface Segment {
  hour: number;
  from: number;
  to: number;
}

/** A pair's minutes of one hour, and their running merges from either end (made when first asked). */
export class PairMinutes {
  private head?: (PartialKey | undefined)[];
  private tail?: (PartialKey | undefined)[];

  constructor(
    private readonly family: FamilyName,
    readonly minutes: (PartialKey | undefined)[],
  ) {}

  /** The merge of minutes [i, j) of the hour (0 <= i < j <= 60). */
  range(i: number, j: number): PartialKey | undefined {
    const f = FAMILIES[this.family];
    if (i === 0) {
      this.head ??= running(f, this.minutes);
      return this.head[j - 1];
    }
    if (j === PER_HOUR) {
      this.tail ??= running(f, [...this.minutes].reverse()).reverse();
      return this.tail[i];
    }
    let acc: PartialKey | undefined;
    for (let m = i; m < j; m++) acc = mergePartials(f, acc, this.minutes[m]);
    return acc;
  }
}

function running(f: (typeof FAMILIES)[FamilyName], xs: (PartialKey | undefined)[]): (PartialKey | undefined)[] {
  const out: (PartialKey | undefined)[] = [];
  let acc: PartialKey | undefined;
  for (const x of xs) out.push((acc = mergePartials(f, acc, x)));
  return out;
}

/** One hour of a family: per pair key, its minutes (null: the pair has no rows in the hour). */
export interface Block {
  version: number;
  pairs: Map<string, PairMinutes | null>;
  bytes: number;
}

/** Splits the minute pieces of a window at hour starts: blocks are whole hours. */
export function segmentsOf(pieces: readonly { table: string; from: number; to: number }[]): Segment[] {
  const out: Segment[] = [];
  for (const p of pieces) {
    if (p.table !== 'minutes') continue;
    for (let from = p.from; from < p.to; ) {
      const hour = Math.floor(from / HOUR_MS) * HOUR_MS;
      const to = Math.min(p.to, hour + HOUR_MS);
      out.push({ hour, from, to });
      from = to;
    }
  }
  return out;
}

/** Minute index of a segment's bounds within its hour. */
export const minuteIndex = (s: Segment): [number, number] => [(s.from - s.hour) / MIN, (s.to - s.hour) / MIN];

/** A block from the partials of its pairs' minutes (rows with `b` the minute's epoch seconds). */
export function blockOf(family: FamilyName, hour: number, version: number, pairKeys: string[], rows: PartialKey[], into?: Block): Block {
  const f = FAMILIES[family];
  const block: Block = into && into.version === version ? into : { version, pairs: new Map(), bytes: 0 };
  const byPair = new Map<string, (PartialKey | undefined)[]>();
  for (const r of rows) {
    const key = pairKey(r);
    let minutes = byPair.get(key);
    if (!minutes) byPair.set(key, (minutes = new Array<PartialKey | undefined>(PER_HOUR)));
    minutes[(r.b * 1000 - hour) / MIN] = r;
  }
  for (const key of pairKeys) {
    const minutes = byPair.get(key);
    const old = block.pairs.get(key);
    if (old !== undefined) block.bytes -= pairBytes(f, old);
    const entry = minutes ? new PairMinutes(family, minutes) : null;
    block.pairs.set(key, entry);
    block.bytes += pairBytes(f, entry);
  }
  return block;
}

function pairBytes(f: (typeof FAMILIES)[FamilyName], p: PairMinutes | null): number {
  if (!p) return 64;
  // The minutes, and room for the two running merges, which hold as many partials again.
  let n = 3 * 8 * PER_HOUR + 100;
  for (const m of p.minutes) if (m) n += 3 * partialBytes(f, m);
  return n;
}
