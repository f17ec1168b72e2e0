// Whose market-making values a caller sees (specification part 1, addendum section 2): a
// market maker its own organization's, on the assets it covers; a member of a project
// every market maker's on the assets the project owns; staff everyone's. The answer is a
// set of (market maker, asset); the endpoints read nothing outside it.
import type { User } from '../accounts/users.ts';
import type { Organization } from '../reference/repository.ts';
import { organizationsOf, scopeOf, type VisibilitySource } from '../reference/visibility.ts';

export interface MarketMakerView {
  /** Market maker slug -> the assets whose values the caller sees. */
  visible: Map<string, Set<string>>;
  /** Every market-making organization (for names and the `organizations` filter). */
  makers: Map<string, Organization>;
  /** The caller's own organizations (a project's slug filters to the assets it owns). */
  own: Map<string, Organization>;
  /** Assets each of the caller's project organizations owns. */
  owned: Map<string, Set<string>>;
}

export async function marketMakerView(
  src: VisibilitySource,
  user: User,
): Promise<MarketMakerView> {
  const [{ assets, exchanges, pairs, organizations: all, coverage }, mine] = await Promise.all([src.referenceLists.lists(), organizationsOf(src, user)]);
  const makers = new Map(all.filter((o) => o.kind === 'market_maker').map((o) => [o.slug, o]));
  const visible = new Map<string, Set<string>>();
  const add = (maker: string, symbols: Iterable<string>) => {
    const set = visible.get(maker) ?? new Set<string>();
    for (const s of symbols) set.add(s);
    visible.set(maker, set);
  };
  const owned = new Map<string, Set<string>>();
  if (user.is_staff) {
    for (const m of makers.keys()) add(m, assets.map((a) => a.symbol));
    // Staff may narrow to any project: its slug keeps the values on the assets it owns.
    for (const org of mine) if (org.kind === 'project') owned.set(org.slug, new Set(assets.filter((a) => a.owner === org.slug).map((a) => a.symbol)));
  } else {
    for (const org of mine) {
      if (org.kind === 'market_maker') {
        add(org.slug, scopeOf(org, { assets, exchanges, pairs, coverage }).assets.map((a) => a.symbol));
      } else {
        const symbols = assets.filter((a) => a.owner === org.slug).map((a) => a.symbol);
        owned.set(org.slug, new Set(symbols));
        for (const m of makers.keys()) add(m, symbols);
      }
    }
  }
  for (const [m, set] of visible) if (set.size === 0) visible.delete(m);
  return { visible, makers, own: new Map(mine.map((o) => [o.slug, o])), owned };
}

/**
 * The view narrowed by the `organizations` filter: a market maker's slug keeps its values,
 * a project of the caller's keeps the values on the assets it owns. A slug the caller may
 * not name is returned in `refused` (unknown ones alike: no hint that they exist).
 */
export function narrowByOrganizations(view: MarketMakerView, slugs: readonly string[] | undefined): { visible: Map<string, Set<string>>; refused: string[] } {
  if (!slugs) return { visible: view.visible, refused: [] };
  const out = new Map<string, Set<string>>();
  const refused: string[] = [];
  const keep = (maker: string, assets: Iterable<string>) => {
    const set = out.get(maker) ?? new Set<string>();
    for (const a of assets) set.add(a);
    out.set(maker, set);
  };
  for (const slug of slugs) {
    const owned = view.owned.get(slug);
    if (view.visible.has(slug)) keep(slug, view.visible.get(slug)!);
    else if (owned) {
      for (const [maker, assets] of view.visible) keep(maker, [...assets].filter((a) => owned.has(a)));
    } else refused.push(slug);
  }
  for (const [m, set] of out) if (set.size === 0) out.delete(m);
  return { visible: out, refused };
}
