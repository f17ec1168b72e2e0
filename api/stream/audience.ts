// Who a subscriber is and what it asked: the filters checked as the market endpoints check
// theirs (an asset the caller may not see is a 400 naming it), and per event whether it
// reaches this subscriber. Visibility is the endpoints' own (domain/*/visibility.ts,
// domain/rfq/access.ts), asked once per connection and again at each recheck.
import type { User } from '../../domain/accounts/users.ts';
import type { AgreementStore } from '../../domain/agreements/store.ts';
import { loanOf, type LoanRecord } from '../../domain/loans/loan.ts';
import { loanAccess, type LoanAccess } from '../../domain/loans/visibility.ts';
import { callerScope, organizationsOf, type VisibilitySource } from '../../domain/reference/visibility.ts';
import { rfqAccess, type RfqAccess } from '../../domain/rfq/access.ts';
import { rfqOf, type RfqBody } from '../../domain/rfq/rfq.ts';
import { targetAccess, type TargetAccess } from '../../domain/targets/visibility.ts';
import { badRequest, type FieldErrors } from '../http/errors.ts';
import { ASSET_MESSAGE } from '../../domain/reference/visibility.ts';
import { DEFAULT_BPS, EVENT_TYPES, type EventType, type HubEvent } from './events.ts';

/** The query of GET /v2/stream/ once the contract has checked its shape. */
export interface StreamQuery {
  events?: EventType[];
  assets?: string[];
  exchanges?: string[];
  pairs?: string[];
  bps?: number[];
}

export interface Audience {
  types: ReadonlySet<EventType>;
  /** `exchange\0pair` of the minutes it gets: the caller's pairs, narrowed by the filters. */
  minutePairs: ReadonlySet<string>;
  /** The filters as given (undefined: not narrowed). */
  assets: ReadonlySet<string> | undefined;
  exchanges: ReadonlySet<string> | undefined;
  pairs: ReadonlySet<string> | undefined;
  levels: readonly number[];
  levelsKey: string;
  targets: TargetAccess;
  loans: LoanAccess;
  rfqs: RfqAccess;
  /** The caller's organizations when it connected (a change ends the stream). */
  organizations: string;
}

export const pairKey = (exchange: string, pair: string) => `${exchange}\u0000${pair}`;

/**
 * The assets of the loans and RFQs the caller sees: a market maker sees a loan made to it,
 * or an RFQ inviting it, on an asset it does not cover, and may filter their events by it.
 */
async function agreementAssets(store: AgreementStore, loans: LoanAccess, rfqs: RfqAccess): Promise<Set<string>> {
  const [l, r] = await Promise.all([store.latest<LoanRecord['body']>('loan'), store.latest<RfqBody>('rfq')]);
  const out = new Set<string>();
  for (const rec of l) {
    const loan = loanOf(rec);
    if (loans.canSee(loan)) out.add(loan.asset);
  }
  for (const rec of r) {
    const rfq = rfqOf(rec);
    if (rfqs.canSeeRfq(rfq)) out.add(rfq.asset);
  }
  return out;
}

/** The audience of a caller's request; 400 naming each filter value the caller may not use. */
export async function audienceOf(src: VisibilitySource & { agreements: AgreementStore }, user: User, q: StreamQuery): Promise<Audience> {
  const [scope, targets, loans, rfqs, orgs] = await Promise.all([
    callerScope(src, user),
    targetAccess(src, user),
    loanAccess(src, user),
    rfqAccess(src, user),
    organizationsOf(src, user),
  ]);
  const problems: Record<string, string[]> = {};
  const add = (field: string, message: string) => {
    const list = (problems[field] ??= []);
    if (!list.includes(message)) list.push(message);
  };
  const mine = new Set(scope.assets);
  const outside = (q.assets ?? []).filter((a) => !mine.has(a));
  if (outside.length > 0) {
    const seen = await agreementAssets(src.agreements, loans, rfqs);
    for (const a of outside) if (!seen.has(a)) add('assets', ASSET_MESSAGE(a));
  }
  for (const e of q.exchanges ?? []) if (!scope.exchanges.has(e)) add('exchanges', `"${e}" is not a known exchange.`);
  const myPairs = new Set(scope.pairs.map((p) => p.pair));
  for (const p of q.pairs ?? []) if (!myPairs.has(p)) add('pairs', `"${p}" is not one of your pairs.`);
  if (Object.keys(problems).length > 0) throw badRequest(problems as FieldErrors);

  const assets = q.assets && new Set(q.assets);
  const exchanges = q.exchanges && new Set(q.exchanges);
  const pairs = q.pairs && new Set(q.pairs);
  const minutePairs = new Set(
    scope.pairs.filter((p) => (!assets || assets.has(p.asset)) && (!exchanges || exchanges.has(p.exchange)) && (!pairs || pairs.has(p.pair))).map((p) => pairKey(p.exchange, p.pair)),
  );
  const levels = [...new Set(q.bps ?? DEFAULT_BPS)].sort((a, b) => a - b);
  return {
    types: new Set(q.events ?? EVENT_TYPES),
    minutePairs,
    assets,
    exchanges,
    pairs,
    levels,
    levelsKey: levels.join(','),
    targets,
    loans,
    rfqs,
    organizations: orgs.map((o) => o.slug).sort().join(','),
  };
}

/** Whether the event reaches the subscriber: of a type it asked for, within its filters, one it may see. */
export function reaches(a: Audience, e: HubEvent, now: number): boolean {
  if (!a.types.has(e.type)) return false;
  if (a.assets && !a.assets.has(e.asset)) return false;
  switch (e.type) {
    case 'minute':
      return a.minutePairs.has(e.pairKey);
    case 'target':
      if (a.exchanges && !a.exchanges.has(e.exchange)) return false;
      if (a.pairs && !a.pairs.has(e.pair)) return false;
      return a.targets.canSee(e.owner);
    case 'loan':
      return a.loans.canSee(e.parties);
    case 'rfq':
      // An RFQ that could not be read: only those who see the change without it.
      if (e.proposal) return e.rfq ? a.rfqs.canSeeProposal(e.rfq, e.proposal, now) : a.rfqs.staff || a.rfqs.makers.has(e.proposal.market_maker);
      return e.rfq ? a.rfqs.canSeeRfq(e.rfq) : a.rfqs.staff;
  }
}
