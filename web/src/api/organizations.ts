// What the caller may see (GET /v1/organizations/): the assets, exchanges and pairs of its
// organizations. Every view's choices come from here, so a view never offers what the API
// would refuse.
import { useQuery } from '@tanstack/react-query';
import { api, unwrap, type paths } from './client';

export type Organization = paths['/v1/organizations/']['get']['responses']['200']['content']['application/json'][number];

export interface Scope {
  organizations: Organization[];
  assets: string[];
  /** The assets of the caller's projects: those it may lend or ask proposals for (as their owner). */
  projectAssets: string[];
  pairsOf: (asset: string) => { exchange: string; pair: string; market_type: string }[];
  exchangeName: (slug: string) => string;
  kinds: Set<string>;
}

function scopeOf(orgs: Organization[]): Scope {
  const assets = new Set<string>();
  const pairs = new Map<string, Map<string, { exchange: string; pair: string; market_type: string }>>();
  const names = new Map<string, string>();
  for (const o of orgs) {
    for (const a of o.assets ?? []) if (a.symbol) assets.add(a.symbol);
    for (const e of o.exchanges ?? []) if (e.slug) names.set(e.slug, e.name ?? e.slug);
    for (const p of o.pairs ?? []) {
      if (!p.asset || !p.exchange || !p.pair) continue;
      const m = pairs.get(p.asset) ?? new Map();
      m.set(`${p.exchange} ${p.pair}`, { exchange: p.exchange, pair: p.pair, market_type: p.market_type ?? 'spot' });
      pairs.set(p.asset, m);
    }
  }
  return {
    organizations: orgs,
    assets: [...assets].sort(),
    projectAssets: [...new Set(orgs.filter((o) => o.kind === 'project').flatMap((o) => (o.assets ?? []).map((a) => a.symbol)))].filter((a): a is string => !!a).sort(),
    pairsOf: (asset) => [...(pairs.get(asset)?.values() ?? [])].sort((a, b) => a.exchange.localeCompare(b.exchange) || a.pair.localeCompare(b.pair)),
    exchangeName: (slug) => names.get(slug) ?? slug,
    kinds: new Set(orgs.map((o) => o.kind ?? '')),
  };
}

export function useScope() {
  return useQuery({
    queryKey: ['organizations'],
    queryFn: async () => scopeOf(unwrap(await api.GET('/v1/organizations/'))),
    refetchInterval: 60_000,
  });
}
