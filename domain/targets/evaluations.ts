// What the evaluator reads and writes (schemas/clickhouse/030, 031): the aggregates of a
// window's minute rows per pair (and per wallet for trusted values), and one minute's
// evaluations and states. The states of a minute
// and the evaluator's progress (the row of id 0 in target_states) go in one insert, so a
// minute is applied whole or not at all.
import { TupleParam } from '@clickhouse/client';
import type { ClickHouse, Params } from '../../lib/clickhouse.ts';
import { book, trade, trustedDepth, trustedVolume } from '../market/families/index.ts';
import type { Family } from '../market/families/family.ts';
import type { Range } from '../market/window.ts';
import type { TargetStatus } from './facts.ts';
import type { BookWindow, TradeWindow } from './values.ts';

/** The row of target_states that holds the last minute evaluated. */
const PROGRESS_ID = 0;

export interface PairKey {
  exchange: string;
  pair: string;
}

export interface Evaluation {
  id: number;
  minute: number;
  value: number | null;
  effective_threshold: number;
  met: boolean | null;
  status: TargetStatus;
}

export interface StateRow {
  id: number;
  status: TargetStatus;
  updates: { status: TargetStatus; updated_at: number }[];
  met_streak: number;
  effective_threshold: number;
  current_price: number | null;
  scaling_factor: number;
}

/** A WHERE condition on `minute` for the ranges, narrowing the hour block of the sort key too. */
function minuteRanges(ranges: readonly Range[], params: Params): string {
  return ranges
    .map((r, i) => {
      params[`f${i}`] = Math.floor(r[0] / 1000);
      params[`t${i}`] = Math.ceil(r[1] / 1000);
      return `(toStartOfHour(minute) >= toStartOfHour(toDateTime({f${i}:UInt32}, 'UTC')) AND toStartOfHour(minute) <= toStartOfHour(toDateTime({t${i}:UInt32} - 1, 'UTC'))
        AND minute >= toDateTime({f${i}:UInt32}, 'UTC') AND minute < toDateTime({t${i}:UInt32}, 'UTC'))`;
    })
    .join(' OR ');
}

export class EvaluationRepository {
  constructor(private readonly ch: ClickHouse) {}

  /** A family's aggregates over the ranges' minute rows, per pair (and series). */
  private async window<R>(family: Family, pairs: readonly PairKey[], ranges: readonly Range[], keys = ''): Promise<(R & PairKey)[]> {
    if (pairs.length === 0 || ranges.length === 0) return [];
    const params: Params = { ...family.params, t: family.tables.minutes, pairs: pairs.map((p) => new TupleParam([p.exchange, p.pair])) };
    const where = minuteRanges(ranges, params);
    // Aliased apart from the columns (an alias equal to a column would shadow it in the
    // other expressions), renamed back below.
    const rows = await this.ch.query<Record<string, unknown>>(
      `SELECT exchange, pair${keys}, ${family.aggregates.map((a) => `${a.minute} AS w_${a.name}`).join(', ')}
       FROM {t:Identifier} FINAL WHERE (exchange, pair) IN {pairs:Array(Tuple(String, String))} AND (${where})
       GROUP BY exchange, pair${keys}`,
      params,
    );
    return rows.map((r) => {
      const out: Record<string, unknown> = { exchange: r.exchange, pair: r.pair };
      if (keys) out.wallet_id = Number(r.wallet_id);
      for (const a of family.aggregates) {
        const v = r[`w_${a.name}`];
        out[a.name] = typeof v === 'string' && a.type.startsWith('UInt') ? Number(v) : Array.isArray(v) ? v.map(Number) : v;
      }
      return out as R & PairKey;
    });
  }

  books(pairs: readonly PairKey[], ranges: readonly Range[]): Promise<(BookWindow & PairKey)[]> {
    return this.window<BookWindow>(book, pairs, ranges);
  }

  trades(pairs: readonly PairKey[], ranges: readonly Range[]): Promise<(TradeWindow & PairKey)[]> {
    return this.window<TradeWindow>(trade, pairs, ranges);
  }

  /** Per wallet: minutes with orders, depth sums at every level; fills and their USD volume. */
  async trusted(pairs: readonly PairKey[], ranges: readonly Range[]) {
    const [depth, volume] = await Promise.all([
      this.window<{ wallet_id: number; minutes: number; bid_depth_sum: number[]; ask_depth_sum: number[] }>(trustedDepth, pairs, ranges, ', wallet_id'),
      this.window<{ wallet_id: number; fills: number; volume_usd: number; usd_fills: number }>(trustedVolume, pairs, ranges, ', wallet_id'),
    ]);
    return { depth, volume };
  }

  /** The last minute evaluated (epoch ms), or undefined before the first. */
  async lastMinute(): Promise<number | undefined> {
    const rows = await this.ch.query<{ at: number }>('SELECT toUnixTimestamp64Milli(evaluated_at) AS at FROM target_states FINAL WHERE id = {id:UInt64}', { id: PROGRESS_ID });
    return rows.length > 0 ? Number(rows[0]!.at) : undefined;
  }

  /** One minute's evaluations (rewritten as they are if the minute runs again). */
  async saveEvaluations(rows: Evaluation[], at: number): Promise<void> {
    if (rows.length === 0) return;
    await this.ch.insert(
      'target_evaluations',
      rows.map((r) => ({ ...r, minute: Math.floor(r.minute / 1000), evaluated_at: at })),
    );
  }

  /** The states after a minute and the progress row, in one insert: the minute is applied whole or not at all. */
  async saveStates(rows: StateRow[], minute: number): Promise<void> {
    // Versioned by the minute evaluated: minutes are applied in order, and one applied again
    // rewrites its own rows.
    const version = minute;
    const progress = { id: PROGRESS_ID, status: 'unchecked', updates: [], met_streak: 0, effective_threshold: 0, current_price: null, scaling_factor: 1, evaluated_at: minute, version };
    await this.ch.insert('target_states', [...rows.map((r) => ({ ...r, evaluated_at: minute, version })), progress]);
  }

  /** A target's evaluations in [from, to), oldest first. */
  async history(id: number, from: number, to: number): Promise<Evaluation[]> {
    const rows = await this.ch.query<{ at_ms: number; value: number | null; effective_threshold: number; met: boolean | null; status: TargetStatus }>(
      `SELECT toUnixTimestamp(minute) * 1000 AS at_ms, value, effective_threshold, met, toString(status) AS status
       FROM target_evaluations FINAL
       WHERE id = {id:UInt64} AND minute >= toDateTime({from:UInt32}, 'UTC') AND minute < toDateTime({to:UInt32}, 'UTC')
       ORDER BY at_ms`,
      { id, from: Math.floor(from / 1000), to: Math.ceil(to / 1000) },
    );
    return rows.map((r) => ({ id, minute: Number(r.at_ms), value: r.value, effective_threshold: r.effective_threshold, met: r.met === null ? null : Boolean(r.met), status: r.status }));
  }
}
