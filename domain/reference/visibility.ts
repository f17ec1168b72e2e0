// Who sees what (addendum section 2): the organizations of a user (staff: all), what an
// organization covers (the assets it owns plus those of its coverage rows, with the
// exchanges and pairs listed there, all pairs of an asset when none), and so the market
// data a caller may see. Every endpoint that shows organization data asks here.
import type { User } from '../accounts/users.ts';
import type { Asset, Coverage, Exchange, Organization, Pair, ReferenceSnapshot } from './repository.ts';

/** What an organization covers. */
export interface OrganizationScope {
  organization: Organization;
  assets: Asset[];
  exchanges: Exchange[];
  pairs: Pair[];
}

export function scopeOf(
  org: Organization,
  ref: { assets: readonly Asset[]; exchanges: readonly Exchange[]; pairs: readonly Pair[]; coverage: readonly Coverage[] },
): OrganizationScope {
  const covered = new Map<string, Coverage | null>();
  for (const a of ref.assets) if (a.owner === org.slug) covered.set(a.symbol, null);
  for (const c of ref.coverage) if (c.organization === org.slug) covered.set(c.asset, c);

  const pairs = ref.pairs.filter((p) => {
    if (!covered.has(p.asset)) return false;
    const c = covered.get(p.asset);
    if (!c) return true;
    if (c.exchanges.length > 0 && !c.exchanges.includes(p.exchange)) return false;
    if (c.pairs.length > 0 && !c.pairs.includes(p.pair)) return false;
    return true;
  });
  const exchangeSlugs = new Set(pairs.map((p) => p.exchange));
  return {
    organization: org,
    assets: ref.assets.filter((a) => covered.has(a.symbol)),
    exchanges: ref.exchanges.filter((e) => exchangeSlugs.has(e.slug)),
    pairs,
  };
}

/**
 * Where visibility reads from: the shared reference lists and each user's memberships, both
 * read once for many requests (lib/shared-reads.ts) and dropped by a fixture load, the only
 * way organizations, coverage and memberships change.
 */
/** The words for an asset the caller may not see, asked by name: as for one that does not exist. */
export const ASSET_MESSAGE = (symbol: string) => `"${symbol}" is not one of your assets.`;

export interface VisibilitySource {
  referenceLists: ReferenceSnapshot;
  /** A user's active memberships: organization slugs. */
  memberships: { get(userId: number): Promise<readonly string[]> };
}

/** The caller's organizations, by slug: memberships, or every organization for staff. */
export async function organizationsOf(src: VisibilitySource, user: User): Promise<Organization[]> {
  const [{ organizations }, slugs] = await Promise.all([src.referenceLists.lists(), user.is_staff ? undefined : src.memberships.get(user.id)]);
  if (!slugs) return [...organizations];
  const mine = new Set(slugs);
  return organizations.filter((o) => mine.has(o.slug));
}

/** What market data a caller may see: the assets of their organizations (staff: all), and the pairs those cover. */
export interface CallerScope {
  /** Asset symbols, sorted. */
  assets: string[];
  pairs: readonly Pair[];
  exchanges: Map<string, Exchange>;
}

export async function callerScope(src: VisibilitySource, user: User): Promise<CallerScope> {
  const { assets, exchanges, pairs, coverage } = await src.referenceLists.lists();
  const exchangeMap = new Map(exchanges.map((e) => [e.slug, e]));
  if (user.is_staff) return { assets: assets.map((a) => a.symbol).sort(), pairs, exchanges: exchangeMap };
  const orgs = await organizationsOf(src, user);
  if (orgs.length === 0) return { assets: [], pairs: [], exchanges: exchangeMap };
  const symbols = new Set<string>();
  const seen = new Set<string>();
  const covered: Pair[] = [];
  for (const org of orgs) {
    const s = scopeOf(org, { assets, exchanges, pairs, coverage });
    for (const a of s.assets) symbols.add(a.symbol);
    for (const p of s.pairs) {
      const k = `${p.exchange}\u0000${p.pair}`;
      if (!seen.has(k)) {
        seen.add(k);
        covered.push(p);
      }
    }
  }
  return { assets: [...symbols].sort(), pairs: covered, exchanges: exchangeMap };
}
