// The rows of the specification (part 2.6): their depth columns and blank rows. The values
// themselves are the domain's (domain/market/values.ts); uptime rows are computed in
// ClickHouse (domain/market/repositories/uptime.ts).
import { levelIndex, levelName } from '../../../domain/market/facts.ts';
import type { BookPartial } from '../../../domain/market/families/index.ts';
import { depth, levelCount } from '../../../domain/market/values.ts';

export type Row = Record<string, unknown>;

type DepthFamily = 'bid' | 'n_bid' | 'ask' | 'n_ask';

/** bid_<L>bps (and the other families) for the requested levels, family by family. */
export function depthColumnNames(levels: number[], families: DepthFamily[]): string[] {
  return families.flatMap((f) => levels.map((l) => `${f}_${levelName(l)}bps`));
}

/** Writes the depth columns of depthColumnNames into a row (null without book data). */
export function depthColumnsWriter(levels: number[], families: DepthFamily[]): (b: BookPartial | undefined, row: Row) => void {
  const names = depthColumnNames(levels, families);
  const family = families.flatMap((f) => levels.map(() => f));
  const at = families.flatMap(() => levels.map(levelIndex));
  return (b, row) => {
    for (let k = 0; k < names.length; k++) {
      const i = at[k]!;
      const f = family[k];
      if (f === 'bid' || f === 'ask') row[names[k]!] = depth(b, f, i);
      else row[names[k]!] = levelCount(b, f === 'n_bid' ? 'bid' : 'ask', i);
    }
  };
}

// Rows are copies of a blank row (blankRow) filled in place: rows built by adding 30 keys
// one by one fall into V8's slow dictionary mode, slower to fill and to stringify
// (docs/benchmarks.md, "Measurements behind the code").

/** A blank row with every column set to null: copies of one parsed template share a fast shape. */
export function blankRow(columns: string[]): () => Row {
  const template = JSON.parse(JSON.stringify(Object.fromEntries(columns.map((c) => [c, null])))) as Row;
  return () => ({ ...template });
}
