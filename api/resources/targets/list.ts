// GET /v2/organizations/targets/ (specification 4.9, addendum section 3): the targets the
// caller may see, filtered; a plain array, or `{count, page, page_size, results, facets}`
// when paging or facets are asked for. Facets count each requested field's values over the
// whole filtered set (every page).
import type { Context } from 'koa';
import type { Target } from '../../../domain/targets/repository.ts';
import { callerScope } from '../../../domain/reference/visibility.ts';
import { badRequest, type FieldErrors } from '../../http/errors.ts';
import { principalOf } from '../../http/auth.ts';
import { ASSET_MESSAGE } from '../../../domain/reference/visibility.ts';
import { lastChange, presentTarget } from './present.ts';
import type { TargetServices } from './services.ts';
import { targetAccess } from '../../../domain/targets/visibility.ts';
import type { QueryOf } from '../../http/contract.ts';
import { HOUR_MS } from '../../../lib/time.ts';

const LISTS = ['assets', 'exchanges', 'asset_labels', 'market_hours', 'metrics', 'organizations', 'target_organizations', 'pairs', 'facets', 'statuses', 'target_assets', 'types'] as const;
export const FACETS = ['active', 'telegram', 'organization', 'type', 'market_hours', 'asset', 'exchange', 'pair', 'status', 'since'] as const;
type Facet = (typeof FACETS)[number];
const DEFAULT_PAGE_SIZE = 50;

/** The `since` facet: how long ago a target's status last changed (or it was made, if never). */
export function sinceBucket(ms: number): string {
  if (ms < HOUR_MS) return 'under-1h';
  if (ms < 24 * HOUR_MS) return '1h-24h';
  if (ms < 7 * 24 * HOUR_MS) return '1d-7d';
  if (ms < 30 * 24 * HOUR_MS) return '7d-30d';
  return 'over-30d';
}

export function listTargets(s: TargetServices) {
  return async (ctx: Context) => {
    const user = principalOf(ctx.state).user;
    // Checked and typed by the contract (api/openapi.yaml, listTargets): known values, bounds, plain numbers.
    const q = ctx.state.query as QueryOf<'listTargets'>;
    const errors: FieldErrors = {};
    const fail = (f: string, m: string) => {
      errors[f] = [...((errors[f] as string[] | undefined) ?? []), m];
    };
    const lists: Partial<Record<(typeof LISTS)[number], string[]>> = {};
    for (const name of LISTS) {
      const l = q[name];
      if (l && l.length > 0) lists[name] = [...new Set(l as string[])];
    }
    const type = q.type;
    const sortBy = q.sort_by ?? 'id';
    const direction = q.sort_direction ?? 'asc';
    const page = q.page;
    const pageSize = q.page_size;
    const includeFacets = q.include_facets === true;
    const facetsOnly = q.facets_only === true;

    const [access, scope] = await Promise.all([targetAccess(s.deps, user), callerScope(s.deps, user)]);
    for (const a of lists.assets ?? []) if (!scope.assets.includes(a)) fail('assets', ASSET_MESSAGE(a));
    for (const o of lists.organizations ?? []) if (!access.organizations.has(o)) fail('organizations', `"${o}" is not one of your organizations.`);
    if (Object.keys(errors).length > 0) throw badRequest(errors);

    const { assets: allAssets } = await s.deps.referenceLists.lists();
    const labels = new Map(allAssets.map((a) => [a.symbol, a.labels]));
    const ownerOf = new Map(allAssets.map((a) => [a.symbol, a.owner]));
    const has = (l: string[] | undefined, v: string) => !l || l.includes(v);
    const orgs = lists.organizations && new Set(lists.organizations);
    // An organization of the caller's scopes its gb targets, its mm targets as a market
    // maker, and the mm targets on the assets it owns as a project.
    const inOrganizations = (t: Target) => !orgs || orgs.has(t.organization) || (t.type === 'mm' && orgs.has(ownerOf.get(t.asset) ?? ''));
    const all = await s.targets.all();
    const now = s.deps.now();
    const rows = all.filter(
      (t) =>
        access.canSee(t) &&
        inOrganizations(t) &&
        has(lists.assets, t.asset) &&
        has(lists.target_assets, t.asset) &&
        has(lists.exchanges, t.exchange) &&
        has(lists.pairs, t.pair) &&
        has(lists.metrics, t.metric) &&
        has(lists.target_organizations, t.organization) &&
        has(lists.statuses, t.status) &&
        has(lists.types, t.type) &&
        (type === undefined || t.type === type) &&
        has(lists.market_hours, t.market_hours ?? 'default') &&
        (!lists.asset_labels || (labels.get(t.asset) ?? []).some((l) => lists.asset_labels!.includes(l))),
    );
    const key = (t: Target): number | string => {
      switch (sortBy) {
        case 'since':
          return lastChange(t);
        case 'market_hours':
          return t.market_hours ?? '';
        case 'active':
          return t.active ? 1 : 0;
        default:
          return t[sortBy as 'id'] as number | string;
      }
    };
    const sign = direction === 'desc' ? -1 : 1;
    rows.sort((a, b) => {
      const [x, y] = [key(a), key(b)];
      // Text in code-point order, as every other list's (a locale's collation puts ACME_PERP/USDT before ACME/USD).
      const [u, v] = [String(x), String(y)];
      const c = typeof x === 'number' && typeof y === 'number' ? x - y : u < v ? -1 : u > v ? 1 : 0;
      return sign * c || a.id - b.id;
    });

    const paged = page !== undefined || pageSize !== undefined || includeFacets || facetsOnly;
    if (!paged) {
      ctx.body = rows.map((t) => presentTarget(t, access.organizations));
      return;
    }
    const size = pageSize ?? DEFAULT_PAGE_SIZE;
    const p = page ?? 1;
    const body: Record<string, unknown> = {
      count: rows.length,
      page: p,
      page_size: size,
      results: facetsOnly ? [] : rows.slice((p - 1) * size, p * size).map((t) => presentTarget(t, access.organizations)),
    };
    if (includeFacets || facetsOnly) {
      const wanted = (lists.facets ?? [...FACETS]) as Facet[];
      const value: Record<Facet, (t: Target) => string> = {
        active: (t) => String(t.active),
        telegram: (t) => String(t.telegram_notifications),
        organization: (t) => t.organization,
        type: (t) => t.type,
        market_hours: (t) => t.market_hours ?? 'default',
        asset: (t) => t.asset,
        exchange: (t) => t.exchange,
        pair: (t) => t.pair,
        status: (t) => t.status,
        since: (t) => sinceBucket(now - lastChange(t)),
      };
      const facets: Record<string, Record<string, number>> = {};
      for (const f of wanted) {
        const counts: Record<string, number> = {};
        for (const t of rows) counts[value[f](t)] = (counts[value[f](t)] ?? 0) + 1;
        facets[f] = counts;
      }
      body.facets = facets;
    }
    ctx.body = body;
  };
}
