// Who sees and who manages which targets (specification 4.9, addendum section 6): members
// of a project see and manage its `gb` targets; market makers see their own organization's
// `mm` targets; project owners see and manage every market maker's `mm` targets on the
// assets they own; staff see and manage all.
import type { User } from '../accounts/users.ts';
import type { Organization } from '../reference/repository.ts';
import { organizationsOf, type VisibilitySource } from '../reference/visibility.ts';
import { managesTarget, type TargetType } from './facts.ts';

type Owned = { type: TargetType; organization: string; asset: string };

export interface TargetAccess {
  staff: boolean;
  /** The caller's organizations (staff: all), by slug. */
  organizations: Map<string, Organization>;
  /** Assets owned by the caller's projects. */
  owned: Set<string>;
  canSee(t: Owned): boolean;
  canManage(t: Owned): boolean;
}

export async function targetAccess(src: VisibilitySource, user: User): Promise<TargetAccess> {
  const [mine, { assets }] = await Promise.all([organizationsOf(src, user), src.referenceLists.lists()]);
  const organizations = new Map(mine.map((o) => [o.slug, o]));
  const projects = new Set(mine.filter((o) => o.kind === 'project').map((o) => o.slug));
  const makers = new Set(mine.filter((o) => o.kind === 'market_maker').map((o) => o.slug));
  const owned = new Set(assets.filter((a) => projects.has(a.owner)).map((a) => a.symbol));
  const staff = user.is_staff;
  const manages = (t: Owned) => managesTarget({ staff, projects, owned }, t);
  return {
    staff,
    organizations,
    owned,
    canManage: manages,
    canSee: (t) => manages(t) || (t.type === 'mm' && makers.has(t.organization)),
  };
}
