// Who sees and who changes which RFQ and proposal (addendum section 8; docs/rfq.md):
// members of the project manage its RFQs and see every proposal of them (after the
// deadline when sealed); market makers see the RFQs past `draft` that invite them (or
// everyone) and only their own proposals; staff see and manage everything. Whatever a
// caller may not see reads as absent (404), so existence does not leak.
import type { User } from '../accounts/users.ts';
import type { Organization, ReferenceLists } from '../reference/repository.ts';
import { organizationsOf, type VisibilitySource } from '../reference/visibility.ts';
import { invites, proposalsUnsealed, type Proposal, type Rfq } from './rfq.ts';

/** Whether the caller may request proposals at all: staff, or a member of a project. */
export const mayRequestProposals = (a: Pick<RfqAccess, 'staff' | 'projects'>): boolean => a.staff || a.projects.size > 0;

export interface RfqAccess {
  staff: boolean;
  /** The caller's organizations (staff: all), by slug. */
  organizations: Map<string, Organization>;
  /** The caller's project organizations. */
  projects: Set<string>;
  /** The caller's market-maker organizations. */
  makers: Set<string>;
  canSeeRfq(q: Pick<Rfq, 'organization' | 'status' | 'invited'>): boolean;
  manages(q: Pick<Rfq, 'organization'>): boolean;
  /** The market makers of the caller that may propose to this RFQ. */
  proposers(q: Pick<Rfq, 'invited'>): string[];
  canSeeProposal(q: Pick<Rfq, 'organization' | 'status' | 'invited' | 'sealed' | 'deadline'>, p: Pick<Proposal, 'market_maker'>, now: number): boolean;
}

export async function rfqAccess(src: VisibilitySource, user: User): Promise<RfqAccess> {
  const mine = await organizationsOf(src, user);
  const organizations = new Map(mine.map((o) => [o.slug, o]));
  const projects = new Set(mine.filter((o) => o.kind === 'project').map((o) => o.slug));
  const makers = new Set(mine.filter((o) => o.kind === 'market_maker').map((o) => o.slug));
  const staff = user.is_staff;
  const manages = (q: Pick<Rfq, 'organization'>) => staff || projects.has(q.organization);
  const proposers = (q: Pick<Rfq, 'invited'>) => [...makers].filter((m) => invites(q, m));
  const canSeeRfq = (q: Pick<Rfq, 'organization' | 'status' | 'invited'>) => manages(q) || (q.status !== 'draft' && proposers(q).length > 0);
  return {
    staff,
    organizations,
    projects,
    makers,
    canSeeRfq,
    manages,
    proposers,
    canSeeProposal: (q, p, now) => staff || makers.has(p.market_maker) || (projects.has(q.organization) && proposalsUnsealed(q, now)),
  };
}

/** Who acts, and what the commands and reads check against: read once per request. */
export interface RfqCaller {
  user: number;
  access: RfqAccess;
  lists: ReferenceLists;
  /** Every organization, by slug. */
  organizations: Map<string, Organization>;
  /** The request's moment: deadlines and validity are judged at it. */
  now: number;
}

export async function rfqCallerOf(src: VisibilitySource, user: User, now: number): Promise<RfqCaller> {
  const [access, lists] = await Promise.all([rfqAccess(src, user), src.referenceLists.lists()]);
  return { user: user.id, access, lists, organizations: new Map(lists.organizations.map((o) => [o.slug, o])), now };
}
