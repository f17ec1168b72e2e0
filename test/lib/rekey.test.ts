// A new sort key, granularity or partition key for a stored table (lib/rekey.ts, the
// market tables' migrations 005 and 006): every row moved, the table's engine, TTL and
// settings kept, and a run that a crash cut short, before or after the swap, mended by the
// next. Also the migration runner's modules (lib/migrate.ts), and the market tables of a
// new store already in the shape the migrations move old ones to.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { migrate } from '../../lib/migrate.ts';
import { silentLogger } from '../../lib/log.ts';
import { batches, rekeyTable, spareOf, tableShape, type Rekey } from '../../lib/rekey.ts';
import { MARKET_REKEYS } from '../../schemas/clickhouse/005_market_pair_order.ts';
import { MARKET_REPARTITIONS } from '../../schemas/clickhouse/006_market_day_partitions.ts';
import { KEEP_HIGHEST, keepHighestMark } from '../../schemas/clickhouse/009_rollup_marks_keep_highest.ts';
import { uniq } from '../support/helpers.ts';
import { testStack } from '../support/stack.ts';

const OLD = { orderBy: 'toStartOfHour(minute), exchange, pair, minute', indexGranularity: 1024 };
const NEW = { orderBy: 'toStartOfHour(minute), pair, exchange, minute', indexGranularity: 256 };

describe('rekeying a stored table', () => {
  const ch = () => testStack().service.deps.ch;
  const made: string[] = [];
  after(async () => {
    for (const t of made) {
      await ch().command('DROP TABLE IF EXISTS {t:Identifier} SYNC', { t });
      await ch().command('DROP TABLE IF EXISTS {t:Identifier} SYNC', { t: spareOf(t) });
    }
  });

  /** A minute table in the old shape, with rows of three pairs over `hours` hours. */
  async function oldTable(hours = 5): Promise<{ table: string; rows: number }> {
    const table = uniq('rekey_t');
    made.push(table);
    await ch().command(`CREATE TABLE {t:Identifier} (
        exchange LowCardinality(String), pair LowCardinality(String), minute DateTime('UTC'), v Float64, closed_at DateTime64(3, 'UTC')
      ) ENGINE = ReplacingMergeTree(closed_at) PARTITION BY toYYYYMM(minute)
      ORDER BY (toStartOfHour(minute), exchange, pair, minute)
      TTL minute + toIntervalDay(3650)
      SETTINGS index_granularity = 1024, non_replicated_deduplication_window = 10000`, { t: table });
    const start = Date.UTC(2026, 9, 31, 22) / 1000; // over a month's end: two partitions
    const rows = [];
    for (let m = 0; m < hours * 60; m += 7)
      for (const [i, [exchange, pair]] of [['ex1', 'AAA/USDT'], ['ex0', 'AAA/USDT'], ['ex1', 'BBB/USD']].entries())
        rows.push({ exchange, pair, minute: start + m * 60, v: m + i / 10, closed_at: (start + m * 60) * 1000 });
    await ch().insert(table, rows);
    return { table, rows: rows.length };
  }

  const contents = (table: string) =>
    ch().query<{ exchange: string; pair: string; minute: string; v: number }>(
      'SELECT exchange, pair, toString(minute) AS minute, v FROM {t:Identifier} FINAL ORDER BY exchange, pair, minute',
      { t: table },
    );
  const count = async (table: string) => Number((await ch().query<{ n: string }>('SELECT count() AS n FROM {t:Identifier}', { t: table }))[0]!.n);
  const exists = async (table: string) =>
    (await ch().query('SELECT 1 FROM system.tables WHERE database = currentDatabase() AND name = {t:String}', { t: table })).length > 0;

  it('moves every row to the new key and granularity, keeping the engine, TTL and settings', async () => {
    const { table, rows } = await oldTable();
    const before = await contents(table);
    const r: Rekey = { table, from: OLD, to: NEW, batchRows: 200 };
    expect(await rekeyTable(ch(), silentLogger, r)).to.equal(true);
    const after = await tableShape(ch(), table);
    expect(after!.shape).to.deep.equal({ ...NEW, partitionBy: 'toYYYYMM(minute)' });
    expect(after!.ddl).to.contain('ReplacingMergeTree(closed_at)').and.contain('PARTITION BY toYYYYMM(minute)');
    expect(after!.ddl).to.contain('TTL minute + toIntervalDay(3650)').and.contain('non_replicated_deduplication_window = 10000');
    expect(await count(table)).to.equal(rows);
    expect(await contents(table)).to.deep.equal(before);
    expect(await exists(spareOf(table))).to.equal(false);
    // Already moved: nothing to do, nothing changed.
    expect(await rekeyTable(ch(), silentLogger, r)).to.equal(false);
    expect(await count(table)).to.equal(rows);
  });

  it('copies every stored version of a row, in tables keyed by a month (a Date)', async () => {
    const table = uniq('rekey_d');
    made.push(table);
    await ch().command(`CREATE TABLE {t:Identifier} (
        exchange LowCardinality(String), pair LowCardinality(String), bucket DateTime('UTC'), v Float64, computed_at DateTime64(3, 'UTC')
      ) ENGINE = ReplacingMergeTree(computed_at) PARTITION BY toYear(bucket)
      ORDER BY (toStartOfMonth(bucket), exchange, pair, bucket) SETTINGS index_granularity = 1024`, { t: table });
    // Two versions of every row, in two parts nothing merges. The rekey compares the
    // copy's count with the table's, so a copy that merged the versions fails it.
    await ch().command(`SYSTEM STOP MERGES ${table}`);
    const start = Date.UTC(2026, 10, 1) / 1000;
    for (const version of [1, 2]) {
      const rows = [];
      for (let d = -40; d < 40; d += 3)
        for (const [exchange, pair] of [['ex1', 'AAA/USDT'], ['ex0', 'BBB/USDT']])
          rows.push({ exchange, pair, bucket: start + d * 86_400, v: d * version, computed_at: version });
      await ch().insert(table, rows);
    }
    const stored = await count(table);
    const final = () => ch().query('SELECT exchange, pair, toString(bucket) AS b, v FROM {t:Identifier} FINAL ORDER BY exchange, pair, b', { t: table });
    const before = await final();
    const to = { orderBy: 'toStartOfMonth(bucket), pair, exchange, bucket', indexGranularity: 256 };
    await rekeyTable(ch(), silentLogger, { table, from: { orderBy: 'toStartOfMonth(bucket), exchange, pair, bucket', indexGranularity: 1024 }, to, batchRows: 40 });
    expect((await tableShape(ch(), table))!.shape).to.deep.equal({ ...to, partitionBy: 'toYear(bucket)' });
    expect(await final()).to.deep.equal(before);
    expect(stored).to.equal(2 * before.length);
  });

  it('starts the copy again after a crash before the swap, without doubling a row', async () => {
    const { table, rows } = await oldTable();
    const before = await contents(table);
    // What a crash half-way through the copy leaves: a spare holding some of the rows.
    await ch().command(`CREATE TABLE ${spareOf(table)} AS ${table}`);
    await ch().command(`INSERT INTO {s:Identifier} SELECT * FROM {t:Identifier} LIMIT 50`, { s: spareOf(table), t: table });
    expect(await rekeyTable(ch(), silentLogger, { table, from: OLD, to: NEW })).to.equal(true);
    expect(await count(table)).to.equal(rows);
    expect(await contents(table)).to.deep.equal(before);
    expect((await tableShape(ch(), table))!.shape).to.include(NEW);
  });

  it('after a crash between the swap and the drop, only drops the old rows', async () => {
    const { table, rows } = await oldTable();
    await rekeyTable(ch(), silentLogger, { table, from: OLD, to: NEW });
    // The old table, swapped out and not yet dropped.
    await ch().command(`CREATE TABLE ${spareOf(table)} AS ${table}`);
    await ch().command(`INSERT INTO {s:Identifier} SELECT * FROM {t:Identifier}`, { s: spareOf(table), t: table });
    expect(await rekeyTable(ch(), silentLogger, { table, from: OLD, to: NEW })).to.equal(false);
    expect(await exists(spareOf(table))).to.equal(false);
    expect(await count(table)).to.equal(rows);
  });

  it('refuses a table in neither shape, changing nothing', async () => {
    const { table, rows } = await oldTable(1);
    const other = { orderBy: 'toStartOfHour(minute), exchange, minute, pair', indexGranularity: 1024 };
    let error: unknown;
    await rekeyTable(ch(), silentLogger, { table, from: other, to: NEW }).catch((e: unknown) => (error = e));
    expect(String(error)).to.match(/is sorted by \(toStartOfHour\(minute\), exchange, pair, minute\)/);
    expect((await tableShape(ch(), table))!.shape).to.include(OLD);
    expect(await count(table)).to.equal(rows);
    expect(await exists(spareOf(table))).to.equal(false);
  });

  it('groups whole time blocks into batches of about the rows asked for', () => {
    const blocks = [10, 20, 30, 40].map((b, i) => ({ b, rows: String([3, 3, 5, 1][i]) }));
    expect(batches(blocks, 6)).to.deep.equal([{ lo: 10, hi: 20, rows: 6 }, { lo: 30, hi: 40, rows: 6 }]);
    expect(batches(blocks, 4)).to.deep.equal([{ lo: 10, hi: 10, rows: 3 }, { lo: 20, hi: 20, rows: 3 }, { lo: 30, hi: 30, rows: 5 }, { lo: 40, hi: 40, rows: 1 }]);
    expect(batches([], 4)).to.deep.equal([]);
  });

  it('moves every row to a new partition key, keeping the sort key and every stored version', async () => {
    const { table, rows } = await oldTable();
    await ch().command(`SYSTEM STOP MERGES ${table}`);
    // A second version of some rows, in a part of its own.
    await ch().command(`INSERT INTO {t:Identifier} SELECT exchange, pair, minute, v + 1000, closed_at + 1 FROM {t:Identifier} WHERE v < 100`, { t: table });
    const stored = await count(table);
    const before = await contents(table);
    const from = { ...OLD, partitionBy: 'toYYYYMM(minute)' };
    const to = { ...OLD, partitionBy: 'toDate(minute)' };
    expect(await rekeyTable(ch(), silentLogger, { table, from, to, batchRows: 100 })).to.equal(true);
    const after = await tableShape(ch(), table);
    expect(after!.shape).to.deep.equal(to);
    expect(after!.ddl).to.contain('PARTITION BY toDate(minute)').and.contain('TTL minute + toIntervalDay(3650)');
    expect(await count(table)).to.equal(stored);
    expect(stored).to.be.greaterThan(rows);
    expect(await contents(table)).to.deep.equal(before);
    const partitions = await ch().query<{ p: string }>(
      'SELECT DISTINCT partition AS p FROM system.parts WHERE database = currentDatabase() AND table = {t:String} AND active ORDER BY p',
      { t: table },
    );
    // 22:00 on 31 October to 03:00 on 1 November: two days.
    expect(partitions.map((x) => x.p)).to.deep.equal(['2026-10-31', '2026-11-01']);
    // A table already partitioned so is left alone; one sorted otherwise is refused.
    expect(await rekeyTable(ch(), silentLogger, { table, from, to })).to.equal(false);
    let error: unknown;
    await rekeyTable(ch(), silentLogger, { table, from: { ...from, partitionBy: 'toYear(minute)' }, to: { ...to, partitionBy: 'toMonday(minute)' } }).catch((e: unknown) => (error = e));
    expect(String(error)).to.match(/partitioned by toDate\(minute\); expected .*toYear\(minute\)/);
  });

  it('a new store creates the market tables in the shape migrations 005 and 006 move old ones to', async () => {
    for (const r of MARKET_REKEYS) expect((await tableShape(ch(), r.table))!.shape, r.table).to.include(r.to);
    for (const r of MARKET_REPARTITIONS) {
      const now = (await tableShape(ch(), r.table))!;
      expect(now.shape, r.table).to.deep.equal(r.to);
      expect(now.ddl, r.table).to.contain('min_age_to_force_merge_seconds = 900').and.contain('min_age_to_force_merge_on_partition_only = 1');
    }
  });
});

describe('migration modules', () => {
  const ch = () => testStack().service.deps.ch;
  let dir: string;
  let table: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mm-migrations-'));
    table = uniq('migration_t');
  });
  after(async () => {
    fs.rmSync(dir, { recursive: true, force: true });
    await ch().command('DROP TABLE IF EXISTS {t:Identifier} SYNC', { t: table });
  });

  it("runs a module's up once, in order with the SQL files", async () => {
    // Versions far above the project's own, so its recorded migrations do not hide these.
    fs.writeFileSync(path.join(dir, '901_create.sql'), `CREATE TABLE IF NOT EXISTS ${table} (n UInt32) ENGINE = MergeTree ORDER BY n;\n`);
    fs.writeFileSync(
      path.join(dir, '902_fill.ts'),
      `export async function up(ch) { await ch.command('INSERT INTO ${table} VALUES (1)'); }\n`,
    );
    const rows = async () => Number((await ch().query<{ n: string }>('SELECT count() AS n FROM {t:Identifier}', { t: table }))[0]!.n);
    try {
      expect(await migrate(ch(), silentLogger, dir)).to.equal(2);
      expect(await rows()).to.equal(1);
      expect(await migrate(ch(), silentLogger, dir)).to.equal(0);
      expect(await rows()).to.equal(1);
    } finally {
      await ch().command('DELETE FROM schema_migrations WHERE version IN (901, 902)');
    }
  });
});

describe('rollup marks that keep the highest mark (migration 009)', () => {
  const ch = () => testStack().service.deps.ch;
  let table: string;
  before(() => {
    table = uniq('marks_t');
  });
  after(async () => {
    for (const t of [table, `${table}__highest`]) await ch().command('DROP TABLE IF EXISTS {t:Identifier} SYNC', { t });
  });
  const engine = async (t: string) =>
    (await ch().query<{ engine_full: string }>('SELECT engine_full FROM system.tables WHERE database = currentDatabase() AND name = {t:String}', { t }))[0]?.engine_full;
  const highest = (t: string) =>
    ch().query<{ source: string; through: string }>('SELECT source, toString(max(through)) AS through FROM {t:Identifier} GROUP BY source ORDER BY source', { t });

  it("moves a table of 007's engine to one whose merges keep each source's highest mark, once", async () => {
    // As 007 made it: a merge keeps the latest-written row, here a lower mark.
    await ch().command(
      `CREATE TABLE {t:Identifier} (source LowCardinality(String), through DateTime('UTC'), written_at DateTime64(3, 'UTC'))
       ENGINE = ReplacingMergeTree(written_at) ORDER BY source`,
      { t: table },
    );
    // Not merged before the migration copies it (a merge of 007's engine loses the highest mark
    // here, which nothing can bring back). SYSTEM takes no bound names; uniq() makes a word.
    await ch().command(`SYSTEM STOP MERGES ${table}`);
    const row = (source: string, through: string, writtenAt: string) => ({ source, through, written_at: writtenAt });
    await ch().insert(table, [row('a', '2026-01-06 10:00:00', '2026-01-06 10:03:00.000'), row('b', '2026-01-06 11:00:00', '2026-01-06 11:03:00.000')]);
    await ch().insert(table, [row('a', '2026-01-06 09:00:00', '2026-01-06 10:04:00.000')]);
    const want = [
      { source: 'a', through: '2026-01-06 10:00:00' },
      { source: 'b', through: '2026-01-06 11:00:00' },
    ];

    expect(await keepHighestMark(ch(), silentLogger, table)).to.equal(true);
    expect(await engine(table)).to.satisfy((e: string) => e.startsWith(KEEP_HIGHEST));
    expect(await highest(table)).to.deep.equal(want);
    // The same lower mark written later again, then merged: the highest stands.
    await ch().insert(table, [row('a', '2026-01-06 09:00:00', '2026-01-06 10:05:00.000')]);
    await ch().command('OPTIMIZE TABLE {t:Identifier} FINAL', { t: table });
    expect(await highest(table)).to.deep.equal(want);

    // A run cut short after the swap left the old table as the spare: the next only drops it.
    await ch().command(`CREATE TABLE {t:Identifier} (n UInt8) ENGINE = MergeTree ORDER BY n`, { t: `${table}__highest` });
    expect(await keepHighestMark(ch(), silentLogger, table)).to.equal(false);
    expect(await engine(`${table}__highest`)).to.equal(undefined);
    expect(await highest(table)).to.deep.equal(want);
  });

  it('has given the service\'s own rollup_marks that engine', async () => {
    expect(await engine('rollup_marks')).to.satisfy((e: string) => e.startsWith(KEEP_HIGHEST));
  });
});
