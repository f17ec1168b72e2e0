// The actions of a loan's state machine (addendum section 7), as pure functions of the loan
// and the clock: the commands (domain/loans/commands.ts) apply the callers' ones, the keeper
// (processors/loans/keeper.ts) writes the service's own moves. Each returns the next version
// or why not.
import { actionAllowed, moved, SETTLEMENTS, type Loan, type LoanAction, type Settlement } from './loan.ts';

export type ActionResult = { loan: Loan; error?: undefined } | { error: { message: string } | { fields: Record<string, string[]> }; loan?: undefined };

export const ACTION_MESSAGES = {
  notInState: (action: LoanAction, status: string) => `Cannot ${action.replace('_', ' ')} a loan in status "${status}".`,
  beforeStart: (start: string) => `A loan can be activated from its start_date (${start}) on.`,
  trancheId: 'Not a tranche of this loan.',
  trancheSettled: 'This tranche is already settled.',
  settledQuantity: (max: number) => `Must be a number from 0 to the tranche's quantity (${max}).`,
} as const;

export interface SettleInput {
  tranche_id?: unknown;
  settlement?: unknown;
  settled_quantity?: unknown;
}

/** Applies a caller's action at `now`; `startTwap` is the asset's TWAP over the 7 days before the start (activate). */
export function applyAction(loan: Loan, action: LoanAction, input: SettleInput, at: { now: number; by: number; startTwap: number | null }): ActionResult {
  if (!actionAllowed(action, loan.status)) return { error: { message: ACTION_MESSAGES.notInState(action, loan.status) } };
  switch (action) {
    case 'activate':
      if (at.now < loan.start_date) return { error: { message: ACTION_MESSAGES.beforeStart(new Date(loan.start_date).toISOString()) } };
      return { loan: { ...moved(loan, 'active', at.now, at.by), start_twap: at.startTwap, start_twap_at: at.now } };
    case 'cancel':
      return { loan: moved(loan, 'cancelled', at.now, at.by) };
    case 'recall':
      return { loan: moved(loan, 'recalled', at.now, at.by) };
    case 'default':
      return { loan: moved(loan, 'defaulted', at.now, at.by) };
    case 'settle_tranche':
      return settleTranche(loan, input, at);
  }
}

function settleTranche(loan: Loan, input: SettleInput, at: { now: number; by: number }): ActionResult {
  const fields: Record<string, string[]> = {};
  const id = typeof input.tranche_id === 'number' ? input.tranche_id : typeof input.tranche_id === 'string' && /^\d+$/.test(input.tranche_id) ? Number(input.tranche_id) : undefined;
  const tranche = id === undefined ? undefined : loan.tranches.find((t) => t.id === id);
  if (input.tranche_id === undefined || input.tranche_id === null) fields.tranche_id = ['This field is required.'];
  else if (!tranche) fields.tranche_id = [ACTION_MESSAGES.trancheId];
  else if (tranche.settlement !== null) fields.tranche_id = [ACTION_MESSAGES.trancheSettled];
  if (input.settlement === undefined || input.settlement === null) fields.settlement = ['This field is required.'];
  else if (!SETTLEMENTS.includes(input.settlement as Settlement)) fields.settlement = [`Not a valid choice; expected one of: ${SETTLEMENTS.join(', ')}.`];
  const raw = input.settled_quantity;
  const q = raw === undefined || raw === null ? tranche?.quantity : typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN;
  if (tranche && (q === undefined || !Number.isFinite(q) || q < 0 || q > tranche.quantity)) fields.settled_quantity = [ACTION_MESSAGES.settledQuantity(tranche.quantity)];
  if (Object.keys(fields).length > 0) return { error: { fields } };
  const tranches = loan.tranches.map((t) => (t.id === id ? { ...t, settlement: input.settlement as Settlement, settled_quantity: q! } : t));
  const next: Loan = { ...loan, tranches, version: loan.version + 1 };
  return { loan: tranches.every((t) => t.settlement !== null) ? { ...moved(loan, 'settled', at.now, at.by), tranches } : next };
}

/**
 * The service's move of an active loan whose last tranche has expired, dated at that expiry
 * (or at the activation, for a loan activated after it: a history never goes back in time);
 * undefined when none is due.
 */
export function settlementDue(loan: Loan, now: number): Loan | undefined {
  if (loan.status !== 'active') return undefined;
  const last = Math.max(...loan.tranches.map((t) => t.expires_at));
  return now >= last ? moved(loan, 'settlement_due', Math.max(last, loan.history.at(-1)?.at ?? last), 0) : undefined;
}

/** The loan as it stands at `now`, the keeper's move written yet or not (reads show this). */
export const loanAsOf = (loan: Loan, now: number): Loan => settlementDue(loan, now) ?? loan;
