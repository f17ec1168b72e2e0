// What a caller may read of loans (addendum section 7; docs/loans.md): each loan as it
// stands at the caller's moment (an active loan past its last expiry reads settlement_due,
// written by the keeper yet or not), with its valuation at the asset's 24-hour TWAP and its
// KPI from its targets' evaluations since the start. Reads never write; a loan the caller
// may not see is unknown.
import type { AgreementStore } from '../agreements/store.ts';
import type { ClickHouse } from '../../lib/clickhouse.ts';
import { assetTwaps } from '../market/prices.ts';
import type { Pair } from '../reference/repository.ts';
import type { TargetRepository } from '../targets/repository.ts';
import { decide, refuse, type Outcome } from '../outcome.ts';
import { loanAsOf } from './actions.ts';
import { loanOf, type Loan, type LoanRecord } from './loan.ts';
import { evaluationCounts, kpiOf, kpiTargetsOf, valuationOf, type Kpi, type Valuation } from './valuation.ts';
import type { LoanCaller } from './visibility.ts';
import { DAY_MS } from '../../lib/time.ts';

export interface LoanFilter {
  organizations?: readonly string[];
  market_makers?: readonly string[];
  assets?: readonly string[];
  statuses?: readonly string[];
}

const has = (list: readonly string[] | undefined, v: string) => !list || list.includes(v);

/** The loan as the caller may see it; undefined for an unknown id and for one hidden from the caller. */
export async function visibleLoan(store: AgreementStore, c: LoanCaller, id: number): Promise<Loan | undefined> {
  const r = await store.one<LoanRecord['body']>('loan', id);
  const loan = r && loanAsOf(loanOf(r), c.now);
  return loan && c.access.canSee(loan) ? loan : undefined;
}

export function readLoan(store: AgreementStore, c: LoanCaller, id: number): Promise<Outcome<Loan>> {
  return decide(async () => (await visibleLoan(store, c, id)) ?? refuse.unknown());
}

/** The loans the caller may see that pass the filter, newest first. */
export async function listLoans(store: AgreementStore, c: LoanCaller, f: LoanFilter): Promise<Loan[]> {
  return (await store.latest<LoanRecord['body']>('loan'))
    .map((r) => loanAsOf(loanOf(r), c.now))
    .filter((l) => c.access.canSee(l) && has(f.organizations, l.organization) && has(f.market_makers, l.market_maker) && has(f.assets, l.asset) && has(f.statuses, l.status))
    .sort((a, b) => b.id - a.id);
}

export interface ValuationSource {
  ch: ClickHouse;
  targets: TargetRepository;
  pairs: readonly Pair[];
  /** Before when the hour rows are complete. */
  rolledUpTo: number;
}

export interface ValuedLoan {
  loan: Loan;
  valuation: Valuation;
  kpi: Kpi;
}

/** Loans with their valuation at `now` (the 24-hour TWAP) and their KPI since each start. */
export async function valued(src: ValuationSource, loans: readonly Loan[], now: number): Promise<ValuedLoan[]> {
  if (loans.length === 0) return [];
  const assets = [...new Set(loans.map((l) => l.asset))];
  const [prices, targets] = await Promise.all([
    assetTwaps(src.ch, assets, src.pairs, now - DAY_MS, now, src.rolledUpTo),
    src.targets.all({ type: 'mm', organizations: [...new Set(loans.map((l) => l.market_maker))], assets }),
  ]);
  const counts = await evaluationCounts(
    src.ch,
    loans.flatMap((l) => kpiTargetsOf(l, targets).map((t) => ({ id: t.id, since: l.start_date }))),
  );
  return loans.map((loan) => ({ loan, valuation: valuationOf(loan, prices.get(loan.asset) ?? null, now), kpi: kpiOf(loan, targets, counts) }));
}
