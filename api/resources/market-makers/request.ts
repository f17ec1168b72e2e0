// The parameters of the market-maker endpoints (specification 4.10-4.12, addendum section
// 3) to what they read: the window (intervals other than 5m, 1h, 1d and `a` give daily
// buckets), the levels, and the market makers, pairs and wallets the caller may see,
// narrowed by `organizations` and `assets`. Errors are those of the market endpoints.
import type { Context } from 'koa';
import type { ValidateFunction } from 'ajv';
import { levelName, type Interval } from '../../../domain/market/facts.ts';
import type { MmQuery } from '../../../domain/market-makers/readings.ts';
import { marketMakerView, narrowByOrganizations } from '../../../domain/market-makers/visibility.ts';
import type { Organization, Pair, Wallet } from '../../../domain/reference/repository.ts';
import { callerScope } from '../../../domain/reference/visibility.ts';
import type { ApiDeps } from '../../deps.ts';
import { badRequest } from '../../http/errors.ts';
import { principalOf } from '../../http/auth.ts';
import { presentOrganization } from '../../presenters.ts';
import { assetsOf, levelsOf, parseRequest } from '../market/params.ts';
import type { MarketParams, RawParams } from '../market/schemas.ts';

/** The columns that name a market maker's row, first in every answer: its organization, and the pair's asset, exchange and symbol (specification 4.10). */
export function makerPairColumns(req: Pick<MmRequest, 'makers'>, maker: string, pair: Pair) {
  return { organization: presentOrganization(req.makers.get(maker)!.organization), asset: pair.asset, exchange: pair.exchange, pair: pair.pair };
}

/** The buckets market-maker values are kept in; other intervals are answered daily. */
const KEPT: readonly Interval[] = ['5m', '1h', '1d', 'a'];

export interface MmRequest extends MmQuery {
  params: MarketParams;
  /** Market maker -> its organization and the pairs of the assets whose values the caller sees. */
  makers: Map<string, { organization: Organization; pairs: Pair[] }>;
  wallets: Map<number, Wallet>;
}

/** The depth columns of some levels: `bid_2bps`, `ask_0_5bps_coverage`, ... */
export const depthNames = (levels: number[], side: 'bid' | 'ask', suffix = '') => levels.map((l) => `${side}_${levelName(l)}bps${suffix}`);

export async function parseMmRequest(
  deps: ApiDeps,
  ctx: Context,
  raw: RawParams,
  endpoint: { validate: ValidateFunction<MarketParams>; intervals: readonly string[] },
): Promise<MmRequest> {
  const user = principalOf(ctx.state).user;
  // Daily by default (addendum section 3), and daily for an accepted interval the values
  // are not kept in, before the span guard judges the window by the interval answered.
  const asked = typeof raw.interval === 'string' ? raw.interval.trim() : raw.interval;
  const interval = asked === undefined || asked === null || asked === '' ? '1d' : typeof asked === 'string' && endpoint.intervals.includes(asked) && !KEPT.includes(asked as Interval) ? '1d' : asked;
  const { params, window, problems } = parseRequest({ ...raw, interval }, endpoint.validate, deps.now(), await deps.rolledUp.through());
  const [scope, view, wallets, { pairs }] = await Promise.all([
    callerScope(deps, user),
    marketMakerView(deps, user),
    deps.reference.wallets(),
    deps.referenceLists.lists(),
  ]);
  const assets = new Set(assetsOf(params, scope.assets, problems));
  const { visible, refused } = narrowByOrganizations(view, params.organizations);
  for (const slug of refused) problems.add('organizations', `"${slug}" is not one of your organizations.`);
  if (problems.any()) throw badRequest(problems.fields());

  const byAsset = new Map<string, Pair[]>();
  for (const p of pairs) byAsset.set(p.asset, [...(byAsset.get(p.asset) ?? []), p]);
  const makers = new Map<string, { organization: Organization; pairs: Pair[] }>();
  const read = new Map<string, Pair>();
  for (const [slug, symbols] of [...visible].sort(([a], [b]) => a.localeCompare(b))) {
    const mine = [...symbols].filter((a) => assets.has(a)).sort().flatMap((a) => byAsset.get(a) ?? []);
    if (mine.length === 0) continue;
    makers.set(slug, { organization: view.makers.get(slug)!, pairs: mine });
    for (const p of mine) read.set(`${p.exchange}\u0000${p.pair}`, p);
  }
  return {
    params,
    window: window as MmRequest['window'],
    levels: levelsOf(params),
    makers,
    pairs: [...read.values()],
    wallets: new Map(wallets.filter((w) => makers.has(w.organization)).map((w) => [w.id, w])),
  };
}
