// Uptime rows of sealed buckets, as the JSON bytes the endpoint sends, kept between
// requests (uptime-rows.ts). One entry per pair and row shape (kind, interval, zone,
// columns): the pair's rows of whole sealed buckets, in time order, each with the write
// count of its hours it was computed after (schemas/clickhouse/004), one after another in
// one buffer. A pair's answer is then one slice of it, not a row per bucket: putting a
// view's rows together one by one cost about what the query they saved cost. Least recently
// used entries go first once the bytes exceed the bound.
import { ByteLru } from './sealing.ts';

/** One pair's rows of whole sealed buckets. Bucket i is `data[offsets[i], offsets[i + 1])`. */
export interface Segment {
  /** Bucket starts (epoch ms), increasing. */
  starts: number[];
  /** The write count of each bucket's hours when it was computed. */
  versions: number[];
  offsets: number[];
  /** Each row with `,\n` before it, so that a run of buckets is one slice; nothing for a bucket without data. */
  data: Buffer;
}

/** What an entry costs beyond its bytes: the map entry, the arrays, the Buffer object. */
const ENTRY_OVERHEAD = 256;
const PER_BUCKET = 3 * 8;

export function segmentBytes(s: Segment): number {
  return s.data.length + s.starts.length * PER_BUCKET + ENTRY_OVERHEAD;
}

/** Segments by pair and row shape. */
export class UptimeCache extends ByteLru<Segment> {
  constructor(maxBytes: number) {
    super(maxBytes, segmentBytes);
  }
}

/**
 * Where each wanted bucket is in the segment (its index), or -1 when absent or computed at
 * another count than `versions` says (without versions: at any count).
 */
export function locate(s: Segment | undefined, starts: number[], versions?: number[]): number[] {
  const at = new Array<number>(starts.length).fill(-1);
  if (!s) return at;
  let j = 0;
  for (let i = 0; i < starts.length; i++) {
    while (j < s.starts.length && s.starts[j]! < starts[i]!) j++;
    if (j < s.starts.length && s.starts[j] === starts[i] && (!versions || s.versions[j] === versions[i])) at[i] = j;
  }
  return at;
}

/**
 * A segment with the buckets of `fresh` (start, version, row without separator or
 * undefined) in place of any it held at those starts, and without those before `keepFrom`
 * (a segment is rebuilt whole, so what it carries is copied at every rebuild).
 */
export function withBuckets(s: Segment | undefined, fresh: { start: number; version: number; row: Buffer | undefined }[], keepFrom = -Infinity): Segment {
  const replaced = new Set(fresh.map((f) => f.start));
  const items: { start: number; version: number; bytes: Buffer | undefined; sep: boolean }[] = [];
  if (s) {
    for (let j = 0; j < s.starts.length; j++) {
      if (replaced.has(s.starts[j]!) || s.starts[j]! < keepFrom) continue;
      const [a, b] = [s.offsets[j]!, s.offsets[j + 1]!];
      items.push({ start: s.starts[j]!, version: s.versions[j]!, bytes: a < b ? s.data.subarray(a, b) : undefined, sep: false });
    }
  }
  for (const f of fresh) items.push({ start: f.start, version: f.version, bytes: f.row, sep: true });
  items.sort((x, y) => x.start - y.start);
  let length = 0;
  for (const it of items) if (it.bytes) length += it.bytes.length + (it.sep ? SEP.length : 0);
  const data = Buffer.allocUnsafe(length);
  const out: Segment = { starts: [], versions: [], offsets: [0], data };
  let at = 0;
  for (const it of items) {
    if (it.bytes) {
      if (it.sep) at += SEP.copy(data, at);
      at += it.bytes.copy(data, at);
    }
    out.starts.push(it.start);
    out.versions.push(it.version);
    out.offsets.push(at);
  }
  return out;
}

/** The separator a segment's rows carry before them. */
export const SEP = Buffer.from(',\n');
