// A metric family: the aggregates its minute rows roll up into, declared once. From the
// declaration come the hour and day rollups (repositories/rollups.ts), the partials a
// window query reads from minute, hour and day rows and its outer merge
// (repositories/partials.ts), and the same merge done in Node on kept partials
// (api/market-caches/window-partials.ts). test/domain/families.test.ts holds the rollup
// tables' DDL (schemas/clickhouse/) against the declarations.
import type { Params } from '../../../lib/clickhouse.ts';
import type { Table } from '../window.ts';

/** How two partials of an aggregate combine: the same in rollups, queries and Node. */
export type Combine = 'sum' | 'sumEach' | 'min' | 'max';

const SQL_COMBINE: Record<Combine, string> = { sum: 'sum', sumEach: 'sumForEach', min: 'min', max: 'max' };

export interface Aggregate {
  /** Its column in the family's hour and day tables, and its field in a partial. */
  name: string;
  /** Its ClickHouse type in those tables. */
  type: string;
  /** Its value over a set of the family's minute rows (the minute partial); may bind the family's params. */
  minute: string;
  combine: Combine;
  /**
   * Read by window queries (summary, leaderboard) into the family's partial. A
   * (DateTime64, value) tuple is read as [epoch ms, value], which orders the same.
   */
  partial?: 'value' | 'time-value';
}

/** A table of minute rows a processor writes, and the keys of its series. */
export interface MinuteTable {
  tables: { minutes: string };
  /**
   * Key columns of a series beside exchange and pair (a market maker's `wallet_id`): rows
   * are kept, rolled up and read per series. None for the market's families.
   */
  keys?: readonly string[];
}

export interface Family extends MinuteTable {
  name: string;
  /**
   * Its minute, hour and day tables, and for the market's families the open hour's rows
   * so far (schemas/clickhouse/008), rolled up every few minutes
   * (processors/market/sealed-rollups.ts).
   */
  tables: { minutes: string; hours: string; days: string; open?: string };
  /** In the rollup tables' column order, between the keys (exchange, pair, bucket) and computed_at. */
  aggregates: readonly Aggregate[];
  /** Values the minute expressions bind (`{levels:Array(Float64)}`...). */
  params: Params;
}

/** The key of every partial row: the pair and its bucket (epoch s, or a bucket index for `c`). */
export interface PartialKey {
  exchange: string;
  pair: string;
  b: number;
}

/** (time, value) read from a tuple: [epoch ms, value]. */
export type TimeValue = [number, number];

const partials = (f: Family) => f.aggregates.filter((a) => a.partial);

export const isFamily = (t: MinuteTable): t is Family => 'aggregates' in t;

/** The columns that key a row besides its time: exchange, pair and the family's own keys. */
export const keyColumns = (f: MinuteTable): string[] => ['exchange', 'pair', ...(f.keys ?? [])];

/** A series' identity within its pair, from its key values ('' for the market's families). */
export const seriesOf = (f: MinuteTable, row: Record<string, unknown>): string => (f.keys ?? []).map((k) => String(row[k])).join('\u0000');

/** The rollup tables' aggregate columns, in order. */
export const rollupColumns = (f: Family): string[] => f.aggregates.map((a) => a.name);

/** An hour row's aggregates from minute rows, in rollupColumns' order (unnamed: no alias shadows a column). */
export function hourFromMinutes(f: Family): string {
  return f.aggregates.map((a) => a.minute).join(',\n  ');
}

/** A coarser row's aggregates from finer rollup rows (a day from hours), in rollupColumns' order. */
export function fromRollups(f: Family): string {
  return f.aggregates.map((a) => `${SQL_COMBINE[a.combine]}(${a.name})`).join(',\n  ');
}

/**
 * The partial of rows of one stored table: `<name>_p` each (aliases that shadow no column).
 * `whole`: each row of the (rollup) table is one bucket's, read as it is, without GROUP BY.
 */
export function partialSelect(f: Family, table: Table, whole = false): string {
  return partials(f)
    .map((a) => `${table === 'minutes' ? a.minute : whole ? a.name : `${SQL_COMBINE[a.combine]}(${a.name})`} AS ${a.name}_p`)
    .join(', ');
}

/**
 * The merge of the tables' partials into one per pair and bucket, named as the aggregates.
 * `whole`: of one row per bucket, taken as it is.
 */
export function outerSelect(f: Family, whole = false): string {
  return partials(f)
    .map((a) => {
      const merged = whole ? `${a.name}_p` : `${SQL_COMBINE[a.combine]}(${a.name}_p)`;
      return a.partial === 'time-value'
        ? `(toUnixTimestamp64Milli(tupleElement(${merged}, 1)), tupleElement(${merged}, 2)) AS ${a.name}`
        : `${merged} AS ${a.name}`;
    })
    .join(', ');
}

type Value = number | null | number[] | TimeValue;

/** Lexicographic order of numbers or tuples, as ClickHouse orders tuples. */
function compare(x: number | number[], y: number | number[]): number {
  if (typeof x === 'number' || typeof y === 'number') return (x as number) - (y as number);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}

const addEach = (a: number[], b: number[]) => (a.length >= b.length ? a.map((x, i) => x + (b[i] ?? 0)) : b.map((x, i) => x + (a[i] ?? 0)));

function combine(how: Combine, x: Value, y: Value): Value {
  // min and max skip nulls, as ClickHouse's do.
  if (x === null) return y;
  if (y === null) return x;
  switch (how) {
    case 'sum':
      return (x as number) + (y as number);
    case 'sumEach':
      return addEach(x as number[], y as number[]);
    case 'min':
      return compare(y, x) < 0 ? y : x;
    case 'max':
      return compare(y, x) > 0 ? y : x;
  }
}

/** Two partials of one pair and bucket as one, as outerSelect merges them in SQL. */
export function mergePartials<P extends PartialKey>(f: Family, a: P | undefined, b: P | undefined): P | undefined {
  if (!a || !b) return a ?? b;
  const out = { ...a } as Record<string, unknown>;
  for (const agg of partials(f)) out[agg.name] = combine(agg.combine, a[agg.name as keyof P] as Value, b[agg.name as keyof P] as Value);
  return out as P;
}

/** About what a partial costs in memory, for the caches' byte bounds. */
export function partialBytes(f: Family, p: PartialKey | null): number {
  if (!p) return 64;
  let n = 200;
  for (const a of partials(f)) {
    const v = (p as unknown as Record<string, unknown>)[a.name];
    n += Array.isArray(v) ? 8 * v.length + 40 : 16;
  }
  return n;
}
