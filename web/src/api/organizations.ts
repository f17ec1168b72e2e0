// What the caller may see (GET /v1/organizations/): the assets, exchanges and pairs of its
// organizations. Every view's choices come from here, so a view never offers what the API
// would refuse.
import { useQuery } from '@tanstack/react-query';
import { api, itemsOf, unwrap, type paths } from './client';

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

/**
 * The market makers the API has named to the caller, slug to name: no endpoint lists them to
 * a project, so these are the ones in its loans and in the `mm` targets it sees (a loan's
 * name first: the targets list names an organization not the caller's by its slug).
 */
export function useNamedMarketMakers() {
  return useQuery({
    queryKey: ['market makers named'],
    queryFn: async () => {
      const [loans, mm] = await Promise.all([
        api.GET('/v2/organizations/loans/').then(unwrap),
        api.GET('/v2/organizations/targets/', { params: { query: { types: ['mm'], page_size: 250 } } }).then(unwrap),
      ]);
      const named = new Map<string, string>();
      for (const l of itemsOf(loans)) named.set(l.market_maker.slug, l.market_maker.name);
      for (const t of itemsOf(mm)) if (!named.has(t.organization.slug)) named.set(t.organization.slug, t.organization.name);
      return named;
    },
  });
}
