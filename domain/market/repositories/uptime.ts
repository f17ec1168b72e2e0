// The uptime endpoints' rows (specification 2.6), computed by ClickHouse: uptime = 100 x
// up minutes / minutes with data (addendum 4), mid_price = mean mid, the time columns of
// timestamps.ts, one row per pair and bucket with data. From a minute row its up flags
// count, from a rollup row its counts (families/book.ts: spread_up, depth_up). These
// answers run to tens of thousands of rows of 30 columns; written by ClickHouse they skip
// parsing partials and building rows in Node, and for the same reason the stored rows
// are aggregated once, not per table and again over the union.
import type { Readable } from 'node:stream';
import type { ClickHouse, Params } from '../../../lib/clickhouse.ts';
import { LEVELS_BPS, UPTIME_AMOUNTS_USD, levelIndex, levelName, type Interval } from '../facts.ts';
import { book } from '../families/book.ts';
import { timeColumnNames, timestampSql } from '../timestamps.ts';
import type { MarketWindow, Table } from '../window.ts';
import { pairParams, storedRows, type MarketQuery, type PairRef, type Sql } from './stored-rows.ts';

export type UptimeKind = 'spread' | 'depth';

/** An uptime endpoint's rows: the caller's pairs (with their assets), levels, amounts, window. */
export interface UptimeQuery {
  kind: UptimeKind;
  pairs: readonly (PairRef & { asset: string })[];
  window: MarketWindow;
  levels: readonly number[];
  /** Depth uptime: the amounts asked, in column order. */
  amounts?: readonly number[];
}

/**
 * The sum of a bucket's mids, in integers: the engine adds floats in the order its threads
 * and parts hand them over, which varies between two runs of one statement, and a bucket's
 * mean must come out the same to the last digit, or a row kept between requests
 * (api/market-caches/uptime-rows.ts) differs from the one computed again. Each mid is cut
 * to a multiple of 2^-60 (scaling by a power of two is exact), summed as an Int128 and
 * turned back into a float once: a mid of 1e-9 keeps 9 digits, one of 1e-6 12; sums stay
 * below 2^67 (1.5e20), a year of minutes at 1e14. Decimals would do the same at a
 * higher cost (docs/benchmarks.md, "Measurements behind the code").
 */
const TWO_TO_60 = '1152921504606846976';
const EXACT_MID_SUM = `toFloat64(sum(toInt128(m * ${TWO_TO_60}))) / ${TWO_TO_60}`;

/** Per fixed interval, the stored table whose rows are exactly its buckets. */
const EXACT_TABLE: Partial<Record<Interval, Table>> = { '1m': 'minutes', '1h': 'hours', '1d': 'days' };

/**
 * The uptime columns asked for (in row order) and their counts of up minutes, as one
 * array a stored row. One array rather than a column per count: the SQL names 25 (or 125)
 * fewer expressions at each level of the query, and a rollup asked for all its counts
 * passes its own array on untouched.
 */
interface UptimeCounts {
  names: string[];
  minute: Sql;
  /** Undefined when rollups do not hold them (depth uptime at amounts other than the standard ones). */
  rollup?: Sql;
}

/** The elements `at` (1-based) of a rollup's count array, or the array itself when that is all of it. */
function rollupCounts(column: string, at: number[], length: number): Sql {
  if (at.length === length && at.every((x, i) => x === i + 1)) return { text: column, params: {} };
  return { text: `arrayMap(i -> ${column}[i], {up_at:Array(UInt32)})`, params: { up_at: at } };
}

/** Whether depth-uptime counts at these amounts are kept by the rollups (else minutes are read). */
export const rolledUpAmounts = (amounts: readonly number[]): boolean => amounts.every((a) => (UPTIME_AMOUNTS_USD as readonly number[]).includes(a));

function uptimeCounts(q: UptimeQuery): UptimeCounts {
  if (q.kind === 'spread') {
    // Up in a minute: the minute's widest spread within L (as book.spread_up counts it).
    return {
      names: q.levels.map((l) => `${levelName(l)}bps`),
      minute: { text: 'arrayMap(l -> toUInt64(spread_bps_max <= l), {up_levels:Array(Float64)})', params: { up_levels: q.levels } },
      rollup: rollupCounts('spread_up', q.levels.map((l) => levelIndex(l) + 1), LEVELS_BPS.length),
    };
  }
  // Up in a minute: the minute's least depth within L above the amount on both sides (as
  // book.depth_up counts it, amount-major, every level of L for each standard amount).
  const columns = (q.amounts ?? [...UPTIME_AMOUNTS_USD]).flatMap((a) => q.levels.map((l) => ({ a, l, standard: (UPTIME_AMOUNTS_USD as readonly number[]).indexOf(a) })));
  return {
    names: columns.map(({ a, l }) => `${levelName(a)}_at_${levelName(l)}bps`),
    minute: {
      // Out of range (a book with fewer levels stored) reads 0: not up.
      text: 'arrayMap((i, a) -> toUInt64(min_depth[i] > a), {up_index:Array(UInt32)}, {up_amounts:Array(Float64)})',
      params: { up_index: columns.map(({ l }) => levelIndex(l) + 1), up_amounts: columns.map(({ a }) => a) },
    },
    rollup: columns.every((c) => c.standard >= 0)
      ? rollupCounts('depth_up', columns.map(({ l, standard }) => standard * LEVELS_BPS.length + levelIndex(l) + 1), UPTIME_AMOUNTS_USD.length * LEVELS_BPS.length)
      : undefined,
  };
}

/** The columns of an uptime row, in order. */
function uptimeColumnNames(q: UptimeQuery, counts: UptimeCounts): string[] {
  const head = q.kind === 'spread' ? ['asset', 'exchange', 'pair', 'mid_price'] : ['asset', 'exchange', 'pair'];
  return [...head, ...timeColumnNames(q.window), ...counts.names];
}

/** The key columns of keyed uptime rows: the pair's index in the query's pairs, the bucket (epoch s). */
const UPTIME_KEYS = ['row_pair', 'row_bucket'] as const;

/** `sql` is undefined when there is nothing to read (no pairs, or no piece left). */
function uptimeSql(q: UptimeQuery, opts: { keyed?: boolean } = {}): { sql: Sql | undefined; columns: string[] } {
  const counts = uptimeCounts(q);
  const columns = uptimeColumnNames(q, counts);
  if (q.pairs.length === 0) return { sql: undefined, columns };
  // Counts the rollups do not hold are counted from minutes (the endpoint bounds the span).
  const fromMinutes = !counts.rollup;
  const base: MarketQuery = {
    pairs: q.pairs,
    interval: q.window.interval,
    zone: q.window.zone,
    pieces: fromMinutes ? q.window.plan.pieces.map((p) => ({ ...p, table: 'minutes' as const })) : q.window.plan.pieces,
  };
  const mid = q.kind === 'spread';
  const sources = storedRows(book.tables, base, (table) =>
    [
      table === 'minutes' ? 'toUInt64(1) AS n' : 'minutes AS n',
      ...(mid ? [table === 'minutes' ? 'mid AS m' : 'mid_sum AS m'] : []),
      `${table === 'minutes' ? counts.minute.text : counts.rollup!.text} AS u`,
    ].join(', '),
  );
  if (sources.length === 0) return { sql: undefined, columns };
  const time = timestampSql(q.window);
  const params: Params = Object.assign(
    pairParams(base),
    ...sources.map((s) => s.sql.params),
    sources.some((s) => s.table === 'minutes') ? counts.minute.params : {},
    sources.some((s) => s.table !== 'minutes') ? counts.rollup!.params : {},
    time.params,
    {
      row_keys: q.pairs.map((p) => `${p.exchange}\u0000${p.pair}`),
      row_assets: q.pairs.map((p) => p.asset),
      row_ranks: rowRanks(q.pairs),
    },
  );
  // Rows of the table whose rows are the buckets themselves (hour rows for 1h buckets...)
  // are whole buckets: tiling gives a bucket to one such row or to finer rows only, and
  // FINAL leaves one row per pair. They skip the GROUP BY, most of a 1h answer's rows.
  const exact = EXACT_TABLE[q.window.interval];
  const whole = sources.filter((x) => x.table === exact);
  const pieces = sources.filter((x) => x.table !== exact);
  const rows = [
    ...(pieces.length > 0
      ? [`SELECT exchange, pair, b, sum(n) AS minutes${mid ? `, ${EXACT_MID_SUM} AS mid_sum` : ''}, sumForEach(u) AS up
          FROM (${pieces.map((x) => x.sql.text).join('\nUNION ALL\n')}) GROUP BY exchange, pair, b`]
      : []),
    ...whole.map((x) => `SELECT exchange, pair, b, n AS minutes${mid ? ', m AS mid_sum' : ''}, u AS up FROM (${x.sql.text})`),
  ];
  const key = 'concat(exchange, char(0), pair)';
  const items = [
    `transform(${key}, {row_keys:Array(String)}, {row_assets:Array(String)}, '') AS \`asset\``,
    'exchange',
    'pair',
    ...(mid ? ['mid_sum / minutes AS `mid_price`'] : []),
    ...[time.text].filter((x) => x !== ''),
    ...counts.names.map((name, i) => {
      params[`col_${i}`] = name;
      return `100 * (up[${i + 1}] / minutes) AS {col_${i}:Identifier}`;
    }),
  ];
  if (opts.keyed) {
    // Rows keyed by the pair's index in q.pairs and the bucket, in no order: the caller
    // puts them in order (api/market-caches/uptime-rows.ts).
    params.row_index = q.pairs.map((_, i) => i);
    return {
      sql: {
        text: `SELECT transform(${key}, {row_keys:Array(String)}, {row_index:Array(UInt32)}, 0) AS ${UPTIME_KEYS[0]}, b AS ${UPTIME_KEYS[1]}, ${items.join(',\n  ')}
        FROM (${rows.join('\nUNION ALL\n')}) WHERE minutes > 0`,
        params,
      },
      columns,
    };
  }
  // The pairs' ranks in (exchange, pair) order: a number sorts faster than two strings.
  return {
    sql: {
      text: `SELECT ${items.join(',\n  ')} FROM (${rows.join('\nUNION ALL\n')}) WHERE minutes > 0
      ORDER BY transform(${key}, {row_keys:Array(String)}, {row_ranks:Array(UInt32)}, 0), b`,
      params,
    },
    columns,
  };
}

/** One uptime row of a keyed answer: its JSON object is `text` from `start` to `end`. */
export interface UptimeLine {
  pair: number;
  bucket: number;
  start: number;
  end: number;
}

/** Each pair's rank in (exchange, pair) order, compared as bytes the way ClickHouse compares strings. */
export function rowRanks(pairs: readonly PairRef[]): number[] {
  const bytes = pairs.map((p, i) => ({ i, exchange: Buffer.from(p.exchange), pair: Buffer.from(p.pair) }));
  bytes.sort((x, y) => Buffer.compare(x.exchange, y.exchange) || Buffer.compare(x.pair, y.pair));
  const ranks = new Array<number>(pairs.length);
  bytes.forEach((x, rank) => (ranks[x.i] = rank));
  return ranks;
}

export class UptimeRepository {
  constructor(private readonly ch: ClickHouse) {}

  /** Uptime rows as objects (for CSV), with their columns in order. */
  async rows(q: UptimeQuery): Promise<{ columns: string[]; rows: Record<string, unknown>[] }> {
    const { sql, columns } = uptimeSql(q);
    if (!sql) return { columns, rows: [] };
    return { columns, rows: await this.ch.query<Record<string, unknown>>(sql.text, sql.params) };
  }

  /** Uptime rows as the response's JSON array, written by ClickHouse. */
  async json(q: UptimeQuery): Promise<Readable | string> {
    const { sql, columns } = uptimeSql(q);
    if (!sql) return '[]';
    return this.ch.jsonArray(sql.text, columns, sql.params);
  }

  /**
   * Uptime rows keyed by pair (index in q.pairs) and bucket start (epoch s), unordered, with
   * each row's JSON object as the endpoint writes it.
   */
  async lines(q: UptimeQuery): Promise<{ text: Buffer; lines: UptimeLine[] }> {
    const { sql, columns } = uptimeSql(q, { keyed: true });
    if (!sql) return { text: Buffer.alloc(0), lines: [] };
    const text = await this.ch.jsonLines(sql.text, [...UPTIME_KEYS], columns, sql.params);
    const lines: UptimeLine[] = [];
    // `<pair>\t<bucket>\t{...}\n`: a JSON string escapes tabs and newlines, so these split
    // safely. The keys are read digit by digit, not as a string per key.
    for (let at = 0; at < text.length; ) {
      if (text[at] === 10) {
        at++;
        continue;
      }
      let pair = 0;
      for (let c = text[at++]; c !== 9 && c !== undefined; c = text[at++]) pair = pair * 10 + c - 48;
      let bucket = 0;
      for (let c = text[at++]; c !== 9 && c !== undefined; c = text[at++]) bucket = bucket * 10 + c - 48;
      let end = text.indexOf(10, at);
      if (end < 0) end = text.length;
      lines.push({ pair, bucket, start: at, end });
      at = end + 1;
    }
    return { text, lines };
  }
}
