// Requests for proposals and the proposals made to them (addendum section 8; docs/rfq.md):
// their fields, their states and which change each state allows. Stored as versioned
// records (domain/agreements/store.ts, kinds 'rfq' and 'proposal'): every change is a new
// version, so a proposal's revisions and each record's history stay readable.
import type { AgreementRecord } from '../agreements/store.ts';
import type { LoanModel, StrikeBasis } from '../loans/loan.ts';
import type { Direction, TargetSession } from '../targets/facts.ts';

export const RFQ_STATUSES = ['draft', 'open', 'closed', 'awarded', 'cancelled'] as const;
export type RfqStatus = (typeof RFQ_STATUSES)[number];

export const RFQ_ACTIONS = ['open', 'close', 'cancel'] as const;
export type RfqAction = (typeof RFQ_ACTIONS)[number];

export const PROPOSAL_STATUSES = ['submitted', 'withdrawn', 'shortlisted', 'accepted', 'rejected', 'expired'] as const;
export type ProposalStatus = (typeof PROPOSAL_STATUSES)[number];

/** The changes of PATCH .../proposals/<pid>/ (`{action, ...}`). */
export const PROPOSAL_ACTIONS = ['revise', 'withdraw', 'shortlist', 'reject'] as const;
export type ProposalAction = (typeof PROPOSAL_ACTIONS)[number];

/** A requirement of an RFQ, or a KPI a proposal offers: an `mm` target's terms. */
export interface Kpi {
  metric: string;
  /** Absent: every exchange (of the RFQ, or of the proposal). */
  exchange: string | null;
  /** Absent: every pair of the RFQ on the exchange(s). */
  pair: string | null;
  threshold: number;
  direction: Direction;
  /** null: all hours. */
  market_hours: TargetSession | null;
}

export interface PairRef {
  exchange: string;
  pair: string;
}

export interface HistoryEntry<S extends string> {
  status: S;
  /** ms */
  at: number;
  /** The user; 0 for the service's own moves (the deadline, expiry). */
  by: number;
}

/** What a project sets on an RFQ (POST, PATCH in draft). */
export interface RfqTerms {
  asset: string;
  title: string;
  description: string;
  models: LoanModel[];
  exchanges: string[];
  /** Pair names (e.g. `ABC/USDT`), each listed on at least one of `exchanges` (as a loan's). */
  pairs: string[];
  /** The exchange pairs these make: each pair on each listed exchange that lists it, fixed when the RFQ is written. */
  markets: PairRef[];
  loan_budget: { quantity: number; quote_amount: number };
  term_days: number;
  requirements: Kpi[];
  /** Market-maker slugs; empty: every market maker. */
  invited: string[];
  sealed: boolean;
  /** ms */
  deadline: number;
}

export interface RfqBody extends RfqTerms {
  awarded_proposal: number | null;
  /** The draft loan the award made. */
  loan: number | null;
  history: HistoryEntry<RfqStatus>[];
  /** ms */
  created_at: number;
}

export interface Rfq extends RfqBody {
  id: number;
  organization: string;
  status: RfqStatus;
  version: number;
}

export interface ProposalTranche {
  quantity: number;
  strike_basis: StrikeBasis;
  strike_price: number | null;
  premium_pct: number | null;
  expires_after_days: number;
}

/** What a market maker offers (POST, PATCH `revise`). */
export interface ProposalTerms {
  model: LoanModel;
  loan: { quantity: number; quote_amount: number; tranches: ProposalTranche[] };
  retainer_fee_usd_month: number;
  /** Yearly, on the loan's value (docs/rfq.md, "cost"); beyond the addendum's list, default 0. */
  interest_rate_pct: number;
  kpis: Kpi[];
  exchanges: string[];
  notes: string;
  /** ms */
  valid_until: number;
}

export interface ProposalBody extends ProposalTerms {
  history: HistoryEntry<ProposalStatus>[];
  /** ms */
  created_at: number;
}

export interface Proposal extends ProposalBody {
  id: number;
  rfq: number;
  /** The RFQ's project. */
  organization: string;
  market_maker: string;
  asset: string;
  status: ProposalStatus;
  version: number;
}

export const rfqOf = (r: AgreementRecord<RfqBody>): Rfq => ({ ...r.body, id: r.id, organization: r.organization, status: r.status as RfqStatus, version: r.version });

export const proposalOf = (r: AgreementRecord<ProposalBody>): Proposal => ({
  ...r.body,
  id: r.id,
  rfq: r.parent,
  organization: r.organization,
  market_maker: r.market_maker,
  asset: r.asset,
  status: r.status as ProposalStatus,
  version: r.version,
});

export interface Change {
  at: number;
  by: number;
  commit?: string;
}

export function rfqRecord(q: Rfq, c: Change): AgreementRecord<RfqBody> {
  const { id, organization, status, version, ...body } = q;
  return { kind: 'rfq', id, version, organization, market_maker: '', asset: q.asset, parent: 0, status, body, commit: c.commit ?? '', changed_at: c.at, changed_by: c.by };
}

export function proposalRecord(p: Proposal, c: Change): AgreementRecord<ProposalBody> {
  const { id, rfq, organization, market_maker, asset, status, version, ...body } = p;
  return { kind: 'proposal', id, version, organization, market_maker, asset, parent: rfq, status, body, commit: c.commit ?? '', changed_at: c.at, changed_by: c.by };
}

export function newRfq(id: number, organization: string, terms: RfqTerms, at: number, by: number): Rfq {
  return { ...terms, id, organization, status: 'draft', version: 1, awarded_proposal: null, loan: null, history: [{ status: 'draft', at, by }], created_at: at };
}

export function newProposal(id: number, rfq: Rfq, marketMaker: string, terms: ProposalTerms, at: number, by: number): Proposal {
  return {
    ...terms,
    id,
    rfq: rfq.id,
    organization: rfq.organization,
    market_maker: marketMaker,
    asset: rfq.asset,
    status: 'submitted',
    version: 1,
    history: [{ status: 'submitted', at, by }],
    created_at: at,
  };
}

/** The next version of a record: its status as given (a history entry when it changes, or on a revision). */
export function nextRfq(q: Rfq, status: RfqStatus, at: number, by: number, over: Partial<RfqBody> = {}): Rfq {
  const history = status !== q.status ? [...q.history, { status, at, by }] : q.history;
  return { ...q, ...over, status, version: q.version + 1, history };
}

export function nextProposal(p: Proposal, status: ProposalStatus, at: number, by: number, over: Partial<ProposalTerms> = {}, revised = false): Proposal {
  const history = status !== p.status || revised ? [...p.history, { status, at, by }] : p.history;
  return { ...p, ...over, status, version: p.version + 1, history };
}

/** Which RFQ status each action needs. */
export const RFQ_ACTION_FROM: Record<RfqAction, readonly RfqStatus[]> = {
  open: ['draft'],
  close: ['open'],
  cancel: ['draft', 'open', 'closed'],
};
/** Whether the project may still change the request's terms (PATCH): only a draft's. */
export const rfqTermsEditable = (status: RfqStatus): boolean => status === 'draft';
export const RFQ_ACTION_TO: Record<RfqAction, RfqStatus> = { open: 'open', close: 'closed', cancel: 'cancelled' };

/** Proposal statuses still in play (may be revised, withdrawn, shortlisted, rejected, awarded; expire). */
export const LIVE_PROPOSAL: readonly ProposalStatus[] = ['submitted', 'shortlisted'];

export const PROPOSAL_ACTION_FROM: Record<ProposalAction, readonly ProposalStatus[]> = {
  revise: LIVE_PROPOSAL,
  withdraw: LIVE_PROPOSAL,
  shortlist: ['submitted'],
  reject: LIVE_PROPOSAL,
};

/** The RFQ statuses in which each proposal action is allowed. */
export const PROPOSAL_ACTION_RFQ: Record<ProposalAction, readonly RfqStatus[]> = {
  // A revision is a new offer: only while offers are taken.
  revise: ['open'],
  withdraw: ['open', 'closed'],
  shortlist: ['open', 'closed'],
  reject: ['open', 'closed'],
};

export const PROPOSAL_ACTION_TO: Record<ProposalAction, ProposalStatus> = {
  // A changed offer goes back to `submitted`: a shortlist was of the earlier terms.
  revise: 'submitted',
  withdraw: 'withdrawn',
  shortlist: 'shortlisted',
  reject: 'rejected',
};

/** Whether proposals are taken: open and before the deadline. */
export const acceptsProposals = (q: Pick<Rfq, 'status' | 'deadline'>, now: number): boolean => q.status === 'open' && now < q.deadline;

/** Whether the project may see the proposals: always, or after the deadline when sealed. */
export const proposalsUnsealed = (q: Pick<Rfq, 'sealed' | 'deadline'>, now: number): boolean => !q.sealed || now >= q.deadline;

/** Whether a market maker is invited (an empty list invites every market maker). */
export const invites = (q: Pick<Rfq, 'invited'>, marketMaker: string): boolean => q.invited.length === 0 || q.invited.includes(marketMaker);

/** Days of a month in retainer arithmetic. */
export const DAYS_PER_MONTH = 30;
export const DAYS_PER_YEAR = 365;

/** The words of a refused change (400 `{message}`, 403 `{detail}`, or a field's message). */
export const RFQ_STATE_MESSAGES = {
  rfqAction: (action: RfqAction, q: Rfq) => `Cannot ${action} RFQ ${q.id}: it is ${q.status}.`,
  patch: (q: Rfq) => `RFQ ${q.id} is ${q.status}: only a draft can be changed.`,
  openPast: (q: Rfq) => `Cannot open RFQ ${q.id}: its deadline has passed; set a later one first.`,
  notAccepting: (q: Rfq) => `RFQ ${q.id} is ${q.status === 'open' ? 'past its deadline' : q.status}: proposals are not accepted.`,
  live: (mm: string, p: Proposal) => `${mm} already has proposal ${p.id} on this RFQ (${p.status}): revise it instead.`,
  proposalAction: (action: ProposalAction, p: Proposal, q: Rfq) =>
    !PROPOSAL_ACTION_FROM[action].includes(p.status)
      ? `Cannot ${action} proposal ${p.id}: it is ${p.status}.`
      : q.status === 'open' && action === 'revise'
        ? `Cannot revise proposal ${p.id}: RFQ ${q.id} is past its deadline.`
        : `Cannot ${action} proposal ${p.id}: RFQ ${q.id} is ${q.status}.`,
  award: (q: Rfq) => `Cannot award RFQ ${q.id}: it is ${q.status}.`,
  awardSealed: (q: Rfq) => `Cannot award RFQ ${q.id}: it is sealed until its deadline (${new Date(q.deadline).toISOString()}).`,
  awardProposal: (p: Proposal) => `Cannot award proposal ${p.id}: it is ${p.status}.`,
  notOfRfq: (id: number) => `Proposal ${id} is not a proposal of this RFQ.`,
  sealed: (q: Rfq) => `RFQ ${q.id} is sealed: its proposals are shown after the deadline (${new Date(q.deadline).toISOString()}).`,
  otherProject: (q: Rfq) => `Must be an asset of ${q.organization}, the project of this RFQ.`,
  noProjects: 'Only members of a project may request proposals.',
  notProposer: 'Only an invited market maker may propose.',
  marketMaker: (s: string) => `"${s}" is not an invited market maker you may propose for.`,
  chooseMarketMaker: 'Name the market maker that proposes: you may propose for more than one.',
} as const;
