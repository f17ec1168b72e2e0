// Who sees and who changes which loans (addendum section 7): members of the lender manage
// its loans; members of the market maker read the loans made to it and nothing else;
// staff everything. A loan a caller may not see is answered as unknown (404).
import type { User } from '../accounts/users.ts';
import type { Organization, ReferenceLists } from '../reference/repository.ts';
import { organizationsOf, type VisibilitySource } from '../reference/visibility.ts';

type Parties = { organization: string; market_maker: string };

export interface LoanAccess {
  staff: boolean;
  /** The caller's organizations (staff: all), by slug. */
  organizations: Map<string, Organization>;
  /** Assets the caller's projects own: what it may lend. */
  lendable: Set<string>;
  canSee(l: Parties): boolean;
  canManage(l: Parties): boolean;
}

/** Whether the caller may lend at all: staff, or a member of a project that owns an asset. */
export const mayLend = (a: Pick<LoanAccess, 'staff' | 'lendable'>): boolean => a.staff || a.lendable.size > 0;

export async function loanAccess(src: VisibilitySource, user: User): Promise<LoanAccess> {
  const [mine, { assets }] = await Promise.all([organizationsOf(src, user), src.referenceLists.lists()]);
  const organizations = new Map(mine.map((o) => [o.slug, o]));
  const projects = new Set(mine.filter((o) => o.kind === 'project').map((o) => o.slug));
  const makers = new Set(mine.filter((o) => o.kind === 'market_maker').map((o) => o.slug));
  const staff = user.is_staff;
  const canManage = (l: Parties) => staff || projects.has(l.organization);
  return {
    staff,
    organizations,
    lendable: new Set(assets.filter((a) => staff || projects.has(a.owner)).map((a) => a.symbol)),
    canManage,
    canSee: (l) => canManage(l) || makers.has(l.market_maker),
  };
}

/** Who acts, and what the commands and reads check against: read once per request. */
export interface LoanCaller {
  user: number;
  access: LoanAccess;
  /** Every organization, by slug. */
  organizations: Map<string, Organization>;
  lists: ReferenceLists;
  /** The request's moment. */
  now: number;
}

export async function loanCallerOf(src: VisibilitySource, user: User, now: number): Promise<LoanCaller> {
  const [access, lists] = await Promise.all([loanAccess(src, user), src.referenceLists.lists()]);
  return { user: user.id, access, organizations: new Map(lists.organizations.map((o) => [o.slug, o])), lists, now };
}
