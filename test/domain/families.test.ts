// The metric families are declared once (domain/market/families/) and the rollup tables
// are created by numbered migrations (schemas/clickhouse/): these tests fail when the two
// drift apart, and check the Node-side merge against its definition.
import { expect } from 'chai';
import { mergePartials, outerSelect, partialSelect, rollupColumns, type Family } from '../../domain/market/families/family.ts';
import { FAMILIES, MM_FAMILIES, type BookPartial } from '../../domain/market/families/index.ts';
import { testStack } from '../support/stack.ts';

describe('metric families (domain/market/families)', () => {
  for (const family of [...Object.values(FAMILIES), ...Object.values(MM_FAMILIES)] as Family[]) {
    it(`${family.name}: the hour and day tables (and the open hour's, for the market's) hold exactly its aggregates, in order, with their types`, async () => {
      const { ch } = testStack().service.deps;
      const expected = [
        { name: 'exchange', type: 'LowCardinality(String)' },
        { name: 'pair', type: 'LowCardinality(String)' },
        ...(family.keys ?? []).map((name) => ({ name, type: 'UInt64' })),
        { name: 'bucket', type: "DateTime('UTC')" },
        ...family.aggregates.map((a) => ({ name: a.name, type: a.type })),
        { name: 'computed_at', type: "DateTime64(3, 'UTC')" },
      ];
      for (const table of [family.tables.hours, family.tables.days, ...(family.tables.open ? [family.tables.open] : [])]) {
        const columns = await ch.query<{ name: string; type: string }>(
          'SELECT name, type FROM system.columns WHERE database = currentDatabase() AND table = {table:String} ORDER BY position',
          { table },
        );
        expect(columns, table).to.deep.equal(expected);
      }
      expect(rollupColumns(family)).to.deep.equal(family.aggregates.map((a) => a.name));
    });

    it(`${family.name}: every minute expression and partial runs against its minute table`, async () => {
      const { ch } = testStack().service.deps;
      // On an empty slice of the tables: the SQL must be valid, whatever the data.
      for (const table of ['minutes', 'hours', 'days'] as const) {
        await ch.query(`SELECT ${partialSelect(family, table)} FROM {t:Identifier} WHERE 0`, { t: family.tables[table] });
      }
      const minuteSelect = family.aggregates.map((a) => a.minute).join(', ');
      await ch.query(`SELECT ${minuteSelect} FROM {t:Identifier} WHERE 0`, { t: family.tables.minutes, ...family.params });
    });
  }

  it('merges in SQL what Node merges, for rows of every family', async () => {
    const { ch } = testStack().service.deps;
    // Two partial rows per family, merged by the outer SELECT, against mergePartials.
    const book = (first: [string, number], tick: number | null) =>
      `SELECT 'x' AS exchange, 'A/B' AS pair, 0 AS b, toUInt64(2) AS minutes_p, toUInt64(3) AS samples_p, 1.5 AS mid_sum_p,
         (toDateTime64({f:String}, 3, 'UTC'), ${first[1]}) AS first_p, (toDateTime64({f:String}, 3, 'UTC'), 2.) AS last_p,
         CAST(${tick === null ? 'NULL' : tick} AS Nullable(Float64)) AS tick_min_p, toUInt64(1) AS depth_minutes_p,
         [1., 2.] AS bid_depth_sum_p, [1.] AS ask_depth_sum_p, [1., 1.] AS bid_count_sum_p, [0., 1.] AS ask_count_sum_p`;
    const rows = await ch.query<BookPartial>(
      `SELECT exchange, pair, b, ${outerSelect(FAMILIES.book)} FROM (${book(['', 3], null)} UNION ALL ${book(['', 1], 0.25)}) GROUP BY exchange, pair, b`,
      { f: '2026-01-05 10:00:00.000' },
    );
    const ms = Date.UTC(2026, 0, 5, 10);
    const one = (mid: number, tick: number | null): BookPartial => ({
      exchange: 'x', pair: 'A/B', b: 0, minutes: 2, samples: 3, mid_sum: 1.5, first: [ms, mid], last: [ms, 2], tick_min: tick, depth_minutes: 1,
      bid_depth_sum: [1, 2], ask_depth_sum: [1], bid_count_sum: [1, 1], ask_count_sum: [0, 1],
    });
    expect(rows).to.have.length(1);
    expect(rows[0]).to.deep.equal(mergePartials(FAMILIES.book, one(3, null), one(1, 0.25)));
  });
});
