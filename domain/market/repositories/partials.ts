// A family's partial aggregates per pair and bucket over a window's pieces (summary,
// leaderboard, regional volume, and the window caches of the API): each stored table's
// rows give the family's partials (families/family.ts), grouped per table, and the union
// is merged once more per pair and bucket.
import type { ClickHouse } from '../../../lib/clickhouse.ts';
import { FAMILIES, type FamilyName, type Partials } from '../families/index.ts';
import { keyColumns, outerSelect, partialSelect, type Family } from '../families/family.ts';
import { pairParams, storedRows, type MarketQuery, type Sql } from './stored-rows.ts';

/** The partials per pair and bucket `b`, unordered; undefined when no piece is left. */
export function partialsSql(name: FamilyName, q: MarketQuery): Sql | undefined {
  return familyPartialsSql(FAMILIES[name], q);
}

/** A family's partials per pair, series (Family.keys) and bucket `b`, of the rows `where` admits. */
export function familyPartialsSql(family: Family, q: MarketQuery, where?: Sql): Sql | undefined {
  const parts = storedRows(family.tables, q, (table) => partialSelect(family, table), { keys: family.keys, where });
  if (parts.length === 0) return undefined;
  const group = [...keyColumns(family), 'b'].join(', ');
  return {
    text: `SELECT ${group}, ${outerSelect(family)} FROM (${parts.map((x) => `${x.sql.text} GROUP BY ${group}`).join('\nUNION ALL\n')})
    GROUP BY ${group}`,
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
