// Reads market metrics for a set of pairs over a bucket plan. Each stored table answers the
// pieces of the plan it covers with the same partial aggregates (sums, counts, minima,
// maxima), the union is grouped by pair and bucket, and the endpoints turn partials into
// means and percentages — in Node for summary and leaderboard, in ClickHouse for the
// uptime rows (see uptimeSql). The SQL text is built only from the constants below; every
// value (pairs, times, levels, amounts, zone, column names) is bound.
import type { Readable } from 'node:stream';
import { TupleParam } from '@clickhouse/client';
import type { ClickHouse, Params } from '../../lib/clickhouse.ts';
import { LEVELS_BPS, UPTIME_AMOUNTS_USD, levelIndex, levelName } from '../../processors/metrics/levels.ts';
import type { WindowParams } from './params.ts';
import { timeColumnNames, timestampSql } from './timestamps.ts';
import type { Interval, Piece, Table } from './window.ts';

export interface PairRef {
  exchange: string;
  pair: string;
}

/** What summary and leaderboard read of the books: prices, tick, depth and level counts. */
export interface BookPartial {
  exchange: string;
  pair: string;
  b: number;
  minutes: number;
  samples: number;
  mid_sum: number;
  /** The window's first and last snapshot mids, and their times (epoch ms; to merge partials). */
  first_mid: number;
  first_ts: number;
  last_mid: number;
  last_ts: number;
  tick: number | null;
  depth_minutes: number;
  bid_depth: number[];
  ask_depth: number[];
  bid_count: number[];
  ask_count: number[];
}

export interface TradePartial {
  exchange: string;
  pair: string;
  b: number;
  trades: number;
  amount: number;
  notional: number;
  volume_usd: number;
  usd_trades: number;
}

export interface DerivativePartial {
  exchange: string;
  pair: string;
  b: number;
  funding_ts: number;
  funding: number;
  oi_ts: number;
  open_interest: number;
}

// Each endpoint reads only the columns it answers from: book rows are wide (arrays of 25
// levels, 125 depth-uptime counts, slippage), and reading them is most of a query's time.
export type Family = 'book' | 'trade' | 'derivative';

/** The minute table each family is written to, as market_writes names it. */
export const SOURCES: Record<Family, string> = { book: 'book_minutes', trade: 'trade_minutes', derivative: 'derivative_minutes' };

const TABLES: Record<Family, Record<Table, string>> = {
  book: { minutes: 'book_minutes', hours: 'book_hours', days: 'book_days' },
  trade: { minutes: 'trade_minutes', hours: 'trade_hours', days: 'trade_days' },
  derivative: { minutes: 'derivative_minutes', hours: 'derivative_hours', days: 'derivative_days' },
};

/**
 * Each table kind's start column and the time block that leads its sort key
 * (schemas/clickhouse/002, 003). A range on the start column alone does not narrow the
 * primary key here (the engine does not carry it through the block function), so every
 * range also bounds the block expression itself, which the key matches as written.
 */
const STORED: Record<Table, { start: string; block: string }> = {
  minutes: { start: 'minute', block: 'toStartOfHour' },
  hours: { start: 'bucket', block: 'toStartOfDay' },
  days: { start: 'bucket', block: 'toStartOfMonth' },
};

// Partial aggregates per stored row kind. Aliases end in _p so none shadows a column.
const BOOK_MINUTE_PARTIALS = `count() AS minutes_p, sum(samples) AS samples_p, sum(mid) AS mid_sum_p,
  min(first_mid) AS first_p, max(last_mid) AS last_p, min(tick) AS tick_p, countIf(depth_samples > 0) AS depth_minutes_p,
  sumForEach(bid_depth) AS bid_depth_p, sumForEach(ask_depth) AS ask_depth_p,
  sumForEach(bid_count) AS bid_count_p, sumForEach(ask_count) AS ask_count_p`;
const BOOK_ROLLUP_PARTIALS = `sum(minutes) AS minutes_p, sum(samples) AS samples_p, sum(mid_sum) AS mid_sum_p,
  min(first) AS first_p, max(last) AS last_p, min(tick_min) AS tick_p, sum(depth_minutes) AS depth_minutes_p,
  sumForEach(bid_depth_sum) AS bid_depth_p, sumForEach(ask_depth_sum) AS ask_depth_p,
  sumForEach(bid_count_sum) AS bid_count_p, sumForEach(ask_count_sum) AS ask_count_p`;
const BOOK_OUTER = `sum(minutes_p) AS minutes, sum(samples_p) AS samples, sum(mid_sum_p) AS mid_sum,
  tupleElement(min(first_p), 2) AS first_mid, toUnixTimestamp64Milli(tupleElement(min(first_p), 1)) AS first_ts,
  tupleElement(max(last_p), 2) AS last_mid, toUnixTimestamp64Milli(tupleElement(max(last_p), 1)) AS last_ts,
  min(tick_p) AS tick, sum(depth_minutes_p) AS depth_minutes,
  sumForEach(bid_depth_p) AS bid_depth, sumForEach(ask_depth_p) AS ask_depth,
  sumForEach(bid_count_p) AS bid_count, sumForEach(ask_count_p) AS ask_count`;

const TRADE_PARTIALS = `sum(trades) AS trades_p, sum(amount) AS amount_p, sum(notional) AS notional_p,
  sum(volume_usd) AS volume_p, sum(usd_trades) AS usd_trades_p`;
const TRADE_OUTER = `sum(trades_p) AS trades, sum(amount_p) AS amount, sum(notional_p) AS notional,
  sum(volume_p) AS volume_usd, sum(usd_trades_p) AS usd_trades`;

const DERIVATIVE_PARTIALS = `max(funding) AS funding_p, max(open_interest) AS oi_p`;
const DERIVATIVE_OUTER = `toUnixTimestamp64Milli(tupleElement(max(funding_p), 1)) AS funding_ts, tupleElement(max(funding_p), 2) AS funding,
  toUnixTimestamp64Milli(tupleElement(max(oi_p), 1)) AS oi_ts, tupleElement(max(oi_p), 2) AS open_interest`;

const PARTIALS: Record<Family, { minutes: string; rollup: string; outer: string }> = {
  book: { minutes: BOOK_MINUTE_PARTIALS, rollup: BOOK_ROLLUP_PARTIALS, outer: BOOK_OUTER },
  trade: { minutes: TRADE_PARTIALS, rollup: TRADE_PARTIALS, outer: TRADE_OUTER },
  derivative: { minutes: DERIVATIVE_PARTIALS, rollup: DERIVATIVE_PARTIALS, outer: DERIVATIVE_OUTER },
};

/**
 * The bucket of a row from its start `t` (DateTime, UTC), as epoch seconds, in zone {tz}.
 * Sub-day buckets are counted from local midnight.
 */
const BUCKET_EXPR: Record<Exclude<Interval, 'a' | 'c'>, string> = {
  '1m': 'toUnixTimestamp(t)',
  '5m': "toUnixTimestamp(toStartOfDay(t, {tz:String})) + intDiv(toUnixTimestamp(t) - toUnixTimestamp(toStartOfDay(t, {tz:String})), 300) * 300",
  '15m': "toUnixTimestamp(toStartOfDay(t, {tz:String})) + intDiv(toUnixTimestamp(t) - toUnixTimestamp(toStartOfDay(t, {tz:String})), 900) * 900",
  '30m': "toUnixTimestamp(toStartOfDay(t, {tz:String})) + intDiv(toUnixTimestamp(t) - toUnixTimestamp(toStartOfDay(t, {tz:String})), 1800) * 1800",
  '1h': "toUnixTimestamp(toStartOfDay(t, {tz:String})) + intDiv(toUnixTimestamp(t) - toUnixTimestamp(toStartOfDay(t, {tz:String})), 3600) * 3600",
  '4h': "toUnixTimestamp(toStartOfDay(t, {tz:String})) + intDiv(toUnixTimestamp(t) - toUnixTimestamp(toStartOfDay(t, {tz:String})), 14400) * 14400",
  '1d': 'toUnixTimestamp(toStartOfDay(t, {tz:String}))',
  '1w': 'toUnixTimestamp(toDateTime(toMonday(t, {tz:String}), {tz:String}))',
  '1M': 'toUnixTimestamp(toDateTime(toStartOfMonth(t, {tz:String}), {tz:String}))',
};

export interface MarketQuery {
  pairs: PairRef[];
  interval: Interval;
  zone: string;
  pieces: Piece[];
}

/**
 * One SELECT per stored table the plan reads, each giving exchange, pair, the bucket `b`
 * and the columns `select` writes for that table, from the table's pieces only.
 */
function sourcesSql(tables: Record<Table, string>, q: MarketQuery, params: Params, select: (table: Table) => string): { table: Table; sql: string }[] {
  const parts: { table: Table; sql: string }[] = [];
  for (const table of ['minutes', 'hours', 'days'] as const) {
    const pieces = q.pieces.filter((p) => p.table === table);
    if (pieces.length === 0) continue;
    const { start, block } = STORED[table];
    const k = table[0];
    params[`${k}_from`] = pieces.map((p) => p.from / 1000);
    params[`${k}_to`] = pieces.map((p) => p.to / 1000);
    params[`${k}_table`] = tables[table];
    // One index-usable range per piece: a min..max bound would read every row between
    // the window's two edge pieces.
    const ranges = pieces.map((p, i) => {
      const [f, t] = [`{${k}_f${i}:UInt32}`, `{${k}_t${i}:UInt32}`];
      params[`${k}_f${i}`] = p.from / 1000;
      params[`${k}_t${i}`] = p.to / 1000;
      return `(${block}(${start}) >= ${block}(toDateTime(${f}, 'UTC')) AND ${block}(${start}) <= ${block}(toDateTime(${t} - 1, 'UTC'))
        AND ${start} >= toDateTime(${f}, 'UTC') AND ${start} < toDateTime(${t}, 'UTC'))`;
    });
    params[`${k}_bucket`] = pieces.map((p) => p.bucket ?? 0);
    // `c`: the bucket index of the piece the row falls in (pieces of one bucket may be in
    // several tables; the outer GROUP BY joins them).
    const bucket =
      q.interval === 'a'
        ? '0'
        : q.interval === 'c'
          ? `{${k}_bucket:Array(UInt32)}[arrayFirstIndex((f, e) -> t >= f AND t < e, {${k}_from:Array(DateTime('UTC'))}, {${k}_to:Array(DateTime('UTC'))})]`
          : BUCKET_EXPR[q.interval];
    parts.push({
      table,
      sql: `WITH ${start} AS t SELECT exchange, pair, ${bucket} AS b, ${select(table)}
      FROM {${k}_table:Identifier} FINAL
      WHERE (exchange, pair) IN {pairs:Array(Tuple(String, String))} AND (${ranges.join(' OR ')})`,
    });
  }
  return parts;
}

/** The partials per pair and bucket `b`, unordered; undefined when no piece is left. */
function partialsSql(family: Family, q: MarketQuery, params: Params): string | undefined {
  const parts = sourcesSql(TABLES[family], q, params, (table) => (table === 'minutes' ? PARTIALS[family].minutes : PARTIALS[family].rollup));
  if (parts.length === 0) return undefined;
  // Each table's partials grouped on their own, then the union once more.
  return `SELECT exchange, pair, b, ${PARTIALS[family].outer} FROM (${parts.map((x) => `${x.sql} GROUP BY exchange, pair, b`).join('\nUNION ALL\n')})
    GROUP BY exchange, pair, b`;
}

function baseParams(q: MarketQuery): Params {
  return { pairs: q.pairs.map((p) => new TupleParam([p.exchange, p.pair])), tz: q.zone };
}

const HOUR_MS = 3_600_000;

// Ordered here, by bytes: cheaper than in Node, and the order responses list rows in.
const ROW_ORDER = 'ORDER BY exchange, pair, b';

export type UptimeKind = 'spread' | 'depth';

/** An uptime endpoint's rows: the caller's pairs (with their assets), levels, amounts, window. */
export interface UptimeQuery {
  kind: UptimeKind;
  pairs: (PairRef & { asset: string })[];
  window: WindowParams;
  levels: number[];
  /** Depth uptime: the amounts asked, in column order. */
  amounts?: number[];
}

/** Per fixed interval, the stored table whose rows are exactly its buckets. */
const EXACT_TABLE: Partial<Record<Interval, Table>> = { '1m': 'minutes', '1h': 'hours', '1d': 'days' };

/**
 * The uptime columns asked for (specification 2.6, in row order) and their counts of up
 * minutes, as one array a stored row: from a minute row its up flags, from a rollup row
 * its counts. One array rather than a column per count: the SQL names 25 (or 125) fewer
 * expressions at each level of the query, which took the engine about 10 ms to parse and
 * plan, and a rollup asked for all its counts passes its own array on untouched.
 */
interface UptimeCounts {
  names: string[];
  minute: (params: Params) => string;
  /** Undefined when rollups do not hold them (depth uptime at amounts other than the standard five). */
  rollup?: (params: Params) => string;
}

/** The elements `at` (1-based) of a rollup's count array, or the array itself when that is all of it. */
function rollupCounts(column: string, at: number[], length: number, params: Params): string {
  if (at.length === length && at.every((x, i) => x === i + 1)) return column;
  params.up_at = at;
  return `arrayMap(i -> ${column}[i], {up_at:Array(UInt32)})`;
}

function uptimeCounts(q: UptimeQuery): UptimeCounts {
  if (q.kind === 'spread') {
    // Up in a minute: the minute's widest spread within L (processors/metrics/book.ts).
    return {
      names: q.levels.map((l) => `${levelName(l)}bps`),
      minute: (params) => {
        params.up_levels = q.levels;
        return 'arrayMap(l -> toUInt64(spread_bps_max <= l), {up_levels:Array(Float64)})';
      },
      rollup: (params) => rollupCounts('spread_up', q.levels.map((l) => levelIndex(l) + 1), LEVELS_BPS.length, params),
    };
  }
  // Up in a minute: the minute's least depth within L above the amount on both sides.
  // Rollups count the standard amounts, amount-major, 25 levels each.
  const columns = (q.amounts ?? [...UPTIME_AMOUNTS_USD]).flatMap((a) => q.levels.map((l) => ({ a, l, standard: (UPTIME_AMOUNTS_USD as readonly number[]).indexOf(a) })));
  return {
    names: columns.map(({ a, l }) => `${levelName(a)}_at_${levelName(l)}bps`),
    minute: (params) => {
      params.up_index = columns.map(({ l }) => levelIndex(l) + 1);
      params.up_amounts = columns.map(({ a }) => a);
      // Out of range (a book with fewer levels stored) reads 0: not up.
      return 'arrayMap((i, a) -> toUInt64(min_depth[i] > a), {up_index:Array(UInt32)}, {up_amounts:Array(Float64)})';
    },
    rollup: columns.every((c) => c.standard >= 0)
      ? (params) =>
          rollupCounts(
            'depth_up',
            columns.map(({ l, standard }) => standard * LEVELS_BPS.length + levelIndex(l) + 1),
            UPTIME_AMOUNTS_USD.length * LEVELS_BPS.length,
            params,
          )
      : undefined,
  };
}

/** The columns of an uptime row, in order. */
function uptimeColumnNames(q: UptimeQuery, counts: UptimeCounts): string[] {
  const head = q.kind === 'spread' ? ['asset', 'exchange', 'pair', 'mid_price'] : ['asset', 'exchange', 'pair'];
  return [...head, ...timeColumnNames(q.window), ...counts.names];
}

/**
 * The uptime rows themselves, computed by ClickHouse: uptime = 100 x up minutes / minutes
 * with data (addendum 4), mid_price = mean mid, the time columns of timestamps.ts, one row
 * per pair and bucket with data. These responses run to 50,000 rows of 30 columns and
 * more; written by ClickHouse, they skip parsing partials and building and serialising
 * rows in Node, which took twice as long as the query (docs/benchmarks.md). For the same
 * reason the stored rows are aggregated once, not per table and again over the union.
 * `sql` is undefined when there is nothing to read (no pairs, or no piece left).
 */
function uptimeSql(q: UptimeQuery, params: Params, opts: { keyed?: boolean } = {}): { sql: string | undefined; columns: string[] } {
  const counts = uptimeCounts(q);
  const columns = uptimeColumnNames(q, counts);
  if (q.pairs.length === 0) return { sql: undefined, columns };
  // Counts the rollups do not hold are counted from minutes (routes guard the span).
  const fromMinutes = !counts.rollup;
  const base: MarketQuery = {
    pairs: q.pairs,
    interval: q.window.interval,
    zone: q.window.zone,
    pieces: fromMinutes ? q.window.plan.pieces.map((p) => ({ ...p, table: 'minutes' as const })) : q.window.plan.pieces,
  };
  Object.assign(params, baseParams(base));
  const mid = q.kind === 'spread';
  const sources = sourcesSql(
    TABLES.book,
    base,
    params,
    (table) =>
      [
        table === 'minutes' ? 'toUInt64(1) AS n' : 'minutes AS n',
        ...(mid ? [table === 'minutes' ? 'mid AS m' : 'mid_sum AS m'] : []),
        `${table === 'minutes' ? counts.minute(params) : counts.rollup!(params)} AS u`,
      ].join(', '),
  );
  if (sources.length === 0) return { sql: undefined, columns };
  params.row_keys = q.pairs.map((p) => `${p.exchange}\u0000${p.pair}`);
  params.row_assets = q.pairs.map((p) => p.asset);
  params.row_ranks = rowRanks(q.pairs);
  // Rows of the table whose rows are the buckets themselves (hour rows for 1h buckets...)
  // are whole buckets: tiling gives a bucket to one such row or to finer rows only, and
  // FINAL leaves one row per pair. They skip the GROUP BY, most of a 1h answer's rows.
  const exact = EXACT_TABLE[q.window.interval];
  const whole = sources.filter((x) => x.table === exact);
  const pieces = sources.filter((x) => x.table !== exact);
  const rows = [
    ...(pieces.length > 0
      ? [`SELECT exchange, pair, b, sum(n) AS minutes${mid ? ', sum(m) AS mid_sum' : ''}, sumForEach(u) AS up
          FROM (${pieces.map((x) => x.sql).join('\nUNION ALL\n')}) GROUP BY exchange, pair, b`]
      : []),
    ...whole.map((x) => `SELECT exchange, pair, b, n AS minutes${mid ? ', m AS mid_sum' : ''}, u AS up FROM (${x.sql})`),
  ];
  const key = 'concat(exchange, char(0), pair)';
  const items = [
    `transform(${key}, {row_keys:Array(String)}, {row_assets:Array(String)}, '') AS \`asset\``,
    'exchange',
    'pair',
    ...(mid ? ['mid_sum / minutes AS `mid_price`'] : []),
    ...[timestampSql(q.window, params)].filter((x) => x !== ''),
    ...counts.names.map((name, i) => {
      params[`col_${i}`] = name;
      return `100 * (up[${i + 1}] / minutes) AS {col_${i}:Identifier}`;
    }),
  ];
  if (opts.keyed) {
    // Rows keyed by the pair's index in q.pairs and the bucket, in no order: the caller
    // puts them in order (api/market/uptime.ts).
    params.row_index = q.pairs.map((_, i) => i);
    return {
      sql: `SELECT transform(${key}, {row_keys:Array(String)}, {row_index:Array(UInt32)}, 0) AS ${UPTIME_KEYS[0]}, b AS ${UPTIME_KEYS[1]}, ${items.join(',\n  ')}
        FROM (${rows.join('\nUNION ALL\n')}) WHERE minutes > 0`,
      columns,
    };
  }
  // The pairs' ranks in (exchange, pair) order: a number sorts faster than two strings.
  return {
    sql: `SELECT ${items.join(',\n  ')} FROM (${rows.join('\nUNION ALL\n')}) WHERE minutes > 0
      ORDER BY transform(${key}, {row_keys:Array(String)}, {row_ranks:Array(UInt32)}, 0), b`,
    columns,
  };
}

/** The key columns of keyed uptime rows: the pair's index in the query's pairs, the bucket (epoch s). */
const UPTIME_KEYS = ['row_pair', 'row_bucket'] as const;

/** One uptime row of a keyed answer: its JSON object is `text` from `start` to `end`. */
export interface UptimeLine {
  pair: number;
  bucket: number;
  start: number;
  end: number;
}

/** Each pair's rank in (exchange, pair) order, compared as bytes the way ClickHouse compares strings. */
export function rowRanks(pairs: PairRef[]): number[] {
  const bytes = pairs.map((p, i) => ({ i, exchange: Buffer.from(p.exchange), pair: Buffer.from(p.pair) }));
  bytes.sort((x, y) => Buffer.compare(x.exchange, y.exchange) || Buffer.compare(x.pair, y.pair));
  const ranks = new Array<number>(pairs.length);
  bytes.forEach((x, rank) => (ranks[x.i] = rank));
  return ranks;
}

/** Partials per pair and bucket, ordered by exchange, pair and bucket; uptime rows. */
export class MarketRepository {
  constructor(private readonly ch: ClickHouse) {}

  async run<T extends { b: number }>(family: Family, q: MarketQuery): Promise<T[]> {
    if (q.pairs.length === 0) return [];
    const params = baseParams(q);
    const sql = partialsSql(family, q, params);
    if (!sql) return [];
    const rows = await this.ch.query<T>(`${sql} ${ROW_ORDER}`, params);
    for (const r of rows) r.b = Number(r.b);
    return rows;
  }

  book(q: MarketQuery): Promise<BookPartial[]> {
    return this.run<BookPartial>('book', q);
  }

  trades(q: MarketQuery): Promise<TradePartial[]> {
    return this.run<TradePartial>('trade', q);
  }

  derivatives(q: MarketQuery): Promise<DerivativePartial[]> {
    return this.run<DerivativePartial>('derivative', q);
  }

  /** Uptime rows as objects (for CSV), with their columns in order. */
  async uptimeRows(q: UptimeQuery): Promise<{ columns: string[]; rows: Record<string, unknown>[] }> {
    const params: Params = {};
    const { sql, columns } = uptimeSql(q, params);
    if (!sql) return { columns, rows: [] };
    return { columns, rows: await this.ch.query<Record<string, unknown>>(sql, params) };
  }

  /**
   * Uptime rows keyed by pair (index in q.pairs) and bucket start (epoch s), unordered, with
   * each row's JSON object as the endpoint writes it.
   */
  async uptimeLines(q: UptimeQuery): Promise<{ text: Buffer; lines: UptimeLine[] }> {
    const params: Params = {};
    const { sql, columns } = uptimeSql(q, params, { keyed: true });
    if (!sql) return { text: Buffer.alloc(0), lines: [] };
    const text = await this.ch.jsonLines(sql, [...UPTIME_KEYS], columns, params);
    const lines: UptimeLine[] = [];
    // `<pair>\t<bucket>\t{...}\n`: a JSON string escapes tabs and newlines, so these split
    // safely. The keys are read digit by digit: a string per key cost 1 µs a row.
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

  /**
   * How many times each hour of the families' data was written (schemas/clickhouse/004), per
   * family and hour start (epoch ms) in [from, to) widened to whole hours; hours never
   * written are absent.
   */
  async writes(families: Family[], from: number, to: number): Promise<Record<Family, Map<number, number>>> {
    const rows = await this.ch.query<{ source: string; hour: number; writes: number }>(
      `SELECT source, toUnixTimestamp(hour) AS hour, sum(writes) AS writes FROM market_writes
       WHERE source IN {sources:Array(String)} AND hour >= toDateTime({from:UInt32}, 'UTC') AND hour < toDateTime({to:UInt32}, 'UTC')
       GROUP BY source, hour`,
      { sources: families.map((f) => SOURCES[f]), from: Math.floor(from / HOUR_MS) * (HOUR_MS / 1000), to: Math.ceil(to / HOUR_MS) * (HOUR_MS / 1000) },
    );
    const out = { book: new Map(), trade: new Map(), derivative: new Map() } as Record<Family, Map<number, number>>;
    const family = Object.fromEntries(Object.entries(SOURCES).map(([f, s]) => [s, f as Family]));
    for (const r of rows) out[family[r.source]!].set(Number(r.hour) * 1000, Number(r.writes));
    return out;
  }

  /** Uptime rows as the response's JSON array, written by ClickHouse. */
  async uptimeJson(q: UptimeQuery): Promise<Readable | string> {
    const params: Params = {};
    const { sql, columns } = uptimeSql(q, params);
    if (!sql) return '[]';
    return this.ch.jsonArray(sql, columns, params);
  }
}
