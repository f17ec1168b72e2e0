// A loan's read-only `valuation` and `kpi` (addendum section 7; docs/loans.md), computed
// when read: the price is the asset's TWAP over the last 24 hours (domain/market/prices.ts),
// the KPI share reads the evaluations the target evaluator kept (031_target_evaluations).
import type { ClickHouse } from '../../lib/clickhouse.ts';
import type { Target } from '../targets/repository.ts';
import { tokensOut, type Loan } from './loan.ts';
import { DAY_MS } from '../../lib/time.ts';

export interface TrancheValuation {
  id: number;
  strike_price: number | null;
  /** max(0, price - strike) x quantity of an unsettled tranche; null without a price or strike; 0 once settled. */
  intrinsic_value_usd: number | null;
  /** Days until it expires, 0 after. */
  days_to_expiry: number;
}

export interface Valuation {
  /** The asset's TWAP in USD over the 24 hours before `as_of`; null without market data. */
  price: number | null;
  tokens_out: number;
  value_usd: number | null;
  intrinsic_value_usd: number | null;
  tranches: TrancheValuation[];
  as_of: number;
}

export function valuationOf(loan: Loan, price: number | null, now: number): Valuation {
  const out = tokensOut(loan);
  const tranches = loan.tranches.map((t): TrancheValuation => {
    const intrinsic = t.settlement !== null ? 0 : price === null || t.strike_price === null ? null : Math.max(0, price - t.strike_price) * t.quantity;
    return { id: t.id, strike_price: t.strike_price, intrinsic_value_usd: intrinsic, days_to_expiry: Math.max(0, (t.expires_at - now) / DAY_MS) };
  });
  const known = tranches.every((t) => t.intrinsic_value_usd !== null);
  return {
    price,
    tokens_out: out,
    value_usd: price === null ? (out === 0 ? 0 : null) : out * price,
    intrinsic_value_usd: known ? tranches.reduce((s, t) => s + (t.intrinsic_value_usd ?? 0), 0) : null,
    tranches,
    as_of: now,
  };
}

/** The loan's `mm` targets: the market maker's, on its asset, on a listed pair of a listed exchange. */
export function kpiTargetsOf(loan: Pick<Loan, 'market_maker' | 'asset' | 'exchanges' | 'pairs'>, targets: readonly Target[]): Target[] {
  return targets.filter((t) => t.type === 'mm' && t.organization === loan.market_maker && t.asset === loan.asset && loan.exchanges.includes(t.exchange) && loan.pairs.includes(t.pair));
}

export interface KpiTarget {
  target_id: number;
  exchange: string;
  pair: string;
  metric: string;
  active: boolean;
  status: string;
  /** Evaluations with a value since the loan's start, and how many of them were met. */
  evaluations: number;
  met: number;
  met_share: number | null;
}

export interface Kpi {
  targets: number;
  evaluations: number;
  met: number;
  /** Met evaluations / evaluations with a value, over every KPI target since `start_date`; null before the first. */
  met_share: number | null;
  since: number;
  per_target: KpiTarget[];
}

export interface EvaluationCounts {
  evaluations: number;
  met: number;
}

/** Evaluations with a value, and the met ones, per target since each `since` (ms); keyed `<id>:<since>`. */
export async function evaluationCounts(ch: ClickHouse, wanted: readonly { id: number; since: number }[]): Promise<Map<string, EvaluationCounts>> {
  // Loans that share a start share a query; several loans may count one target from different starts.
  const bySince = new Map<number, Set<number>>();
  for (const w of wanted) bySince.set(w.since, (bySince.get(w.since) ?? new Set()).add(w.id));
  const out = new Map<string, EvaluationCounts>();
  await Promise.all(
    [...bySince].map(async ([since, ids]) => {
      const rows = await ch.query<{ id: string | number; n: string | number; met_n: string | number }>(
        `SELECT id, count() AS n, countIf(met) AS met_n FROM target_evaluations FINAL
         WHERE id IN {ids:Array(UInt64)} AND minute >= toDateTime({since:UInt32}, 'UTC') AND met IS NOT NULL
         GROUP BY id`,
        { ids: [...ids], since: Math.max(0, Math.ceil(since / 1000)) },
      );
      for (const r of rows) out.set(`${Number(r.id)}:${since}`, { evaluations: Number(r.n), met: Number(r.met_n) });
    }),
  );
  return out;
}

export function kpiOf(loan: Loan, targets: readonly Target[], counts: Map<string, EvaluationCounts>): Kpi {
  const mine = kpiTargetsOf(loan, targets);
  const per = mine.map((t): KpiTarget => {
    const c = counts.get(`${t.id}:${loan.start_date}`) ?? { evaluations: 0, met: 0 };
    return { target_id: t.id, exchange: t.exchange, pair: t.pair, metric: t.metric, active: t.active, status: t.status, ...c, met_share: c.evaluations > 0 ? c.met / c.evaluations : null };
  });
  const evaluations = per.reduce((s, p) => s + p.evaluations, 0);
  const met = per.reduce((s, p) => s + p.met, 0);
  return { targets: mine.length, evaluations, met, met_share: evaluations > 0 ? met / evaluations : null, since: loan.start_date, per_target: per };
}
