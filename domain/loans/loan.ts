// A token loan from a project to a market maker (addendum section 7; docs/loans.md): its
// terms, its tranches, the state machine of its actions and the service's own moves.
// Stored as versioned records (domain/agreements/store.ts, kind 'loan').
import type { AgreementRecord } from '../agreements/store.ts';
import { DAY_MS } from '../../lib/time.ts';

export const LOAN_MODELS = ['loan_call_option', 'retainer', 'hybrid'] as const;
export type LoanModel = (typeof LOAN_MODELS)[number];

export const LOAN_STATUSES = ['draft', 'active', 'settlement_due', 'settled', 'recalled', 'defaulted', 'cancelled'] as const;
export type LoanStatus = (typeof LOAN_STATUSES)[number];

export const STRIKE_BASES = ['fixed', 'twap_premium'] as const;
export type StrikeBasis = (typeof STRIKE_BASES)[number];

export const SETTLEMENTS = ['returned', 'exercised'] as const;
export type Settlement = (typeof SETTLEMENTS)[number];

export const LOAN_ACTIONS = ['activate', 'cancel', 'recall', 'settle_tranche', 'default'] as const;
export type LoanAction = (typeof LOAN_ACTIONS)[number];

/** Days after disbursement whose TWAP fixes a `twap_premium` strike. */
export const STRIKE_TWAP_DAYS = 7;
/** Days before `start_date` whose TWAP is the loan's `start_twap`. */
export const START_TWAP_DAYS = 7;

/** A tranche's strike window: the 7 days after its disbursement. */
export const strikeWindow = (t: Tranche): [number, number] => [t.disbursed_at, t.disbursed_at + STRIKE_TWAP_DAYS * DAY_MS];

/** The window of `start_twap`: the 7 days before the start. */
export const startTwapWindow = (l: LoanTerms): [number, number] => [l.start_date - START_TWAP_DAYS * DAY_MS, l.start_date];

/**
 * Whether a `twap_premium` strike is due to be fixed: its 7 days have passed and every minute
 * of them is written. `sealed` is the time before which all minutes are (domain/market/window.ts,
 * sealedBefore): a strike fixed as soon as the days end would miss the minutes still arriving.
 */
export const strikeDue = (t: Tranche, sealed: number): boolean => t.strike_basis === 'twap_premium' && t.strike_price === null && strikeWindow(t)[1] <= sealed;

/**
 * Whether `start_twap` is due to be recorded again: recorded (at activation) before every
 * minute of its days was written, and now they are. `sealedAt(t)` is the time before which
 * all minutes are written at t. A loan recorded before this rule has its activation's time.
 */
export function startTwapDue(l: Loan, sealedAt: (t: number) => number, now: number): boolean {
  if (l.status === 'draft' || l.status === 'cancelled') return false;
  const recorded = l.start_twap_at ?? l.history.find((h) => h.status === 'active')?.at;
  const end = startTwapWindow(l)[1];
  return recorded !== undefined && sealedAt(recorded) < end && end <= sealedAt(now);
}

export interface Tranche {
  id: number;
  quantity: number;
  /** ms */
  disbursed_at: number;
  strike_basis: StrikeBasis;
  /** Given for `fixed`; fixed by the service for `twap_premium` once its days have passed, null before. */
  strike_price: number | null;
  premium_pct: number | null;
  /** ms */
  expires_at: number;
  settlement: Settlement | null;
  settled_quantity: number | null;
}

/** The fields a lender sets (POST, PATCH in draft). */
export interface LoanTerms {
  market_maker: string;
  asset: string;
  model: LoanModel;
  quantity: number;
  quote_amount: number;
  retainer_fee_usd_month: number;
  interest_rate_pct: number;
  settlement_asset: string;
  collateral: { asset: string; amount: number } | null;
  /** Exchange slugs the market maker must quote on. */
  exchanges: string[];
  /** Pair names (e.g. `ABC/USDT`), each listed on at least one of `exchanges`: quoted there. */
  pairs: string[];
  /** ms */
  start_date: number;
  end_date: number;
  tranches: Tranche[];
}

export interface HistoryEntry {
  status: LoanStatus;
  /** ms */
  at: number;
  /** The user who made the change; 0 for the service's own moves. */
  by: number;
}

/** A record's body: the terms and what the service keeps. The id, lender and status are the record's. */
export interface LoanBody extends LoanTerms {
  start_twap: number | null;
  /** When `start_twap` was recorded (ms); absent before activation. */
  start_twap_at?: number;
  history: HistoryEntry[];
  /** The RFQ it was awarded from, or null. */
  rfq: number | null;
  /** ms */
  created_at: number;
  /** The inactive KPI targets an RFQ award made with it, switched on once it is active. */
  award_targets?: number[];
  /** Whether they were switched on (so a target the project turns off later stays off). */
  award_targets_active?: boolean;
}

export type LoanRecord = AgreementRecord<LoanBody>;

export interface Loan extends LoanBody {
  id: number;
  organization: string;
  status: LoanStatus;
  version: number;
}

export function loanOf(r: LoanRecord): Loan {
  return { ...r.body, id: r.id, organization: r.organization, status: r.status as LoanStatus, version: r.version };
}

/** The next version's record of a loan: its body and status as given, the rest carried over. */
export function loanRecord(loan: Loan, change: { at: number; by: number; commit?: string }): LoanRecord {
  const { id, organization, status, version, ...body } = loan;
  return {
    kind: 'loan',
    id,
    version,
    organization,
    market_maker: body.market_maker,
    asset: body.asset,
    parent: body.rfq ?? 0,
    status,
    body,
    commit: change.commit ?? '',
    changed_at: change.at,
    changed_by: change.by,
  };
}

/** A new loan in `draft`: version 1, one history entry. */
export function draftLoan(id: number, organization: string, terms: LoanTerms, at: number, by: number, rfq: number | null = null): Loan {
  return { ...terms, id, organization, status: 'draft', version: 1, start_twap: null, history: [{ status: 'draft', at, by }], rfq, created_at: at };
}

/** A loan moved to `status` at `at`: the next version with its history entry. */
export function moved(loan: Loan, status: LoanStatus, at: number, by: number): Loan {
  return { ...loan, status, version: loan.version + 1, history: [...loan.history, { status, at, by }] };
}

/** The statuses each action is allowed in. */
export const ACTION_FROM: Record<LoanAction, readonly LoanStatus[]> = {
  activate: ['draft'],
  cancel: ['draft'],
  recall: ['active'],
  // Tranches are settled while the loan runs and once its last one has expired.
  settle_tranche: ['active', 'settlement_due'],
  default: ['settlement_due'],
};

export const actionAllowed = (action: LoanAction, status: LoanStatus): boolean => ACTION_FROM[action].includes(status);

/** Whether the lender may still change the terms (PATCH): only a draft's. */
export const termsEditable = (status: LoanStatus): boolean => status === 'draft';

/** Tokens still out: the unsettled tranches of a loan that was disbursed and not taken back (a default leaves them out). */
export function tokensOut(loan: Pick<Loan, 'tranches' | 'status'>): number {
  if (loan.status !== 'active' && loan.status !== 'settlement_due' && loan.status !== 'defaulted') return 0;
  return loan.tranches.reduce((s, t) => s + (t.settlement === null ? t.quantity : 0), 0);
}
