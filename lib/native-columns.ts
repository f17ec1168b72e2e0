// ClickHouse's Native output read by column (Columns). Native is the engine's own columnar
// layout: per block, each column's values one after the other, a number column as its
// numbers, an array column as its rows' end offsets and then all its items. A column of
// numbers is then read in one loop over its bytes, not a row at a time as RowBinary must,
// and a LowCardinality column is its few distinct strings and an index per row.
//
// Values read as readRowBinary reads them (row-binary.ts): 64-bit integers as numbers, a
// number that is not finite as NaN in a number column and as null elsewhere, enums by
// name, tuples as arrays. The layout is the one the engine writes for an output format
// (no protocol revision: no block info, no custom serializations), on a server too.
import { Cursor, enumNames, tupleItems } from './row-binary.ts';

/** An array-of-numbers column read whole: row i's items are values[offsets[i]] to values[offsets[i + 1]] (not finite as NaN). */
export interface Float64ArrayColumn {
  offsets: Uint32Array;
  values: Float64Array;
}

/**
 * A read's rows by column: `length` rows; each number column a Float64Array (a number that
 * is not finite as NaN: numbers have no null here), each array of numbers (Array(Float64),
 * Array(UInt16)...) a Float64ArrayColumn, each other column (strings, enums by name) an
 * array of what readRowBinary reads. A read of tens of thousands of rows of number arrays
 * then makes a few arrays, not an object and two arrays a row, which the collector would
 * copy while the request lasts.
 */
export interface Columns {
  length: number;
  columns: Map<string, Float64Array | Float64ArrayColumn | unknown[]>;
}

/** Bytes of each number type, as Native and RowBinary lay them out (little-endian). */
const NUMBER_BYTES: Record<string, number> = {
  UInt8: 1,
  Int8: 1,
  UInt16: 2,
  Int16: 2,
  UInt32: 4,
  Int32: 4,
  DateTime: 4,
  Float32: 4,
  UInt64: 8,
  Int64: 8,
  Float64: 8,
};

const numberType = (type: string): string | undefined => {
  const base = type.startsWith("DateTime('") ? 'DateTime' : type;
  return NUMBER_BYTES[base] === undefined ? undefined : base;
};

/** Whether this machine keeps a number's low byte first, as the engine writes them: Float64 bytes are then copied as they are. */
const LITTLE_ENDIAN = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

/** `n` numbers of `type` at the cursor into out[at...], not finite as NaN (x - x is 0 only for a finite x). */
function readNumbers(r: Cursor, type: string, n: number, out: Float64Array, at: number): void {
  const v = r.view;
  let pos = r.pos;
  switch (type) {
    case 'Float64':
      if (LITTLE_ENDIAN) {
        // The bytes copied whole (wherever they lie in the output), then checked in place.
        new Uint8Array(out.buffer, out.byteOffset + at * 8, n * 8).set(r.buf.subarray(pos, pos + n * 8));
        for (let i = at; i < at + n; i++) {
          const x = out[i]!;
          if (x - x !== 0) out[i] = NaN;
        }
        pos += n * 8;
        break;
      }
      for (let i = 0; i < n; i++, pos += 8) {
        const x = v.getFloat64(pos, true);
        out[at + i] = x - x === 0 ? x : NaN;
      }
      break;
    case 'Float32':
      for (let i = 0; i < n; i++, pos += 4) {
        const x = v.getFloat32(pos, true);
        out[at + i] = x - x === 0 ? x : NaN;
      }
      break;
    case 'UInt8':
      for (let i = 0; i < n; i++, pos++) out[at + i] = v.getUint8(pos);
      break;
    case 'Int8':
      for (let i = 0; i < n; i++, pos++) out[at + i] = v.getInt8(pos);
      break;
    case 'UInt16':
      for (let i = 0; i < n; i++, pos += 2) out[at + i] = v.getUint16(pos, true);
      break;
    case 'Int16':
      for (let i = 0; i < n; i++, pos += 2) out[at + i] = v.getInt16(pos, true);
      break;
    case 'UInt32':
    case 'DateTime':
      for (let i = 0; i < n; i++, pos += 4) out[at + i] = v.getUint32(pos, true);
      break;
    case 'Int32':
      for (let i = 0; i < n; i++, pos += 4) out[at + i] = v.getInt32(pos, true);
      break;
    // Past 2^53 a number loses digits, as the JSON read's numbers do.
    case 'UInt64':
      for (let i = 0; i < n; i++, pos += 8) out[at + i] = v.getUint32(pos, true) + v.getUint32(pos + 4, true) * 2 ** 32;
      break;
    case 'Int64':
      for (let i = 0; i < n; i++, pos += 8) out[at + i] = v.getUint32(pos, true) + v.getInt32(pos + 4, true) * 2 ** 32;
      break;
    default:
      throw new Error(`Native: not a number type: ${type}`);
  }
  r.pos = pos;
}

/** A little-endian UInt64 (a count or an offset: below 2^53). */
function uint64(r: Cursor): number {
  const x = r.view.getUint32(r.pos, true) + r.view.getUint32(r.pos + 4, true) * 2 ** 32;
  r.pos += 8;
  return x;
}

/** The outer type and what is inside its parentheses: `Array(Float64)` is ['Array', 'Float64']. */
function split(type: string): [string, string] | undefined {
  const m = /^(Nullable|Array|LowCardinality|Tuple)\((.*)\)$/.exec(type);
  return m ? [m[1]!, m[2]!] : undefined;
}

/**
 * Reads the state prefixes of a column of `type`: written once per column, before its data,
 * its nested columns' first (a LowCardinality column's version of its dictionaries).
 */
function readPrefix(r: Cursor, type: string): void {
  const s = split(type);
  if (!s) return;
  if (s[0] === 'LowCardinality') {
    const version = uint64(r);
    // 1: dictionaries shared by the column's parts, keys added to each part.
    if (version !== 1) throw new Error(`Native: LowCardinality serialization version ${version} not supported`);
    return;
  }
  if (s[0] === 'Tuple') for (const item of tupleItems(s[1])) readPrefix(r, item);
  else readPrefix(r, s[1]);
}

/** A LowCardinality index part's flags (SerializationLowCardinality): keys follow, or a global dictionary is needed. */
const HAS_ADDITIONAL_KEYS = 1 << 9;
const NEEDS_GLOBAL_DICTIONARY = 1 << 8;
const INDEX_BYTES = [1, 2, 4, 8];

/** `n` values of `type` at the cursor (its prefix read), as readRowBinary reads them. */
function readValues(r: Cursor, type: string, n: number): unknown[] {
  const num = numberType(type);
  if (num) {
    const xs = new Float64Array(n);
    readNumbers(r, num, n, xs, 0);
    // Floats that are not finite as null; other numbers are always finite.
    return Array.from(xs, (x) => (Number.isNaN(x) ? null : x));
  }
  if (type === 'String') {
    const out = new Array<string>(n);
    for (let i = 0; i < n; i++) out[i] = r.string();
    return out;
  }
  if (type === 'Bool') {
    const out = new Array<boolean>(n);
    for (let i = 0; i < n; i++) out[i] = r.buf[r.pos++] === 1;
    return out;
  }
  const names = enumNames(type);
  if (names) {
    const size = type.startsWith('Enum8') ? 1 : 2;
    const out = new Array<string | undefined>(n);
    for (let i = 0; i < n; i++, r.pos += size) out[i] = names.get(size === 1 ? r.view.getInt8(r.pos) : r.view.getInt16(r.pos, true));
    return out;
  }
  const s = split(type);
  if (!s) throw new Error(`Native: column type not supported: ${type}`);
  const [outer, inner] = s;
  if (outer === 'Nullable') {
    const nulls = r.buf.subarray(r.pos, r.pos + n);
    r.pos += n;
    const values = readValues(r, inner, n);
    return values.map((x, i) => (nulls[i] === 1 ? null : x));
  }
  if (outer === 'Array') {
    const ends = new Float64Array(n);
    readNumbers(r, 'UInt64', n, ends, 0);
    const items = readValues(r, inner, n === 0 ? 0 : ends[n - 1]!);
    return Array.from(ends, (end, i) => items.slice(i === 0 ? 0 : ends[i - 1]!, end));
  }
  if (outer === 'Tuple') {
    const columns = tupleItems(inner).map((item) => readValues(r, item, n));
    return Array.from({ length: n }, (_, i) => columns.map((c) => c[i]));
  }
  return readLowCardinality(r, inner, n);
}

/** `n` values of a LowCardinality column of `inner`: in parts, each its keys and an index per row. */
function readLowCardinality(r: Cursor, inner: string, n: number): unknown[] {
  const parts = split(inner);
  const nullable = parts?.[0] === 'Nullable';
  const keyType = nullable ? parts![1] : inner;
  const out: unknown[] = [];
  while (out.length < n) {
    const flags = uint64(r);
    if (flags & NEEDS_GLOBAL_DICTIONARY || !(flags & HAS_ADDITIONAL_KEYS)) throw new Error('Native: LowCardinality with a global dictionary not supported');
    const keys = readValues(r, keyType, uint64(r));
    // Of a nullable column, key 0 stands for null.
    if (nullable) keys[0] = null;
    const rows = uint64(r);
    if (rows === 0) throw new Error('Native: LowCardinality part of no rows');
    const size = INDEX_BYTES[flags & 0xff];
    if (size === undefined) throw new Error(`Native: LowCardinality index type ${flags & 0xff} not supported`);
    const v = r.view;
    let pos = r.pos;
    for (let i = 0; i < rows; i++, pos += size) {
      const k = size === 1 ? v.getUint8(pos) : size === 2 ? v.getUint16(pos, true) : size === 4 ? v.getUint32(pos, true) : v.getUint32(pos, true) + v.getUint32(pos + 4, true) * 2 ** 32;
      out.push(keys[k]);
    }
    r.pos = pos;
  }
  return out;
}

/** A column as its blocks are found: numbers and number arrays counted first, then read into arrays of their size. */
interface Column {
  type: string;
  /** The number type of a number column, or of a number array column's items; undefined for a column of values. */
  number: string | undefined;
  array: boolean;
  rows: number;
  items: number;
  values: unknown[];
}

/** Where a block's numbers (or number arrays) of a column lie: read once the column's size is known. */
interface Part {
  column: Column;
  pos: number;
  rows: number;
}

/**
 * The Native output of a SELECT by column (Columns). In two passes: the first finds each
 * block's columns and reads the columns of values (strings, enums...), the second reads the
 * numbers straight into arrays of their final size. An aggregation's output is hundreds of
 * small blocks (one per bucket of its hash table); arrays grown as they come were copied,
 * and new memory costs a page fault per page on first touch.
 */
export function readNativeColumns(buf: Buffer): Columns {
  const r = new Cursor(buf);
  const found = new Map<string, Column>();
  const parts: Part[] = [];
  let length = 0;
  while (r.pos < buf.length) {
    const n = r.varUInt();
    const rows = r.varUInt();
    for (let i = 0; i < n; i++) {
      const name = r.string();
      const type = r.string();
      let c = found.get(name);
      if (!c) {
        const item = /^Array\((.*)\)$/.exec(type)?.[1];
        const itemNumber = item === undefined ? undefined : numberType(item);
        c = { type, number: numberType(type) ?? itemNumber, array: itemNumber !== undefined, rows: 0, items: 0, values: [] };
        found.set(name, c);
      } else if (c.type !== type) throw new Error(`Native: column ${name} is ${c.type} in one block and ${type} in another`);
      // A block of no rows has no data at all, not even the columns' prefixes.
      if (rows === 0) continue;
      readPrefix(r, type);
      if (c.number === undefined) {
        for (const x of readValues(r, type, rows)) c.values.push(x);
        continue;
      }
      parts.push({ column: c, pos: r.pos, rows });
      const size = NUMBER_BYTES[c.number]!;
      if (c.array) {
        // Each row's end among the block's items, then the items.
        const items = rows === 0 ? 0 : r.view.getUint32(r.pos + 8 * (rows - 1), true) + r.view.getUint32(r.pos + 8 * rows - 4, true) * 2 ** 32;
        r.pos += 8 * rows + size * items;
        c.items += items;
      } else r.pos += size * rows;
      c.rows += rows;
    }
    length += rows;
  }
  if (r.pos !== buf.length) throw new Error('Native: output ends inside a block');
  const numbers = new Map<Column, Float64Array>();
  const arrays = new Map<Column, Float64ArrayColumn>();
  const at = new Map<Column, { row: number; item: number }>();
  for (const c of found.values()) {
    if (c.number === undefined) continue;
    if (c.array) arrays.set(c, { offsets: new Uint32Array(c.rows + 1), values: new Float64Array(c.items) });
    else numbers.set(c, new Float64Array(c.rows));
    at.set(c, { row: 0, item: 0 });
  }
  for (const { column: c, pos, rows } of parts) {
    const next = at.get(c)!;
    r.pos = pos;
    if (!c.array) readNumbers(r, c.number!, rows, numbers.get(c)!, next.row);
    else {
      const { offsets, values } = arrays.get(c)!;
      const v = r.view;
      const base = next.item;
      for (let i = 0; i < rows; i++, r.pos += 8) offsets[next.row + 1 + i] = base + v.getUint32(r.pos, true) + v.getUint32(r.pos + 4, true) * 2 ** 32;
      const items = offsets[next.row + rows]! - base;
      readNumbers(r, c.number!, items, values, base);
      next.item += items;
    }
    next.row += rows;
  }
  const columns = new Map<string, Float64Array | Float64ArrayColumn | unknown[]>();
  for (const [name, c] of found) columns.set(name, numbers.get(c) ?? arrays.get(c) ?? c.values);
  return { length, columns };
}

/** Column `name` of `c`, or undefined for any column of no rows: the engine writes no block, so no names, when there are none. */
function column(c: Columns, name: string): Float64Array | Float64ArrayColumn | unknown[] | undefined {
  const col = c.columns.get(name);
  if (col === undefined && c.length > 0) throw new Error(`Native: no column ${name} (${[...c.columns.keys()].join(', ')})`);
  return col;
}

/** A number column of `c`; an error if it is not one. */
export function numberColumn(c: Columns, name: string): Float64Array {
  const col = column(c, name) ?? new Float64Array(0);
  if (!(col instanceof Float64Array)) throw new Error(`Native: column ${name} is not of numbers`);
  return col;
}

/** An array-of-numbers column of `c`; an error if it is not one. */
export function float64ArrayColumn(c: Columns, name: string): Float64ArrayColumn {
  const col = column(c, name) ?? { offsets: Uint32Array.of(0), values: new Float64Array(0) };
  if (col instanceof Float64Array || Array.isArray(col)) throw new Error(`Native: column ${name} is not of arrays of numbers`);
  return col;
}

/** Another column of `c` (strings, enums by name), as readRowBinary reads its values. */
export function valueColumn<T>(c: Columns, name: string): T[] {
  const col = column(c, name) ?? [];
  if (!Array.isArray(col)) throw new Error(`Native: column ${name} is of numbers`);
  return col as T[];
}
