// POST /v2/organizations/loans/ (a new loan, in draft) and PATCH .../loans/<id>/ (its terms,
// while in draft). The whole body is checked first; one invalid field fails the request and
// nothing is written. Writes hold the agreements lock, so a PATCH and an action on the same
// loan cannot both pass their checks against the same version.
import type { Context } from 'koa';
import { AGREEMENTS_LOCK } from '../../../domain/agreements/store.ts';
import { draftLoan, loanRecord, type Loan } from '../../../domain/loans/loan.ts';
import { principalOf } from '../../http/auth.ts';
import type { BodyOf } from '../../http/contract.ts';
import { badRequest, forbidden, messageError } from '../../http/errors.ts';
import { loanTermsOf } from './input.ts';
import { loanContext, presentLoans, visibleLoan, type LoanServices } from './routes.ts';

export const CHANGE_MESSAGES = {
  onlyDraft: (status: string) => `A loan can be changed only in draft; this one is ${status}.`,
  notLender: 'Only members of a project organization may make loans.',
} as const;

export function createLoan(s: LoanServices) {
  return async (ctx: Context) => {
    const user = principalOf(ctx.state).user;
    const c = await loanContext(s, ctx);
    // A caller with no project (a market maker's member) may never lend: 403, not a field error.
    if (!c.access.staff && c.access.lendable.size === 0) throw forbidden(CHANGE_MESSAGES.notLender);
    const checked = loanTermsOf(ctx.state.body as BodyOf<'createLoan'>, c);
    if (checked.errors) throw badRequest(checked.errors);
    const { organization, ...terms } = checked.value;
    const loan = await s.deps.locks.with(AGREEMENTS_LOCK, async () => {
      const id = await s.deps.ids.next('loans', await s.store.maxId('loan'));
      const at = s.deps.now();
      const made = draftLoan(id, organization, terms, at, user.id);
      await s.store.write([loanRecord(made, { at, by: user.id })]);
      return made;
    });
    ctx.status = 201;
    ctx.body = (await presentLoans(s, [loan], c.organizations))[0];
  };
}

export function patchLoan(s: LoanServices) {
  return async (ctx: Context) => {
    const user = principalOf(ctx.state).user;
    const c = await loanContext(s, ctx);
    const loan = await s.deps.locks.with(AGREEMENTS_LOCK, async () => {
      const current = await visibleLoan(s, ctx, c.access);
      if (!c.access.canManage(current)) throw forbidden();
      if (current.status !== 'draft') throw messageError(CHANGE_MESSAGES.onlyDraft(current.status));
      const checked = loanTermsOf(ctx.state.body as BodyOf<'updateLoan'>, c, current);
      if (checked.errors) throw badRequest(checked.errors);
      const at = s.deps.now();
      const next: Loan = { ...current, ...checked.value, version: current.version + 1 };
      await s.store.write([loanRecord(next, { at, by: user.id })]);
      return next;
    });
    ctx.body = (await presentLoans(s, [loan], c.organizations))[0];
  };
}
