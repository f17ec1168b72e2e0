// The JSON text of the market-maker answers' rows (summary, reconciliation), written from
// packed rows: each row a run of numbers in a Float64Array (its head, its timestamp, then
// one number per column), the texts it names in tables beside. Packed, the rows cross to a
// helper thread without copying objects, and the text, most of an answer's time (a month
// is millions of numbers to write), is written on both cores (row-text-threads.ts).
//
// What is written is what JSON.stringify writes of the same rows, with numbers to 15
// significant digits (lib/json-number.ts): keys in the columns' order, a number that is not
// finite as null (a value unknown to the endpoint is packed as NaN), booleans as true and
// false.

import { JSON_NUMBER_MAX_BYTES, writeJsonNumber } from '../../../lib/json-number.ts';

/** How a column's number is written: a number, a boolean (0 false, else true), or the text of that index in `texts`. */
export const KIND = { number: 0, bool: 1, text: 2 } as const;

export interface PackedRows {
  /** Each row's start: `{"organization":...,"pair":...`, by index. */
  heads: string[];
  /** Each row's time columns after its head (`,"timestamp":"..."`, or none), by index. */
  stamps: string[];
  /** JSON texts a text column's number indexes. */
  texts: string[];
  /** Per column: its key as written, `,"name":`. */
  keys: string[];
  /** Per column: its KIND. */
  kinds: Uint8Array;
  /** 2 + keys.length numbers a row: head index, stamp index, then the columns. */
  rows: Float64Array;
  /** Rows written as one text, their JSON objects joined by commas: per group, the index of the row after its last. */
  groupEnds: Uint32Array;
}

/** The text of groups [from, to): all their bytes, and where each group's ends in them (a comma follows each). */
export interface WrittenGroups {
  bytes: Uint8Array;
  ends: Uint32Array;
}

/**
 * Bytes known before writing (a key, a row's head, a key with `true`), held as 32-bit words:
 * a reconciliation's text is mostly keys, and copying them a word at a time, not a byte,
 * halves the time to write it. The last word is padded: writing it puts up to 3 bytes past
 * the piece, which the next write covers.
 */
interface Piece {
  length: number;
  words: Uint32Array;
}

const encoder = new TextEncoder();

/** Whether this machine keeps a word's low byte first: words are written back in its order. */
const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;

function piece(text: string): Piece {
  const bytes = encoder.encode(text);
  const words = new Uint32Array(Math.ceil(bytes.length / 4));
  new Uint8Array(words.buffer).set(bytes);
  return { length: bytes.length, words };
}

/** A growing byte buffer written with pieces, numbers and single bytes. */
class Bytes {
  buf: Uint8Array;
  /** The same buffer, for writing words at any position. */
  private view: DataView;
  pos = 0;

  constructor(size: number) {
    this.buf = new Uint8Array(Math.max(1024, size));
    this.view = new DataView(this.buf.buffer);
  }

  room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.pos + n));
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  piece(p: Piece): void {
    const words = p.words;
    this.room(words.length * 4);
    const view = this.view;
    const pos = this.pos;
    for (let i = 0; i < words.length; i++) view.setUint32(pos + 4 * i, words[i]!, LITTLE_ENDIAN);
    this.pos = pos + p.length;
  }

  number(v: number): void {
    this.room(JSON_NUMBER_MAX_BYTES);
    this.pos = writeJsonNumber(this.buf, this.pos, v, this.view);
  }

  /** Bytes [from, to) written before, written again (a number's text: a few bytes, copied in a loop). */
  again(from: number, to: number): void {
    this.room(to - from);
    const buf = this.buf;
    let pos = this.pos;
    for (let i = from; i < to; i++) buf[pos++] = buf[i]!;
    this.pos = pos;
  }

  byte(c: number): void {
    this.room(1);
    this.buf[this.pos++] = c;
  }
}

const COMMA = 0x2c;
const CLOSE = 0x7d;

/** The texts of packed rows as pieces, made once for all the slices written of them. */
export interface EncodedTables {
  heads: Piece[];
  stamps: Piece[];
  texts: Piece[];
  /** Per column: its key. */
  keys: Piece[];
  /** Per column: its key and `null`; a boolean column's key and `true`, and its key and `false`. */
  keyNull: Piece[];
  keyTrue: Piece[];
  keyFalse: Piece[];
}

export function encodeTables(p: PackedRows): EncodedTables {
  const pieces = (xs: string[]) => xs.map(piece);
  return {
    heads: pieces(p.heads),
    stamps: pieces(p.stamps),
    texts: pieces(p.texts),
    keys: pieces(p.keys),
    keyNull: p.keys.map((k) => piece(`${k}null`)),
    keyTrue: p.keys.map((k) => piece(`${k}true`)),
    keyFalse: p.keys.map((k) => piece(`${k}false`)),
  };
}

/** Writes groups [from, to) of `p` (all of them by default). */
export function writeGroups(p: PackedRows, from = 0, to = p.groupEnds.length, tables: EncodedTables = encodeTables(p)): WrittenGroups {
  const { heads, stamps, texts, keys, keyNull, keyTrue, keyFalse } = tables;
  const { kinds, rows, groupEnds } = p;
  const columns = keys.length;
  const width = 2 + columns;
  const first = from === 0 ? 0 : groupEnds[from - 1]!;
  const last = to === 0 ? 0 : groupEnds[to - 1]!;
  // A column's key and a number's text, about 32 bytes; the buffer grows when short.
  const out = new Bytes((last - first) * (64 + columns * 32));
  const ends = new Uint32Array(to - from);
  let row = first;
  // A depth is the same at every level beyond the farthest order: writing a number costs
  // more than comparing it with the last one written and copying its text.
  let lastNumber = NaN;
  let lastFrom = 0;
  let lastTo = 0;
  for (let g = from; g < to; g++) {
    const end = groupEnds[g]!;
    for (let r = row; r < end; r++) {
      if (r > row) out.byte(COMMA);
      const at = r * width;
      out.piece(heads[rows[at]!]!);
      out.piece(stamps[rows[at + 1]!]!);
      for (let c = 0; c < columns; c++) {
        const v = rows[at + 2 + c]!;
        const kind = kinds[c];
        if (kind === KIND.number) {
          if (v === lastNumber) {
            out.piece(keys[c]!);
            out.again(lastFrom, lastTo);
          } else if (Number.isFinite(v)) {
            out.piece(keys[c]!);
            lastFrom = out.pos;
            out.number(v);
            lastTo = out.pos;
            lastNumber = v;
          } else out.piece(keyNull[c]!);
        } else if (kind === KIND.bool) out.piece(Number.isNaN(v) ? keyNull[c]! : v !== 0 ? keyTrue[c]! : keyFalse[c]!);
        else {
          out.piece(keys[c]!);
          out.piece(texts[v]!);
        }
      }
      out.byte(CLOSE);
    }
    row = end;
    ends[g - from] = out.pos;
    // A comma after each group: the groups of one cell's buckets, one after the other, are
    // then one text as they lie (sealed-answer.ts joins a kept block's so, without a copy).
    out.byte(COMMA);
  }
  return { bytes: out.buf.subarray(0, out.pos), ends };
}

/** Builds PackedRows row by row: the texts interned, the rows' numbers grown as they come. */
export class RowPacker {
  private readonly heads = new Map<string, number>();
  private readonly stamps = new Map<string, number>();
  private readonly texts = new Map<string, number>();
  private rows: Float64Array;
  private n = 0;
  private readonly ends: number[] = [];
  private readonly width: number;

  constructor(
    private readonly keys: string[],
    private readonly kinds: Uint8Array,
    expectedRows = 1024,
  ) {
    this.width = 2 + keys.length;
    this.rows = new Float64Array(Math.max(1, expectedRows) * this.width);
  }

  /** The index of a JSON text for a text column. */
  text(json: string): number {
    let i = this.texts.get(json);
    if (i === undefined) this.texts.set(json, (i = this.texts.size));
    return i;
  }

  /**
   * Starts a row of this head and stamp: its columns are then written at `values[at + column]`
   * (NaN for an unknown value), `at` returned. An offset, not a view of the row: a view is an
   * object the collector moves while the rows are made (docs/benchmarks.md).
   */
  add(head: string, stamp: string): number {
    if ((this.n + 1) * this.width > this.rows.length) {
      const next = new Float64Array(this.rows.length * 2);
      next.set(this.rows);
      this.rows = next;
    }
    const at = this.n * this.width;
    this.rows[at] = intern(this.heads, head);
    this.rows[at + 1] = intern(this.stamps, stamp);
    this.n++;
    return at + 2;
  }

  /** The rows' numbers, where add's offsets point (a new array after an add that grew it). */
  get values(): Float64Array {
    return this.rows;
  }

  /** Ends a group: the rows since the last group's end are written as one text. Whether there were any (a group made). */
  endGroup(): boolean {
    if (this.n === (this.ends[this.ends.length - 1] ?? 0)) return false;
    this.ends.push(this.n);
    return true;
  }

  get groups(): number {
    return this.ends.length;
  }

  packed(): PackedRows {
    this.endGroup();
    return {
      heads: [...this.heads.keys()],
      stamps: [...this.stamps.keys()],
      texts: [...this.texts.keys()],
      keys: this.keys,
      kinds: this.kinds,
      rows: this.rows.subarray(0, this.n * this.width),
      groupEnds: Uint32Array.from(this.ends),
    };
  }
}

function intern(m: Map<string, number>, s: string): number {
  let i = m.get(s);
  if (i === undefined) m.set(s, (i = m.size));
  return i;
}
