// The loans resource (addendum section 7; docs/loans.md): list, create, read, change a
// draft, and the actions of the state machine. Reading takes a token or an API key with
// `metrics:read`; changing takes a signed-in member of the lender (API keys have no scope
// for it). A loan the caller may not see answers 404; one it sees but may not change, 403.
import { pathId, type Handlers } from '../../http/contract.ts';
import type { Context } from 'koa';
import { AgreementStore } from '../../../domain/agreements/store.ts';
import { loanOf, type Loan, type LoanRecord } from '../../../domain/loans/loan.ts';
import { assetTwaps } from '../../../domain/market/prices.ts';
import { evaluationCounts, kpiOf, kpiTargetsOf, valuationOf } from '../../../domain/loans/valuation.ts';
import { loanAccess, type LoanAccess } from '../../../domain/loans/visibility.ts';
import { TargetRepository } from '../../../domain/targets/repository.ts';
import type { ApiDeps } from '../../deps.ts';
import { authenticate, principalOf } from '../../http/auth.ts';
import { notFound } from '../../http/errors.ts';
import { loanAction } from './actions.ts';
import { createLoan, patchLoan } from './change.ts';
import type { LoanContext } from './input.ts';
import { listLoans } from './list.ts';
import { presentLoan } from './present.ts';

const DAY = 86_400_000;

export interface LoanServices {
  deps: ApiDeps;
  store: AgreementStore;
  targets: TargetRepository;
}

export function loanHandlers(deps: ApiDeps): Handlers {
  const s: LoanServices = { deps, store: new AgreementStore(deps.ch), targets: new TargetRepository(deps.ch) };
  return {
    listLoans: listLoans(s),
    createLoan: createLoan(s),
    getLoan: readLoan(s),
    updateLoan: patchLoan(s),
    loanAction: loanAction(s),
  };
}

export async function loanContext(s: LoanServices, ctx: Context): Promise<LoanContext> {
  const user = principalOf(ctx.state).user;
  const [access, lists] = await Promise.all([loanAccess(s.deps, user), s.deps.referenceLists.lists()]);
  return { access, organizations: new Map(lists.organizations.map((o) => [o.slug, o])), lists };
}

/** The loan of the path's id as the caller may see it; 404 for an unknown id and for one the caller may not see. */
export async function visibleLoan(s: LoanServices, ctx: Context, access: LoanAccess): Promise<Loan> {
  const record = await s.store.one<LoanRecord['body']>('loan', pathId(ctx));
  const loan = record ? loanOf(record) : undefined;
  if (!loan || !access.canSee(loan)) throw notFound();
  return loan;
}

/** Loans as shown: each with its valuation (24-hour TWAP now) and KPI (its targets' evaluations since the start). */
export async function presentLoans(s: LoanServices, loans: readonly Loan[], organizations: LoanContext['organizations']) {
  if (loans.length === 0) return [];
  const now = s.deps.now();
  const { pairs } = await s.deps.referenceLists.lists();
  const assets = [...new Set(loans.map((l) => l.asset))];
  const [prices, targets] = await Promise.all([
    s.deps.rolledUp.through().then((rolledUpTo) => assetTwaps(s.deps.ch, assets, pairs, now - DAY, now, rolledUpTo)),
    s.targets.all({ type: 'mm', organizations: [...new Set(loans.map((l) => l.market_maker))], assets }),
  ]);
  const counts = await evaluationCounts(
    s.deps.ch,
    loans.flatMap((l) => kpiTargetsOf(l, targets).map((t) => ({ id: t.id, since: l.start_date }))),
  );
  return loans.map((l) => presentLoan(l, organizations, valuationOf(l, prices.get(l.asset) ?? null, now), kpiOf(l, targets, counts)));
}

function readLoan(s: LoanServices) {
  return async (ctx: Context) => {
    const c = await loanContext(s, ctx);
    const loan = await visibleLoan(s, ctx, c.access);
    ctx.body = (await presentLoans(s, [loan], c.organizations))[0];
  };
}
