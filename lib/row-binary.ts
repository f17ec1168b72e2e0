// ClickHouse's RowBinaryWithNamesAndTypes output read into objects, as the JSON reads give
// them: 64-bit integers as numbers, a number that is not finite as null (the JSON output
// writes NaN and infinities as null). For reads of many numbers, which the engine writes in
// a fraction of the time JSON takes it, and Node reads without parsing text.

type Reader = (r: Cursor) => unknown;

/** A position in a buffer of the engine's binary output (RowBinary, Native). */
export class Cursor {
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

/** An enum type's names by value (an enum is read as its name, as the JSON output writes it); undefined for another type. */
export function enumNames(type: string): Map<number, string> | undefined {
  const enumType = /^Enum(8|16)\((.*)\)$/.exec(type);
  if (!enumType) return undefined;
  const names = new Map<number, string>();
  for (const m of enumType[2]!.matchAll(/'((?:[^'\\]|\\.)*)' = (-?\d+)/g)) names.set(Number(m[2]), m[1]!.replace(/\\(.)/g, '$1'));
  return names;
}

/** The reader of a column type as the engine names it; an error for a type not read here. */
function readerOf(type: string): Reader {
  const scalar = SCALARS[type.startsWith("DateTime('") ? 'DateTime' : type];
  if (scalar) return scalar;
  const names = enumNames(type);
  if (names) {
    const size = type.startsWith('Enum8') ? 1 : 2;
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
export function tupleItems(list: string): string[] {
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
