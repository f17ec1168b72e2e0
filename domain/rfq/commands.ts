// The changes of RFQs and proposals (addendum section 8; docs/rfq.md), one command each:
// it takes the caller, checks the rights, the state and the terms, writes, and answers the
// new records or why not (domain/outcome.ts). Every command runs under the agreements lock
// with the moves the clock has made due written first and the records read again inside
// it, so a check and its write see the same versions.
import { isDeepStrictEqual } from 'node:util';
import { AGREEMENTS_LOCK } from '../agreements/store.ts';
import { decide, refuse, type FieldErrors, type Outcome } from '../outcome.ts';
import { mayRequestProposals, type RfqCaller } from './access.ts';
import { writeAward, type AwardDeps, type AwardResult } from './award.ts';
import { applyDueLocked } from './deadlines.ts';
import { proposalsOfRfq, visibleProposal, visibleRfq } from './reads.ts';
import {
  acceptsProposals,
  LIVE_PROPOSAL,
  newProposal,
  newRfq,
  nextProposal,
  nextRfq,
  proposalRecord,
  proposalsUnsealed,
  PROPOSAL_ACTION_FROM,
  PROPOSAL_ACTION_RFQ,
  PROPOSAL_ACTION_TO,
  RFQ_ACTION_FROM,
  RFQ_ACTION_TO,
  RFQ_STATE_MESSAGES,
  rfqRecord,
  rfqTermsEditable,
  type Proposal,
  type ProposalAction,
  type Rfq,
  type RfqAction,
} from './rfq.ts';
import { proposalTermsOf, rfqTermsOf, type ProposalInput, type RfqContext, type RfqInput } from './terms.ts';

/** What the commands write through: the award's dependencies (domain/rfq/award.ts) are all of them. */
export type RfqEnv = AwardDeps;

export interface RfqWithProposal {
  rfq: Rfq;
  proposal: Proposal;
}

/** Runs a change under the agreements lock, with the due moves written first. */
function locked<T>(env: RfqEnv, c: RfqCaller, steps: () => Promise<T>): Promise<Outcome<T>> {
  return decide(() =>
    env.locks.with(AGREEMENTS_LOCK, async () => {
      await applyDueLocked(env.store, c.now);
      return steps();
    }),
  );
}

/** The RFQ the caller may see, read inside the lock; unknown otherwise. */
const rfqOrUnknown = async (env: RfqEnv, c: RfqCaller, id: number): Promise<Rfq> => (await visibleRfq(env.store, c, id)) ?? refuse.unknown();

/** The RFQ the caller may change; unknown when hidden, forbidden when only seen. */
async function managedRfq(env: RfqEnv, c: RfqCaller, id: number): Promise<Rfq> {
  const q = await rfqOrUnknown(env, c, id);
  return c.access.manages(q) ? q : refuse.forbidden();
}

function termsContext(c: RfqCaller): RfqContext {
  const manageable = new Set(c.lists.assets.filter((a) => c.organizations.get(a.owner)?.kind === 'project' && c.access.manages({ organization: a.owner })).map((a) => a.symbol));
  return { lists: c.lists, organizations: c.organizations, manageableAssets: manageable, now: c.now };
}

const checkedOrRefused = <T>(r: { terms: T } | { errors: FieldErrors }): T => ('errors' in r ? refuse.fields(r.errors) : r.terms);

/** A new RFQ, in draft, for an asset of a project the caller manages. */
export function createRfq(env: RfqEnv, c: RfqCaller, input: RfqInput): Promise<Outcome<Rfq>> {
  return decide(async () => {
    if (!mayRequestProposals(c.access)) refuse.forbidden(RFQ_STATE_MESSAGES.noProjects);
    const terms = checkedOrRefused(rfqTermsOf(input, termsContext(c)));
    const owner = c.lists.assets.find((a) => a.symbol === terms.asset)!.owner;
    return env.locks.with(AGREEMENTS_LOCK, async () => {
      const q = newRfq(await env.ids.next('rfqs', await env.store.maxId('rfq')), owner, terms, c.now, c.user);
      await env.store.write([rfqRecord(q, { at: c.now, by: c.user })]);
      return q;
    });
  });
}

/** A draft's terms changed; the asset must stay one of the same project. */
export function changeRfq(env: RfqEnv, c: RfqCaller, id: number, input: RfqInput): Promise<Outcome<Rfq>> {
  return locked(env, c, async () => {
    const q = await managedRfq(env, c, id);
    if (!rfqTermsEditable(q.status)) refuse.state(RFQ_STATE_MESSAGES.patch(q));
    const { id: _id, organization, status, version, awarded_proposal, loan, history, created_at, ...current } = q;
    const terms = checkedOrRefused(rfqTermsOf(input, termsContext(c), current));
    if (c.lists.assets.find((a) => a.symbol === terms.asset)?.owner !== q.organization) refuse.fields({ asset: [RFQ_STATE_MESSAGES.otherProject(q)] });
    // A change that changes nothing is no new version (nor an event).
    if (isDeepStrictEqual({ ...current, ...terms }, current)) return q;
    const next = nextRfq(q, 'draft', c.now, c.user, terms);
    await env.store.write([rfqRecord(next, { at: c.now, by: c.user })]);
    return next;
  });
}

/** open, close or cancel. */
export function actOnRfq(env: RfqEnv, c: RfqCaller, id: number, action: RfqAction): Promise<Outcome<Rfq>> {
  return locked(env, c, async () => {
    const q = await managedRfq(env, c, id);
    if (!RFQ_ACTION_FROM[action].includes(q.status)) refuse.state(RFQ_STATE_MESSAGES.rfqAction(action, q));
    if (action === 'open' && q.deadline <= c.now) refuse.state(RFQ_STATE_MESSAGES.openPast(q));
    const next = nextRfq(q, RFQ_ACTION_TO[action], c.now, c.user);
    await env.store.write([rfqRecord(next, { at: c.now, by: c.user })]);
    return next;
  });
}

/** The market maker a caller proposes for: the one named, or its only one. */
function proposerOf(c: RfqCaller, q: Rfq, named: string | undefined): string {
  const mine = c.access.staff ? [...c.organizations.values()].filter((o) => o.kind === 'market_maker' && (q.invited.length === 0 || q.invited.includes(o.slug))).map((o) => o.slug) : c.access.proposers(q);
  if (mine.length === 0) refuse.forbidden(RFQ_STATE_MESSAGES.notProposer);
  if (named !== undefined) return mine.includes(named) ? named : refuse.fields({ market_maker: [RFQ_STATE_MESSAGES.marketMaker(named)] });
  return mine.length === 1 ? mine[0]! : refuse.fields({ market_maker: [RFQ_STATE_MESSAGES.chooseMarketMaker] });
}

/** A proposal of an invited market maker, while the RFQ takes proposals; one live proposal per market maker. */
export function propose(env: RfqEnv, c: RfqCaller, id: number, input: ProposalInput): Promise<Outcome<RfqWithProposal>> {
  return locked(env, c, async () => {
    const q = await rfqOrUnknown(env, c, id);
    const maker = proposerOf(c, q, input.market_maker);
    if (!acceptsProposals(q, c.now)) refuse.state(RFQ_STATE_MESSAGES.notAccepting(q));
    const live = (await proposalsOfRfq(env.store, q.id, c.now)).find((p) => p.market_maker === maker && LIVE_PROPOSAL.includes(p.status));
    if (live) refuse.state(RFQ_STATE_MESSAGES.live(maker, live));
    const terms = checkedOrRefused(proposalTermsOf(input, q, c.now));
    const p = newProposal(await env.ids.next('proposals', await env.store.maxId('proposal')), q, maker, terms, c.now, c.user);
    await env.store.write([proposalRecord(p, { at: c.now, by: c.user })]);
    return { rfq: q, proposal: p };
  });
}

/** revise or withdraw (the market maker), shortlist or reject (the project). */
export function changeProposal(env: RfqEnv, c: RfqCaller, id: number, pid: number, input: ProposalInput & { action: ProposalAction }): Promise<Outcome<RfqWithProposal>> {
  return locked(env, c, async () => {
    const q = await rfqOrUnknown(env, c, id);
    const p = (await visibleProposal(env.store, c, q, pid)) ?? refuse.unknown();
    const a = input.action;
    const byMaker = a === 'revise' || a === 'withdraw';
    if (!(c.access.staff || (byMaker ? c.access.makers.has(p.market_maker) : c.access.manages(q)))) refuse.forbidden();
    const rfqAllows = PROPOSAL_ACTION_RFQ[a].includes(q.status) && (a !== 'revise' || acceptsProposals(q, c.now));
    if (!PROPOSAL_ACTION_FROM[a].includes(p.status) || !rfqAllows) refuse.state(RFQ_STATE_MESSAGES.proposalAction(a, p, q));
    let next: Proposal;
    if (a === 'revise') {
      const { action: _, ...fields } = input;
      const { id: _id, rfq, organization, market_maker, asset, status, version, history, created_at, ...current } = p;
      next = nextProposal(p, PROPOSAL_ACTION_TO[a], c.now, c.user, checkedOrRefused(proposalTermsOf(fields, q, c.now, current)), true);
    } else next = nextProposal(p, PROPOSAL_ACTION_TO[a], c.now, c.user);
    await env.store.write([proposalRecord(next, { at: c.now, by: c.user })]);
    return { rfq: q, proposal: next };
  });
}

/** The award (domain/rfq/award.ts): once the proposals are unsealed, of a live proposal of this RFQ; all or nothing. */
export function awardRfq(env: RfqEnv, c: RfqCaller, id: number, pid: number, commit: string): Promise<Outcome<AwardResult>> {
  return locked(env, c, async () => {
    const q = await managedRfq(env, c, id);
    if (q.status !== 'open' && q.status !== 'closed') refuse.state(RFQ_STATE_MESSAGES.award(q));
    if (!proposalsUnsealed(q, c.now)) refuse.state(RFQ_STATE_MESSAGES.awardSealed(q));
    const all = await proposalsOfRfq(env.store, q.id, c.now);
    const p = all.find((x) => x.id === pid) ?? refuse.fields({ proposal: [RFQ_STATE_MESSAGES.notOfRfq(pid)] });
    if (!LIVE_PROPOSAL.includes(p.status)) refuse.state(RFQ_STATE_MESSAGES.awardProposal(p));
    return writeAward(env, q, p, all, c.now, c.user, commit);
  });
}
