// The changes of loans (addendum section 7; docs/loans.md), one command each: it takes the
// caller, checks the rights, the state and the terms, writes, and answers the new version
// or why not (domain/outcome.ts). Every command runs under the agreements lock and reads
// the loan again inside it, so a change and an action on the same loan cannot both pass
// their checks against the same version.
import { isDeepStrictEqual } from 'node:util';
import { AGREEMENTS_LOCK, type AgreementStore } from '../agreements/store.ts';
import type { LockSource } from '../../lib/locks.ts';
import type { TargetRepository } from '../targets/repository.ts';
import { decide, refuse, type Outcome } from '../outcome.ts';
import { applyAction, loanAsOf, type SettleInput } from './actions.ts';
import { activateAwardTargets, awardTargetsDue } from './award-targets.ts';
import { draftLoan, loanOf, loanRecord, startTwapWindow, termsEditable, type Loan, type LoanAction, type LoanRecord } from './loan.ts';
import { loanTermsOf, type LoanTermsInput } from './terms.ts';
import { mayLend, type LoanCaller } from './visibility.ts';

export const CHANGE_MESSAGES = {
  onlyDraft: (status: string) => `A loan can be changed only in draft; this one is ${status}.`,
  notLender: 'Only members of a project organization may make loans.',
} as const;

export interface LoanEnv {
  store: AgreementStore;
  targets: TargetRepository;
  ids: { next(sequence: string, floor: number): Promise<number> };
  locks: LockSource;
  /** The asset's TWAP over [from, to) (domain/market/prices.ts); null without market data. */
  assetTwap(asset: string, from: number, to: number): Promise<number | null>;
}

/**
 * The loan the caller may change, read inside the lock: as stored, and as it stands now
 * (domain/loans/actions.ts, loanAsOf); unknown when hidden, forbidden when only seen.
 */
async function managedLoan(env: LoanEnv, c: LoanCaller, id: number): Promise<{ stored: Loan; current: Loan }> {
  const r = await env.store.one<LoanRecord['body']>('loan', id);
  const stored = r ? loanOf(r) : refuse.unknown();
  const current = loanAsOf(stored, c.now);
  if (!c.access.canSee(current)) refuse.unknown();
  if (!c.access.canManage(current)) refuse.forbidden();
  return { stored, current };
}

/** A new loan, in draft, of an asset the caller's project owns. */
export function createLoan(env: LoanEnv, c: LoanCaller, input: LoanTermsInput): Promise<Outcome<Loan>> {
  return decide(async () => {
    // A caller with no project (a market maker's member) may never lend: 403, not a field error.
    if (!mayLend(c.access)) refuse.forbidden(CHANGE_MESSAGES.notLender);
    const checked = loanTermsOf(input, c);
    if (checked.errors) refuse.fields(checked.errors);
    const { organization, ...terms } = checked.value!;
    return env.locks.with(AGREEMENTS_LOCK, async () => {
      const made = draftLoan(await env.ids.next('loans', await env.store.maxId('loan')), organization, terms, c.now, c.user);
      await env.store.write([loanRecord(made, { at: c.now, by: c.user })]);
      return made;
    });
  });
}

/** A draft's terms changed; the whole body is checked first, one invalid field changes nothing. */
export function changeLoan(env: LoanEnv, c: LoanCaller, id: number, input: LoanTermsInput): Promise<Outcome<Loan>> {
  return decide(() =>
    env.locks.with(AGREEMENTS_LOCK, async () => {
      const { current } = await managedLoan(env, c, id);
      if (!termsEditable(current.status)) refuse.state(CHANGE_MESSAGES.onlyDraft(current.status));
      const checked = loanTermsOf(input, c, current);
      if (checked.errors) refuse.fields(checked.errors);
      const changed: Loan = { ...current, ...checked.value! };
      // A change that changes nothing is no new version (nor an event).
      if (isDeepStrictEqual(changed, current)) return current;
      const next: Loan = { ...changed, version: current.version + 1 };
      await env.store.write([loanRecord(next, { at: c.now, by: c.user })]);
      return next;
    }),
  );
}

/**
 * activate, cancel, recall, settle_tranche, default (domain/loans/actions.ts). Activation
 * records `start_twap` (the TWAP over the 7 days before `start_date`) and switches on the KPI
 * targets an RFQ award made with the loan. A move the clock has made due and the keeper has
 * not written yet is written first, in the same insert.
 */
export function actOnLoan(env: LoanEnv, c: LoanCaller, id: number, input: { action: LoanAction } & SettleInput): Promise<Outcome<Loan>> {
  return decide(() =>
    env.locks.with(AGREEMENTS_LOCK, async () => {
      const { stored, current } = await managedLoan(env, c, id);
      const startTwap =
        input.action === 'activate' && current.status === 'draft' && c.now >= current.start_date ? await env.assetTwap(current.asset, ...startTwapWindow(current)) : null;
      const r = applyAction(current, input.action, input, { now: c.now, by: c.user, startTwap });
      if (r.error) return 'message' in r.error ? refuse.state(r.error.message) : refuse.fields(r.error.fields);
      const due = current !== stored ? [loanRecord(current, { at: c.now, by: 0 })] : [];
      await env.store.write([...due, loanRecord(r.loan, { at: c.now, by: c.user })]);
      const done = awardTargetsDue(r.loan) ? await activateAwardTargets({ store: env.store, targets: env.targets, locks: env.locks }, r.loan, c.now, c.user) : r.loan;
      // Answered as a read at this moment shows it (a loan activated past its last expiry is due); the keeper writes that move.
      return loanAsOf(done, c.now);
    }),
  );
}
