// POST /v2/organizations/loans/<id>/actions/ `{action, ...}` (addendum section 7): activate,
// cancel, recall, settle_tranche `{tranche_id, settlement, settled_quantity}`, default. An
// action the loan's status does not allow is a 400 `{message}` naming the status.
// Activation records `start_twap`: the asset's TWAP over the 7 days before `start_date`, and
// switches on the KPI targets an RFQ award made with the loan (domain/loans/award-targets.ts).
import type { Context } from 'koa';
import { applyAction } from '../../../domain/loans/actions.ts';
import { AGREEMENTS_LOCK } from '../../../domain/agreements/store.ts';
import { LOAN_ACTIONS, loanRecord, START_TWAP_DAYS, type LoanAction } from '../../../domain/loans/loan.ts';
import { assetTwap } from '../../../domain/market/prices.ts';
import { activateAwardTargets, awardTargetsDue } from '../../../domain/loans/award-targets.ts';
import { principalOf } from '../../http/auth.ts';
import { badRequest, forbidden, messageError } from '../../http/errors.ts';
import { loanContext, presentLoans, visibleLoan, type LoanServices } from './routes.ts';

const DAY = 86_400_000;

export function loanAction(s: LoanServices) {
  return async (ctx: Context) => {
    const user = principalOf(ctx.state).user;
    const c = await loanContext(s, ctx);
    const body = (typeof ctx.request.body === 'object' && ctx.request.body !== null && !Array.isArray(ctx.request.body) ? ctx.request.body : {}) as Record<string, unknown>;
    const loan = await s.deps.locks.with(AGREEMENTS_LOCK, async () => {
      const current = await visibleLoan(s, ctx, c.access);
      if (!c.access.canManage(current)) throw forbidden();
      const action = body.action;
      if (action === undefined || action === null || action === '') throw badRequest({ action: ['This field is required.'] });
      if (!LOAN_ACTIONS.includes(action as LoanAction)) throw badRequest({ action: [`"${String(action)}" is not a valid choice; expected one of: ${LOAN_ACTIONS.join(', ')}.`] });
      const now = s.deps.now();
      const startTwap =
        action === 'activate' && current.status === 'draft' && now >= current.start_date
          ? await assetTwap(s.deps.ch, current.asset, (await s.deps.referenceLists.lists()).pairs, current.start_date - START_TWAP_DAYS * DAY, current.start_date, await s.deps.rolledUp.through())
          : null;
      const r = applyAction(current, action as LoanAction, body, { now, by: user.id, startTwap });
      if (r.error) throw 'message' in r.error ? messageError(r.error.message) : badRequest(r.error.fields);
      await s.store.write([loanRecord(r.loan, { at: now, by: user.id })]);
      return awardTargetsDue(r.loan) ? activateAwardTargets({ store: s.store, targets: s.targets, locks: s.deps.locks }, r.loan, now, user.id) : r.loan;
    });
    ctx.body = (await presentLoans(s, [loan], c.organizations))[0];
  };
}
