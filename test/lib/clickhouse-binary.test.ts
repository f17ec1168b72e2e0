// ClickHouse.queryBinary reads rows in the engine's binary format: they must be the rows
// query reads as JSON, whatever the types and values, so a read can move from one to the
// other without changing an answer. queryColumns reads the same by column.
import { expect } from 'chai';
import { testStack } from '../support/stack.ts';
import { float64ArrayColumn, numberColumn, valueColumn } from '../../lib/native-columns.ts';

describe('ClickHouse.queryBinary and queryColumns', () => {
  const strings = ['plain', 'quote " and backslash \\', 'ünïcödé ✓', ''];
  const sql = `SELECT arrayJoin(arrayEnumerate({s:Array(String)})) AS i, {s:Array(String)}[i] AS label, toLowCardinality(label) AS low,
      toUInt8(i) AS u8, toInt16(-i) AS i16, toUInt32(i * 4000000) AS u32, toUInt64(i) * 1000000000000 AS u64, toInt64(-i) * 1000000000000 AS i64,
      i / 3 AS f64, toFloat32(i / 4) AS f32, if(i = 2, nan, if(i = 3, inf, -inf)) AS odd, toDateTime(1700000000 + i, 'UTC') AS at, i % 2 = 0 AS even,
      if(i = 1, NULL, i * 1.5) AS maybe, range(i) AS ints, arrayMap(x -> x / 7, range(i)) AS floats, [(i, i / 2, toUInt64(i))] AS tuples,
      arrayMap(x -> toInt8(-x), range(i)) AS a_i8, arrayMap(x -> toUInt16(x * 1000), range(i)) AS a_u16, arrayMap(x -> toInt16(-x * 1000), range(i)) AS a_i16,
      arrayMap(x -> toUInt32(x * 4000000), range(i)) AS a_u32, arrayMap(x -> toInt32(-x * 4000000), range(i)) AS a_i32, arrayMap(x -> toUInt64(x) * 1000000000000, range(i)) AS a_u64,
      arrayMap(x -> toFloat32(x / 4), range(i)) AS a_f32, [toFloat32(i), toFloat32(nan), toFloat32(-inf)] AS a_f32_odd,
      [[toString(i)], []] AS nested, CAST(if(i = 1, 'a''b', 'c'), 'Enum8(\\'a\\\\\\'b\\' = -1, \\'c\\' = 3)') AS e8, CAST('y', 'Enum16(\\'x\\' = 1000, \\'y\\' = 2000)') AS e16
    ORDER BY i`;

  it('reads the rows query reads, type for type', async () => {
    const ch = testStack().service.deps.ch;
    const json = await ch.query<Record<string, unknown>>(sql, { s: strings });
    const binary = await ch.queryBinary<Record<string, unknown>>(sql, { s: strings });
    expect(json).to.have.length(strings.length);
    // The JSON read gives booleans of `even`, dates as text: the binary read numbers for both.
    const comparable = (rows: Record<string, unknown>[]) => rows.map(({ at, even, ...rest }) => ({ ...rest, at: typeof at === 'number' ? at : Date.parse(`${String(at)}Z`) / 1000, even: Boolean(even) }));
    expect(comparable(binary)).to.deep.equal(comparable(json));
    expect(binary.map((r) => r.odd)).to.deep.equal([null, null, null, null]);
    expect(binary[0]!.maybe).to.equal(null);
    expect(binary.map((r) => r.e8)).to.deep.equal(["a'b", 'c', 'c', 'c']);
    expect(binary[0]!.e16).to.equal('y');
    expect(binary[1]!.label).to.equal(strings[1]);
  });

  it('reads many LowCardinality strings, repeated and of equal lengths, as the JSON read does', async () => {
    // More distinct values than the reader keeps, many of one length: kept ones are found
    // again, others (and those sharing a slot) read anew.
    const ch = testStack().service.deps.ch;
    // abcde and axcye: one length, and the same first, middle and last byte.
    const q = `SELECT number AS n, toLowCardinality(multiIf(number % 11 = 0, 'abcde', number % 11 = 1, 'axcye',
      concat('v', toString((number * 7919) % 700), if(number % 3 = 0, 'ü', '')))) AS s FROM numbers(5000) ORDER BY n`;
    const json = await ch.query<{ n: number | string; s: string }>(q);
    const binary = await ch.queryBinary<{ n: number; s: string }>(q);
    expect(binary.map((r) => r.s)).to.deep.equal(json.map((r) => r.s));
    expect(new Set(binary.map((r) => r.s)).size).to.be.greaterThan(700);
  });

  it('reads no rows as none', async () => {
    const ch = testStack().service.deps.ch;
    expect(await ch.queryBinary(`${sql} LIMIT 0`, { s: strings })).to.deep.equal([]);
    const none = await ch.queryColumns(`${sql} LIMIT 0`, { s: strings });
    expect(none.length).to.equal(0);
    // Every column of no rows is empty (the engine names none when it writes no row).
    expect([...numberColumn(none, 'u64')]).to.deep.equal([]);
    expect([...float64ArrayColumn(none, 'floats').offsets]).to.deep.equal([0]);
    expect(valueColumn(none, 'label')).to.deep.equal([]);
  });

  it('reads by column what it reads by row: numbers in typed arrays (NaN for none), number arrays in one array', async () => {
    const ch = testStack().service.deps.ch;
    const rows = await ch.queryBinary<Record<string, unknown>>(sql, { s: strings });
    const c = await ch.queryColumns(sql, { s: strings });
    expect(c.length).to.equal(rows.length);
    const orNaN = (v: unknown) => (v === null ? NaN : v);
    for (const name of ['i', 'u8', 'i16', 'u32', 'u64', 'i64', 'f64', 'f32', 'odd', 'at', 'even']) {
      expect([...numberColumn(c, name)], name).to.deep.equal(rows.map((r) => orNaN(r[name])));
    }
    for (const name of ['floats', 'ints', 'a_i8', 'a_u16', 'a_i16', 'a_u32', 'a_i32', 'a_u64', 'a_f32', 'a_f32_odd']) {
      const col = float64ArrayColumn(c, name);
      const items = rows.map((_, i) => [...col.values.subarray(col.offsets[i]!, col.offsets[i + 1]!)]);
      expect(items, name).to.deep.equal(rows.map((r) => (r[name] as (number | null)[]).map(orNaN)));
    }
    for (const name of ['label', 'low', 'maybe', 'tuples', 'nested', 'e8', 'e16']) {
      expect(valueColumn(c, name), name).to.deep.equal(rows.map((r) => r[name]));
    }
    expect(() => numberColumn(c, 'label')).to.throw(/not of numbers/);
    expect(() => valueColumn(c, 'nope')).to.throw(/no column nope/);
  });

  it('reads by column an output of many blocks as one: numbers, number arrays and strings joined in order', async () => {
    const ch = testStack().service.deps.ch;
    // Blocks of 700 rows; a LowCardinality column with a dictionary of its own per block.
    const q = `SELECT number AS n, toUInt16(number % 1000) AS u16, arrayMap(x -> (number + x) / 7, range(number % 5)) AS xs,
        arrayMap(x -> toUInt16(x * 3), range(number % 3)) AS us, toLowCardinality(concat('k', toString((number * 7919) % 1500))) AS low,
        toString(number % 13) AS text, if(number % 4 = 0, NULL, number / 2) AS maybe
      FROM numbers(5000) ORDER BY n SETTINGS max_block_size = 700`;
    const rows = await ch.queryBinary<Record<string, unknown>>(q);
    const c = await ch.queryColumns(q);
    expect(c.length).to.equal(5000);
    for (const name of ['n', 'u16']) expect([...numberColumn(c, name)], name).to.deep.equal(rows.map((r) => r[name]));
    for (const name of ['xs', 'us']) {
      const col = float64ArrayColumn(c, name);
      expect(col.offsets).to.have.length(5001);
      expect(
        rows.map((_, i) => [...col.values.subarray(col.offsets[i]!, col.offsets[i + 1]!)]),
        name,
      ).to.deep.equal(rows.map((r) => r[name]));
    }
    for (const name of ['low', 'text', 'maybe']) expect(valueColumn(c, name), name).to.deep.equal(rows.map((r) => r[name]));
    expect(new Set(valueColumn(c, 'low')).size).to.equal(1500);
  });

  it('reads a number array that is not finite by column as NaN', async () => {
    const ch = testStack().service.deps.ch;
    // Ordered: the two sides of a UNION ALL come in either order.
    const c = await ch.queryColumns('SELECT xs FROM (SELECT 1 AS k, [1.5, nan, inf, -inf] AS xs UNION ALL SELECT 2 AS k, [] AS xs) ORDER BY k');
    const xs = float64ArrayColumn(c, 'xs');
    expect([...xs.offsets]).to.deep.equal([0, 4, 4]);
    expect([...xs.values]).to.deep.equal([1.5, NaN, NaN, NaN]);
  });

  it('refuses a type it does not read, rather than misreading the rest', async () => {
    const ch = testStack().service.deps.ch;
    let error: unknown;
    try {
      await ch.queryBinary('SELECT toDecimal64(1.5, 2) AS d');
    } catch (e) {
      error = e;
    }
    expect(String(error)).to.match(/not supported: Decimal/);
  });
});
