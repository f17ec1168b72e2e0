// Reading a window's pieces from the stored minute, open-hour, hour and day rows (window.ts
// plans them): one SELECT per table, each giving exchange, pair, the bucket `b` and the columns
// the caller asks of that table's rows. Shared by the partial and the uptime reads. The
// SQL text is built from constants only; every value is bound, and each call returns the
// values it binds rather than writing into a caller's object.
import { TupleParam } from '@clickhouse/client';
import type { Params } from '../../../lib/clickhouse.ts';
import type { Interval } from '../facts.ts';
import type { Piece, Table } from '../window.ts';

export interface PairRef {
  exchange: string;
  pair: string;
}

/** A read of pairs over pieces, bucketed by an interval in a zone. */
export interface MarketQuery {
  pairs: readonly PairRef[];
  interval: Interval;
  zone: string;
  pieces: readonly Piece[];
}

/** SQL text and the values it binds. */
export interface Sql {
  text: string;
  params: Params;
}

/**
 * Each table kind's start column and the time block that leads its sort key
 * (schemas/clickhouse/002, 003). A range on the start column alone does not narrow the
 * primary key here (the engine does not carry it through the block function), so every
 * range also bounds the block expression itself, which the key matches as written.
 */
const STORED: Record<Exclude<Table, 'open'>, { start: string; block: string }> = {
  minutes: { start: 'minute', block: 'toStartOfHour' },
  hours: { start: 'bucket', block: 'toStartOfDay' },
  days: { start: 'bucket', block: 'toStartOfMonth' },
};

/**
 * The bucket of a row from its start `t` (DateTime, UTC), as epoch seconds, in zone {tz}.
 * Sub-day buckets are counted from local midnight.
 */
const subDay = (seconds: number) => (t: string) =>
  `toUnixTimestamp(toStartOfDay(${t}, {tz:String})) + intDiv(toUnixTimestamp(${t}) - toUnixTimestamp(toStartOfDay(${t}, {tz:String})), ${seconds}) * ${seconds}`;
const BUCKET_EXPR: Record<Exclude<Interval, 'a' | 'c'>, (t: string) => string> = {
  '1m': (t) => `toUnixTimestamp(${t})`,
  '5m': subDay(300),
  '15m': subDay(900),
  '30m': subDay(1800),
  '1h': subDay(3600),
  '4h': subDay(14400),
  '1d': (t) => `toUnixTimestamp(toStartOfDay(${t}, {tz:String}))`,
  '1w': (t) => `toUnixTimestamp(toDateTime(toMonday(${t}, {tz:String}), {tz:String}))`,
  '1M': (t) => `toUnixTimestamp(toDateTime(toStartOfMonth(${t}, {tz:String}), {tz:String}))`,
};

/** The bucket start (epoch s, in zone {tz:String}) of a time `t` (an SQL expression, the column `t` by default), for the fixed intervals. */
export function bucketOf(interval: Exclude<Interval, 'a' | 'c'>, t = 't'): string {
  return BUCKET_EXPR[interval](t);
}

/** The values every stored-row read binds: the pairs and the bucket zone. */
export function pairParams(q: Pick<MarketQuery, 'pairs' | 'zone'>): Params {
  return { pairs: q.pairs.map((p) => new TupleParam([p.exchange, p.pair])), tz: q.zone };
}

/**
 * One SELECT per stored table the plan reads, each of the table's pieces only. `tables`
 * names the family's tables; `select` writes the columns of a table's rows. A family with
 * series (Family.keys) also selects its key columns, and `where` narrows the rows further
 * (the wallets a caller may see).
 */
export function storedRows(
  tables: { minutes: string; hours: string; days: string; open?: string },
  q: MarketQuery,
  select: (table: Table) => string,
  opts: { keys?: readonly string[]; where?: Sql } = {},
): { table: Table; sql: Sql }[] {
  const parts: { table: Table; sql: Sql }[] = [];
  for (const table of ['minutes', 'open', 'hours', 'days'] as const) {
    const pieces = q.pieces.filter((p) => p.table === table);
    if (pieces.length === 0) continue;
    const name = tables[table];
    if (name === undefined) throw new Error(`${tables.minutes} has no rows of the open hour: plan its windows with whole hours rolled up`);
    const k = table[0];
    const params: Params = {
      [`${k}_from`]: pieces.map((p) => p.from / 1000),
      [`${k}_to`]: pieces.map((p) => p.to / 1000),
      [`${k}_table`]: name,
      [`${k}_bucket`]: pieces.map((p) => p.bucket ?? 0),
    };
    // An open-hour row starts at its hour and is found by its mark, the piece's end
    // (schemas/clickhouse/008, which leads the sort key with it).
    const start = table === 'open' ? 'toStartOfHour(bucket)' : STORED[table].start;
    const ranges = pieces.map((p, i) => {
      const [f, t] = [`{${k}_f${i}:UInt32}`, `{${k}_t${i}:UInt32}`];
      params[`${k}_f${i}`] = p.from / 1000;
      params[`${k}_t${i}`] = p.to / 1000;
      if (table === 'open') return `bucket = toDateTime(${t}, 'UTC')`;
      // One index-usable range per piece: a min..max bound would read every row between
      // the window's two edge pieces.
      const { block } = STORED[table];
      return `(${block}(${start}) >= ${block}(toDateTime(${f}, 'UTC')) AND ${block}(${start}) <= ${block}(toDateTime(${t} - 1, 'UTC'))
        AND ${start} >= toDateTime(${f}, 'UTC') AND ${start} < toDateTime(${t}, 'UTC'))`;
    });
    // `c`: the bucket index of the piece the row falls in (pieces of one bucket may be in
    // several tables; the outer GROUP BY joins them).
    const bucket =
      q.interval === 'a'
        ? '0'
        : q.interval === 'c'
          ? `{${k}_bucket:Array(UInt32)}[arrayFirstIndex((f, e) -> t >= f AND t < e, {${k}_from:Array(DateTime('UTC'))}, {${k}_to:Array(DateTime('UTC'))})]`
          : bucketOf(q.interval);
    const keys = (opts.keys ?? []).map((c) => `${c}, `).join('');
    parts.push({
      table,
      sql: {
        text: `WITH ${start} AS t SELECT exchange, pair, ${keys}${bucket} AS b, ${select(table)}
      FROM {${k}_table:Identifier} FINAL
      WHERE (exchange, pair) IN {pairs:Array(Tuple(String, String))} AND (${ranges.join(' OR ')})${opts.where ? ` AND (${opts.where.text})` : ''}`,
        params: { ...params, ...opts.where?.params },
      },
    });
  }
  return parts;
}
