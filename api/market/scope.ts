// What market data a caller may see: the assets of their organizations (staff: all), and
// the pairs those organizations cover (addendum section 2).
import { scopeOf, type Exchange, type Pair } from '../../lib/repositories/reference.ts';
import type { User } from '../../lib/repositories/users.ts';
import type { ApiDeps } from '../deps.ts';
import { organizationsOf } from '../resources/auth/routes.ts';

export interface CallerScope {
  /** Asset symbols, sorted. */
  assets: string[];
  pairs: readonly Pair[];
  exchanges: Map<string, Exchange>;
}

export async function callerScope(deps: ApiDeps, user: User): Promise<CallerScope> {
  const { assets, exchanges, pairs } = await deps.referenceLists.lists();
  const exchangeMap = new Map(exchanges.map((e) => [e.slug, e]));
  if (user.is_staff) return { assets: assets.map((a) => a.symbol).sort(), pairs, exchanges: exchangeMap };
  const orgs = await organizationsOf(deps, user);
  if (orgs.length === 0) return { assets: [], pairs: [], exchanges: exchangeMap };
  const coverage = await deps.reference.coverage(orgs.map((o) => o.slug));
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
