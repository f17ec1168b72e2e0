// Giving a MergeTree table a new sort key, index granularity or partition key, which
// ClickHouse cannot ALTER: the rows are copied into a spare table of the new shape, a
// range of the key's leading time block at a time, counted, and the two tables are
// swapped in one step (EXCHANGE TABLES, an Atomic database's atomic rename). A crash before the swap leaves
// the table as it was, and the next run starts the copy again; after it, the table has its
// new shape and the next run only drops the old rows. Nothing may write the table
// meanwhile: migrations run before the processors start (ops/service.ts). The copy needs
// room for a second copy of the table while it runs.
import type { ClickHouse } from './clickhouse.ts';
import type { Logger } from './log.ts';

export interface TableShape {
  /** The sort key as system.tables writes it: `toStartOfHour(minute), exchange, pair, minute`. */
  orderBy: string;
  indexGranularity: number;
  /** The partition key as system.tables writes it (`toDate(minute)`); a shape without one takes any. */
  partitionBy?: string;
}

export interface Rekey {
  table: string;
  from: TableShape;
  to: TableShape;
  /** Rows copied by one INSERT ... SELECT at most (whole time blocks; a block may exceed it). */
  batchRows?: number;
}

const DEFAULT_BATCH_ROWS = 5_000_000;

/** The spare table a rekey copies into, and which holds the old rows after the swap. */
export const spareOf = (table: string): string => `${table}__rekey`;

/**
 * Moves the table to its new shape; false when it already had it. Throws, changing
 * nothing, when the table has neither shape: a key it does not know is not rewritten.
 */
export async function rekeyTable(ch: ClickHouse, log: Logger, r: Rekey): Promise<boolean> {
  if (!/^\w+$/.test(r.table)) throw new Error(`rekey: not a table name: ${JSON.stringify(r.table)}`);
  const spare = spareOf(r.table);
  const now = await tableShape(ch, r.table);
  if (!now) throw new Error(`rekey: no table ${r.table}`);
  // A spare left by a crash: before the swap, a partial copy; after it, the old rows.
  await ch.command('DROP TABLE IF EXISTS {t:Identifier} SYNC', { t: spare });
  if (sameShape(now.shape, r.to)) return false;
  if (!sameShape(now.shape, r.from)) {
    throw new Error(
      `rekey: ${r.table} is sorted by (${now.shape.orderBy}), index_granularity ${now.shape.indexGranularity}, partitioned by ${now.shape.partitionBy || 'nothing'}; expected (${r.from.orderBy}), ${r.from.indexGranularity}${r.from.partitionBy === undefined ? '' : `, ${r.from.partitionBy}`}`,
    );
  }
  await ch.command(spareDdl(now.ddl, now.shape.partitionBy, r), undefined, { idempotent: true });
  // No merges in either table while the rows are counted and copied: a merge of a
  // ReplacingMergeTree drops replaced versions, and the counts must be of the same rows.
  await setMerges(ch, [r.table, spare], 'STOP');
  let total = 0;
  try {
    total = await copyRows(ch, log, r, spare);
    const copied = await rowCount(ch, spare);
    if (copied !== total) throw new Error(`rekey: ${r.table} has ${total} rows, its copy ${copied}; the table is left as it was`);
  } finally {
    await setMerges(ch, [r.table, spare], 'START');
  }
  await ch.command('EXCHANGE TABLES {t:Identifier} AND {spare:Identifier}', { t: r.table, spare });
  await ch.command('DROP TABLE IF EXISTS {t:Identifier} SYNC', { t: spare });
  log.info('rekeyed a table', { table: r.table, rows: total });
  return true;
}

/** Copies every row of the table into the spare, a batch of time blocks at a time; returns how many. */
async function copyRows(ch: ClickHouse, log: Logger, r: Rekey, spare: string): Promise<number> {
  // The key's leading time block (e.g. toStartOfHour(minute)): a range of it is an
  // index-usable bound, so each batch reads its own rows only. Its values travel as the
  // engine writes them and come back as constants of the block's own type (Date or
  // DateTime('UTC')), which no time zone can shift.
  const block = r.from.orderBy.split(', ')[0]!;
  if (!/^\w+\(\w+\)$/.test(block)) throw new Error(`rekey: ${r.table}'s key does not lead with a time block such as toStartOfHour(minute): ${block}`);
  const blocks = await ch.query<{ b: string; rows: string }>(
    `SELECT toString(${block}) AS b, count() AS rows FROM {t:Identifier} GROUP BY ${block} ORDER BY ${block}`,
    { t: r.table },
  );
  const total = blocks.reduce((s, x) => s + Number(x.rows), 0);
  log.info('rekeying a table: copying its rows', { table: r.table, rows: total, orderBy: r.to.orderBy, indexGranularity: r.to.indexGranularity });
  let done = 0;
  for (const batch of batches(blocks, r.batchRows ?? DEFAULT_BATCH_ROWS)) {
    // optimize_on_insert = 0: every stored version is copied, as the count expects.
    await ch.command(
      `INSERT INTO {spare:Identifier} SELECT * FROM {t:Identifier}
       WHERE ${block} >= {lo:String} AND ${block} <= {hi:String} SETTINGS optimize_on_insert = 0`,
      { spare, t: r.table, lo: batch.lo, hi: batch.hi },
    );
    done += batch.rows;
    log.info('rekeying a table', { table: r.table, copied: done, of: total });
  }
  return total;
}

/** Stops or starts background merges of the tables that exist. */
async function setMerges(ch: ClickHouse, tables: string[], what: 'STOP' | 'START'): Promise<void> {
  // SYSTEM statements take no bound identifiers; the names were checked to be words.
  for (const t of tables) if (await tableShape(ch, t)) await ch.command(`SYSTEM ${what} MERGES ${t}`);
}

/** A table's sort key, granularity, partition key and CREATE statement; undefined when there is none. */
export async function tableShape(ch: ClickHouse, table: string): Promise<{ shape: TableShape; ddl: string } | undefined> {
  const [row] = await ch.query<{ sorting_key: string; partition_key: string; create_table_query: string }>(
    'SELECT sorting_key, partition_key, create_table_query FROM system.tables WHERE database = currentDatabase() AND name = {t:String}',
    { t: table },
  );
  if (!row) return undefined;
  const granularity = /\bindex_granularity = (\d+)/.exec(row.create_table_query)?.[1];
  return { shape: { orderBy: row.sorting_key, indexGranularity: Number(granularity ?? 0), partitionBy: row.partition_key }, ddl: row.create_table_query };
}

const rowCount = async (ch: ClickHouse, table: string) =>
  Number((await ch.query<{ n: string }>('SELECT count() AS n FROM {t:Identifier}', { t: table }))[0]!.n);

/** Whether the table's shape `now` is the shape `want` (whose partition key, when it names none, is any). */
const sameShape = (now: TableShape, want: TableShape) =>
  now.orderBy === want.orderBy && now.indexGranularity === want.indexGranularity && (want.partitionBy === undefined || now.partitionBy === want.partitionBy);

/** The table's own CREATE statement (columns, engine, partitioning, TTL, settings) under the spare's name, in the new shape. */
function spareDdl(ddl: string, partitionBy: string | undefined, r: Rekey): string {
  const replaceOnce = (text: string, from: string, to: string) => {
    const at = text.indexOf(from);
    if (at < 0 || text.indexOf(from, at + 1) >= 0) throw new Error(`rekey: ${r.table}'s CREATE statement does not hold "${from}" exactly once`);
    return text.slice(0, at) + to + text.slice(at + from.length);
  };
  const head = /^CREATE TABLE (\S+) /.exec(ddl);
  if (!head || !(head[1] === r.table || head[1]!.endsWith(`.${r.table}`))) throw new Error(`rekey: unexpected CREATE statement of ${r.table}`);
  const out = `CREATE TABLE ${spareOf(r.table)} ${ddl.slice(head[0].length)}`;
  const keyed = replaceOnce(out, `ORDER BY (${r.from.orderBy})`, `ORDER BY (${r.to.orderBy})`);
  if (r.to.partitionBy !== undefined && !partitionBy) throw new Error(`rekey: ${r.table} has no partition key to replace`);
  const partitioned =
    r.to.partitionBy === undefined || r.to.partitionBy === partitionBy ? keyed : replaceOnce(keyed, `PARTITION BY ${partitionBy}`, `PARTITION BY ${r.to.partitionBy}`);
  return replaceOnce(partitioned, `index_granularity = ${r.from.indexGranularity}`, `index_granularity = ${r.to.indexGranularity}`);
}

/** Consecutive time blocks, in order, grouped into batches of about `maxRows` rows. */
export function batches<B>(blocks: readonly { b: B; rows: string | number }[], maxRows: number): { lo: B; hi: B; rows: number }[] {
  const out: { lo: B; hi: B; rows: number }[] = [];
  let cur: { lo: B; hi: B; rows: number } | undefined;
  for (const { b, rows } of blocks) {
    const n = Number(rows);
    if (cur && cur.rows + n > maxRows) {
      out.push(cur);
      cur = undefined;
    }
    if (cur) Object.assign(cur, { hi: b, rows: cur.rows + n });
    else cur = { lo: b, hi: b, rows: n };
  }
  if (cur) out.push(cur);
  return out;
}
