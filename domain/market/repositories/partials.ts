// A family's partial aggregates per pair and bucket over a window's pieces (summary,
// leaderboard, regional volume, and the window caches of the API): each stored table's
// rows give the family's partials (families/family.ts), grouped per table, and the union
// of several tables is merged once more per pair and bucket.
import type { ClickHouse } from '../../../lib/clickhouse.ts';
import { FAMILIES, type FamilyName, type Partials } from '../families/index.ts';
import { keyColumns, outerSelect, partialSelect, type Family } from '../families/family.ts';
import { pairParams, storedRows, type MarketQuery, type Sql } from './stored-rows.ts';
import type { Table } from '../window.ts';

/** The partials per pair and bucket `b`, unordered; undefined when no piece is left. */
export function partialsSql(name: FamilyName, q: MarketQuery): Sql | undefined {
  return familyPartialsSql(FAMILIES[name], q);
}

/**
 * The stored table whose rows are each one whole bucket of the interval, when the plan reads
 * it (window.ts reads days only in a zone without offset, hours only in one of whole hours):
 * a bucket read from such a row is read from no other table, so its rows need no GROUP BY.
 * A month at `1d` is mostly day rows; grouping them cost the engine most of the read.
 */
const WHOLE_BUCKET_ROWS: Partial<Record<MarketQuery['interval'], Table>> = { '1d': 'days', '1h': 'hours' };

/** A family's partials per pair, series (Family.keys) and bucket `b`, of the rows `where` admits. */
export function familyPartialsSql(family: Family, q: MarketQuery, where?: Sql): Sql | undefined {
  const whole = WHOLE_BUCKET_ROWS[q.interval];
  const parts = storedRows(family.tables, q, (table) => partialSelect(family, table, table === whole), { keys: family.keys, where });
  if (parts.length === 0) return undefined;
  const group = [...keyColumns(family), 'b'].join(', ');
  const merged = parts.filter((x) => x.table !== whole);
  // UNION ALL matches columns by position: both selects list the group's columns, then the partials.
  // Grouped rows of one table are already one per bucket: merged again only across tables
  // (a month at 5m, read from minutes alone, took a fifth longer grouped twice).
  const selects = [
    ...(merged.length === 0
      ? []
      : merged.length === 1
        ? [`SELECT ${group}, ${outerSelect(family, true)} FROM (${merged[0]!.sql.text} GROUP BY ${group})`]
        : [`SELECT ${group}, ${outerSelect(family)} FROM (${merged.map((x) => `${x.sql.text} GROUP BY ${group}`).join('\nUNION ALL\n')})
    GROUP BY ${group}`]),
    ...parts.filter((x) => x.table === whole).map((x) => `SELECT ${group}, ${outerSelect(family, true)} FROM (${x.sql.text})`),
  ];
  return {
    // One SELECT either way, so that a caller's ORDER BY or wrapping applies to all its rows.
    text: selects.length === 1 ? selects[0]! : `SELECT * FROM (${selects.join('\nUNION ALL\n')})`,
    params: Object.assign(pairParams(q), ...parts.map((x) => x.sql.params)),
  };
}

export class PartialsRepository {
  constructor(private readonly ch: ClickHouse) {}

  /** Partials per pair and bucket, ordered by exchange, pair and bucket. */
  async read<F extends FamilyName>(family: F, q: MarketQuery): Promise<Partials[F][]> {
    if (q.pairs.length === 0) return [];
    const sql = partialsSql(family, q);
    if (!sql) return [];
    // Ordered here, by bytes: cheaper than in Node, and the order responses list rows in.
    const rows = await this.ch.query<Partials[F]>(`${sql.text} ORDER BY exchange, pair, b`, sql.params);
    for (const r of rows) r.b = Number(r.b);
    return rows;
  }
}
