// From partial aggregates to the rows of the specification (part 2.6) with the
// definitions of addendum section 4: means over minutes with data, sums for volume,
// latest funding and open interest. (Uptime rows are computed in ClickHouse:
// domain/market/repositories/uptime.ts.)
import { levelIndex, levelName } from '../../../domain/market/facts.ts';
import type { BookPartial, DerivativePartial, TradePartial } from '../../../domain/market/families/index.ts';

export type Row = Record<string, unknown>;

const div = (a: number | undefined, b: number) => (b > 0 && a !== undefined ? a / b : null);

export function twap(b: Pick<BookPartial, 'mid_sum' | 'minutes'> | undefined): number | null {
  return b ? div(b.mid_sum, b.minutes) : null;
}

export function volume(t: TradePartial | undefined): number | null {
  if (!t || t.trades === 0) return 0;
  return t.usd_trades > 0 ? t.volume_usd : null;
}

export function vwap(t: TradePartial | undefined): number | null {
  return t && t.amount > 0 ? t.notional / t.amount : null;
}

export function derivatives(d: DerivativePartial | undefined): { funding_rate_8h: number | null; usd_open_interest: number | null } {
  return {
    funding_rate_8h: d && d.funding[0] > 0 ? d.funding[1] : null,
    usd_open_interest: d && d.open_interest[0] > 0 ? d.open_interest[1] : null,
  };
}

export function tick(b: BookPartial | undefined): { tick_bps: number | null; tick_bps_status: string; tick_bps_samples: number } {
  const mid = twap(b);
  const samples = b?.samples ?? 0;
  return {
    tick_bps: b && b.tick_min !== null && mid ? (b.tick_min / mid) * 1e4 : null,
    tick_bps_status: samples >= 10 ? 'ok' : 'insufficient_data',
    tick_bps_samples: samples,
  };
}

export function priceChange(b: BookPartial | undefined): number | null {
  return b && b.first[1] > 0 ? 100 * (b.last[1] / b.first[1] - 1) : null;
}

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
      if (!b) row[names[k]!] = null;
      else if (f === 'bid') row[names[k]!] = div(b.bid_depth_sum[i], b.depth_minutes);
      else if (f === 'ask') row[names[k]!] = div(b.ask_depth_sum[i], b.depth_minutes);
      else if (f === 'n_bid') row[names[k]!] = div(b.bid_count_sum[i], b.minutes);
      else row[names[k]!] = div(b.ask_count_sum[i], b.minutes);
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
