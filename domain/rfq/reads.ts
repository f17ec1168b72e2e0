// What a caller may read of RFQs and proposals (addendum section 8; docs/rfq.md), each
// record as it stands at the caller's moment (domain/rfq/deadlines.ts): an RFQ past its
// deadline reads closed and a proposal past valid_until expired, whether the keeper has
// written that move yet or not. Reads never write. What the caller may not see is unknown.
import type { AgreementStore } from '../agreements/store.ts';
import { decide, refuse, type Outcome } from '../outcome.ts';
import type { RfqCaller } from './access.ts';
import { proposalAsOf, rfqAsOf } from './deadlines.ts';
import { proposalOf, proposalsUnsealed, RFQ_STATE_MESSAGES, rfqOf, type Proposal, type ProposalBody, type Rfq, type RfqBody } from './rfq.ts';

export interface RfqFilter {
  organizations?: readonly string[];
  assets?: readonly string[];
  statuses?: readonly string[];
}

export interface ProposalFilter {
  statuses?: readonly string[];
  market_makers?: readonly string[];
}

const has = (list: readonly string[] | undefined, v: string) => !list || list.includes(v);

/** The RFQ as the caller may see it; undefined for an unknown id and for one hidden from the caller. */
export async function visibleRfq(store: AgreementStore, c: RfqCaller, id: number): Promise<Rfq | undefined> {
  const r = await store.one<RfqBody>('rfq', id);
  const q = r && rfqAsOf(rfqOf(r), c.now);
  return q && c.access.canSeeRfq(q) ? q : undefined;
}

/** The proposals of an RFQ, each as it stands at the caller's moment. */
export async function proposalsOfRfq(store: AgreementStore, rfq: number, now: number): Promise<Proposal[]> {
  return (await store.latest<ProposalBody>('proposal', { parent: rfq })).map((r) => proposalAsOf(proposalOf(r), now));
}

/** The RFQs the caller may see that pass the filter, newest first. */
export async function listRfqs(store: AgreementStore, c: RfqCaller, f: RfqFilter): Promise<Rfq[]> {
  return (await store.latest<RfqBody>('rfq'))
    .map((r) => rfqAsOf(rfqOf(r), c.now))
    .filter((q) => c.access.canSeeRfq(q) && has(f.organizations, q.organization) && has(f.assets, q.asset) && has(f.statuses, q.status))
    .sort((a, b) => b.id - a.id);
}

export function readRfq(store: AgreementStore, c: RfqCaller, id: number): Promise<Outcome<Rfq>> {
  return decide(async () => (await visibleRfq(store, c, id)) ?? refuse.unknown());
}

/** Versions oldest first, with the move the clock has made due as the last; a market maker never saw the drafts. */
export function rfqVersions(store: AgreementStore, c: RfqCaller, id: number): Promise<Outcome<Rfq[]>> {
  return decide(async () => {
    if (!(await visibleRfq(store, c, id))) refuse.unknown();
    const versions = (await store.versions<RfqBody>('rfq', id)).map(rfqOf);
    const last = versions.at(-1);
    const due = last && rfqAsOf(last, c.now);
    if (due && due !== last) versions.push(due);
    return versions.filter((v) => c.access.manages(v) || v.status !== 'draft');
  });
}

/** Of these proposals, those the caller may see; the project of a sealed RFQ before its deadline is refused (403) unless it proposed too. */
function visibleProposals(c: RfqCaller, q: Rfq, all: readonly Proposal[]): Proposal[] {
  if (c.access.staff) return [...all];
  const own = all.filter((p) => c.access.makers.has(p.market_maker));
  if (c.access.projects.has(q.organization)) {
    if (!proposalsUnsealed(q, c.now)) return own.length > 0 ? own : refuse.forbidden(RFQ_STATE_MESSAGES.sealed(q));
    return [...all];
  }
  return own;
}

/** The RFQ's proposals the caller may see that pass the filter, oldest first. */
export function listProposals(store: AgreementStore, c: RfqCaller, id: number, f: ProposalFilter): Promise<Outcome<{ rfq: Rfq; proposals: Proposal[] }>> {
  return decide(async () => {
    const rfq = (await visibleRfq(store, c, id)) ?? refuse.unknown();
    const proposals = visibleProposals(c, rfq, await proposalsOfRfq(store, rfq.id, c.now))
      .filter((p) => has(f.statuses, p.status) && has(f.market_makers, p.market_maker))
      .sort((a, b) => a.id - b.id);
    return { rfq, proposals };
  });
}

/** The proposal of that RFQ as the caller may see it; undefined when either is unknown or hidden. */
export async function visibleProposal(store: AgreementStore, c: RfqCaller, rfq: Rfq, pid: number): Promise<Proposal | undefined> {
  const r = await store.one<ProposalBody>('proposal', pid);
  const p = r && proposalAsOf(proposalOf(r), c.now);
  return p && p.rfq === rfq.id && c.access.canSeeProposal(rfq, p, c.now) ? p : undefined;
}

export function readProposal(store: AgreementStore, c: RfqCaller, id: number, pid: number): Promise<Outcome<{ rfq: Rfq; proposal: Proposal }>> {
  return decide(async () => {
    const rfq = (await visibleRfq(store, c, id)) ?? refuse.unknown();
    const proposal = (await visibleProposal(store, c, rfq, pid)) ?? refuse.unknown();
    return { rfq, proposal };
  });
}

/** A proposal's versions, oldest first, with the move the clock has made due as the last. */
export function proposalVersions(store: AgreementStore, c: RfqCaller, id: number, pid: number): Promise<Outcome<Proposal[]>> {
  return decide(async () => {
    const rfq = (await visibleRfq(store, c, id)) ?? refuse.unknown();
    if (!(await visibleProposal(store, c, rfq, pid))) refuse.unknown();
    const versions = (await store.versions<ProposalBody>('proposal', pid)).map(proposalOf);
    const last = versions.at(-1);
    const due = last && proposalAsOf(last, c.now);
    if (due && due !== last) versions.push(due);
    return versions;
  });
}
