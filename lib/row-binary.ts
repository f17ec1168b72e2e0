// ClickHouse's RowBinaryWithNamesAndTypes output read into objects, as the JSON reads give
// them: 64-bit integers as numbers, a number that is not finite as null (the JSON output
// writes NaN and infinities as null). For reads of many numbers, which the engine writes in
// a fraction of the time JSON takes it, and Node reads without parsing text.

type Reader = (r: Cursor) => unknown;

class Cursor {
  pos = 0;
  /** Numbers are read through a DataView: its reads compile to loads, Buffer's are calls. */
  readonly view: DataView;
  constructor(readonly buf: Buffer) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  /** An unsigned LEB128 length. */
  varUInt(): number {
    let n = 0;
    let shift = 0;
    for (;;) {
      const b = this.buf[this.pos++]!;
      n += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return n;
      shift += 7;
    }
  }

  string(): string {
    const n = this.varUInt();
    const s = this.buf.toString('utf8', this.pos, this.pos + n);
    this.pos += n;
    return s;
  }
}

const finite = (x: number): number | null => (Number.isFinite(x) ? x : null);

const SCALARS: Record<string, Reader> = {
  String: (r) => r.string(),
  Bool: (r) => r.buf[r.pos++] === 1,
  UInt8: (r) => r.buf[r.pos++],
  Int8: (r) => r.view.getInt8(r.pos++),
  UInt16: (r) => ((r.pos += 2), r.view.getUint16(r.pos - 2, true)),
  Int16: (r) => ((r.pos += 2), r.view.getInt16(r.pos - 2, true)),
  UInt32: (r) => ((r.pos += 4), r.view.getUint32(r.pos - 4, true)),
  Int32: (r) => ((r.pos += 4), r.view.getInt32(r.pos - 4, true)),
  // Past 2^53 a number loses digits, as the JSON read's numbers do.
  UInt64: (r) => ((r.pos += 8), r.view.getUint32(r.pos - 8, true) + r.view.getUint32(r.pos - 4, true) * 2 ** 32),
  Int64: (r) => ((r.pos += 8), r.view.getUint32(r.pos - 8, true) + r.view.getInt32(r.pos - 4, true) * 2 ** 32),
  Float32: (r) => ((r.pos += 4), finite(r.view.getFloat32(r.pos - 4, true))),
  Float64: (r) => ((r.pos += 8), finite(r.view.getFloat64(r.pos - 8, true))),
  DateTime: (r) => ((r.pos += 4), r.view.getUint32(r.pos - 4, true)),
};

/** An Array(Float64) in one loop, not a reader call per item: a month's depth is millions of them. */
const float64s: Reader = (r) => {
  const n = r.varUInt();
  const out = new Array<number | null>(n);
  const view = r.view;
  let pos = r.pos;
  for (let i = 0; i < n; i++, pos += 8) {
    const x = view.getFloat64(pos, true);
    out[i] = Number.isFinite(x) ? x : null;
  }
  r.pos = pos;
  return out;
};

/**
 * A LowCardinality(String) column: few values over many rows, so each value read is looked
 * up among those read before by its bytes, and the same string returned. Not decoded again
 * per row, and a string seen before has its hash computed: the reads key maps by them.
 */
function fewStrings(): Reader {
  const SLOTS = 256;
  const bytes: (Buffer | undefined)[] = new Array(SLOTS);
  const strings: string[] = new Array(SLOTS);
  return (r) => {
    const n = r.varUInt();
    const buf = r.buf;
    const at = r.pos;
    r.pos += n;
    if (n === 0) return '';
    const slot = (n * 31 + buf[at]! * 7 + buf[at + (n >> 1)]! * 3 + buf[at + n - 1]!) & (SLOTS - 1);
    const seen = bytes[slot];
    if (seen !== undefined && seen.length === n) {
      let i = 0;
      while (i < n && seen[i] === buf[at + i]) i++;
      if (i === n) return strings[slot];
    }
    const s = buf.toString('utf8', at, at + n);
    bytes[slot] = Buffer.from(buf.subarray(at, at + n));
    strings[slot] = s;
    return s;
  };
}

/** The reader of a column type as the engine names it; an error for a type not read here. */
function readerOf(type: string): Reader {
  const scalar = SCALARS[type.startsWith("DateTime('") ? 'DateTime' : type];
  if (scalar) return scalar;
  const enumType = /^Enum(8|16)\((.*)\)$/.exec(type);
  if (enumType) {
    // As its name, as the JSON output writes it.
    const names = new Map<number, string>();
    for (const m of enumType[2]!.matchAll(/'((?:[^'\\]|\\.)*)' = (-?\d+)/g)) names.set(Number(m[2]), m[1]!.replace(/\\(.)/g, '$1'));
    const size = enumType[1] === '8' ? 1 : 2;
    return (r) => {
      const v = size === 1 ? r.view.getInt8(r.pos) : r.view.getInt16(r.pos, true);
      r.pos += size;
      return names.get(v);
    };
  }
  const inner = /^(Nullable|Array|LowCardinality|Tuple)\((.*)\)$/.exec(type);
  if (!inner) throw new Error(`RowBinary: column type not supported: ${type}`);
  if (inner[1] === 'Tuple') {
    // As an array, as the JSON output writes an unnamed tuple.
    const items = tupleItems(inner[2]!).map(readerOf);
    return (r) => items.map((item) => item(r));
  }
  if (inner[1] === 'Array' && inner[2] === 'Float64') return float64s;
  if (inner[1] === 'LowCardinality' && inner[2] === 'String') return fewStrings();
  const item = readerOf(inner[2]!);
  if (inner[1] === 'LowCardinality') return item;
  if (inner[1] === 'Nullable') return (r) => (r.buf[r.pos++] === 1 ? null : item(r));
  return (r) => {
    const n = r.varUInt();
    const out = new Array<unknown>(n);
    for (let i = 0; i < n; i++) out[i] = item(r);
    return out;
  };
}

/** A tuple's item types, split at the commas outside parentheses and quotes; a named item's name dropped. */
function tupleItems(list: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i <= list.length; i++) {
    const c = list[i];
    if (c === "'" && list[i - 1] !== '\\') quoted = !quoted;
    if (quoted) continue;
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if ((c === ',' && depth === 0) || i === list.length) {
      const item = list.slice(start, i).trim();
      if (/^\w+ /.test(item) && !/^\w+\(/.test(item)) throw new Error(`RowBinary: named tuple not supported: ${list}`);
      out.push(item);
      start = i + 1;
    }
  }
  return out;
}

/** The rows of a RowBinaryWithNamesAndTypes output, each an object keyed by column name. */
export function readRowBinary<T>(buf: Buffer): T[] {
  if (buf.length === 0) return [];
  const r = new Cursor(buf);
  const n = r.varUInt();
  const names: string[] = [];
  for (let i = 0; i < n; i++) names.push(r.string());
  const readers: Reader[] = [];
  for (let i = 0; i < n; i++) readers.push(readerOf(r.string()));
  const rows: T[] = [];
  while (r.pos < buf.length) {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < n; i++) row[names[i]!] = readers[i]!(r);
    rows.push(row as T);
  }
  return rows;
}

/** An array-of-numbers column read whole: row i's items are values[offsets[i]] to values[offsets[i + 1]] (not finite as NaN). */
export interface Float64ArrayColumn {
  offsets: Uint32Array;
  values: Float64Array;
}

/**
 * The rows of a RowBinaryWithNamesAndTypes output by column: `length` rows; each number
 * column a Float64Array (a number that is not finite as NaN: numbers have no null here),
 * each array of numbers (Array(Float64), Array(UInt16)...) a Float64ArrayColumn, each other
 * column (strings, enums by name) an array of what readRowBinary reads. A read of tens of
 * thousands of rows of number arrays then makes a few arrays, not an object and two arrays
 * a row, which the collector would copy while the request lasts.
 */
export interface Columns {
  length: number;
  columns: Map<string, Float64Array | Float64ArrayColumn | unknown[]>;
}

/** A growing Float64Array; `done` is its part written. */
class Float64s {
  data = new Float64Array(1024);
  n = 0;
  push(x: number): void {
    if (this.n === this.data.length) this.grow(this.n + 1);
    this.data[this.n++] = x;
  }
  grow(min: number): void {
    const next = new Float64Array(Math.max(min, this.data.length * 2));
    next.set(this.data.subarray(0, this.n));
    this.data = next;
  }
  done(): Float64Array {
    return this.data.subarray(0, this.n);
  }
}

const NUMBER_TYPES = new Set(['UInt8', 'Int8', 'UInt16', 'Int16', 'UInt32', 'Int32', 'UInt64', 'Int64', 'Float32', 'Float64', 'DateTime']);

/** k numbers at `pos` of `view` into out[at...], not finite as NaN (x - x is 0 only for a finite x); the position after them. */
function readFloat64s(view: DataView, pos: number, k: number, out: Float64Array, at: number): number {
  for (let j = 0; j < k; j++, pos += 8) {
    const x = view.getFloat64(pos, true);
    out[at + j] = x - x === 0 ? x : NaN;
  }
  return pos;
}

/** readRowBinary's rows by column (Columns). */
export function readRowBinaryColumns(buf: Buffer): Columns {
  const columns = new Map<string, Float64Array | Float64ArrayColumn | unknown[]>();
  if (buf.length === 0) return { length: 0, columns };
  const r = new Cursor(buf);
  const n = r.varUInt();
  const names: string[] = [];
  for (let i = 0; i < n; i++) names.push(r.string());
  // Per column: read one row's value into the column (row-major input, column-major output).
  const sinks: ((r: Cursor) => void)[] = [];
  const finish: (() => void)[] = [];
  for (let i = 0; i < n; i++) {
    const type = r.string();
    const name = names[i]!;
    const base = type.startsWith("DateTime('") ? 'DateTime' : type;
    const scalar = NUMBER_TYPES.has(base) ? SCALARS[base] : undefined;
    if (scalar) {
      const out = new Float64s();
      sinks.push((c) => out.push((scalar(c) as number | null) ?? NaN));
      finish.push(() => columns.set(name, out.done()));
    } else if (type === 'Array(Float64)') {
      const offsets = new Float64s();
      offsets.push(0);
      // Room for every number the output can hold (8 bytes each): never grown, and the
      // pages never written are never touched.
      const values = new Float64Array(buf.length >> 3);
      let used = 0;
      sinks.push((c) => {
        const k = c.varUInt();
        c.pos = readFloat64s(c.view, c.pos, k, values, used);
        used += k;
        offsets.push(used);
      });
      finish.push(() => columns.set(name, { offsets: Uint32Array.from(offsets.done()), values: values.subarray(0, used) }));
    } else if (/^Array\((\w+)\)$/.test(type) && NUMBER_TYPES.has(type.slice(6, -1))) {
      // An array of other numbers (positions, counts): each item as a number, into one array.
      const item = SCALARS[type.slice(6, -1)]!;
      const offsets = new Float64s();
      offsets.push(0);
      const values = new Float64s();
      sinks.push((c) => {
        const k = c.varUInt();
        for (let j = 0; j < k; j++) values.push((item(c) as number | null) ?? NaN);
        offsets.push(values.n);
      });
      finish.push(() => columns.set(name, { offsets: Uint32Array.from(offsets.done()), values: values.done() }));
    } else {
      const read = readerOf(type);
      const out: unknown[] = [];
      sinks.push((c) => out.push(read(c)));
      finish.push(() => columns.set(name, out));
    }
  }
  let length = 0;
  while (r.pos < buf.length) {
    for (let i = 0; i < n; i++) sinks[i]!(r);
    length++;
  }
  for (const f of finish) f();
  return { length, columns };
}

function column(c: Columns, name: string): Float64Array | Float64ArrayColumn | unknown[] {
  const col = c.columns.get(name);
  if (col === undefined) throw new Error(`RowBinary: no column ${name} (${[...c.columns.keys()].join(', ')})`);
  return col;
}

/** A number column of `c`; an error if it is not one. */
export function numberColumn(c: Columns, name: string): Float64Array {
  const col = column(c, name);
  if (!(col instanceof Float64Array)) throw new Error(`RowBinary: column ${name} is not of numbers`);
  return col;
}

/** An array-of-numbers column of `c`; an error if it is not one. */
export function float64ArrayColumn(c: Columns, name: string): Float64ArrayColumn {
  const col = column(c, name);
  if (col instanceof Float64Array || Array.isArray(col)) throw new Error(`RowBinary: column ${name} is not of arrays of numbers`);
  return col;
}

/** Another column of `c` (strings, enums by name), as readRowBinary reads its values. */
export function valueColumn<T>(c: Columns, name: string): T[] {
  const col = column(c, name);
  if (!Array.isArray(col)) throw new Error(`RowBinary: column ${name} is of numbers`);
  return col as T[];
}
