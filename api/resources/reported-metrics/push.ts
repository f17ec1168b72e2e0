// POST /v2/organizations/reported-metrics/ (addendum section 3, specification part 7): a
// market maker pushes the metric values it reports, a non-empty list of mm.reported objects.
// Every item is checked against the caller's organizations and what each covers; one bad
// item fails the whole request with a list of per-item errors, and nothing is written.
// Accepted items go to the mm.reported topic (one message per organization, asset,
// exchange and pair, its items together), stamped with the time of the request: the
// processor (processors/reported/processor.ts) writes them with that time as their push
// time, so the latest push of a key replaces the value.
import type { Middleware } from 'koa';
import type { User } from '../../../domain/accounts/users.ts';
import { isPercentMetric, MM_METRICS } from '../../../domain/market/facts.ts';
import { REPORTED_INTERVAL_MS, reportedKey, type ReportedInterval } from '../../../domain/market-makers/reported.ts';
import type { Organization } from '../../../domain/reference/repository.ts';
import { organizationsOf, scopeOf } from '../../../domain/reference/visibility.ts';
import type { ReportedMessage } from '../../../schemas/index.ts';
import { parseTimestamp } from '../../../schemas/timestamps.ts';
import type { ApiDeps } from '../../deps.ts';
import { principalOf } from '../../http/auth.ts';
import type { BodyOf } from '../../http/contract.ts';
import { HttpError, type FieldErrors } from '../../http/errors.ts';

type ReportedMetric = BodyOf<'pushReportedMetrics'>[number];

/** Items per request (docs/ingest.md): a bound on the request's memory and on one answer's size. */
export const MAX_PUSH_ITEMS = 10_000;

export const PUSH_MESSAGES = {
  // Unknown and not the caller's read alike: the answer never tells whether a slug exists.
  organization: (slug: string) => `"${slug}" is not one of your organizations.`,
  notMarketMaker: (slug: string) => `"${slug}" is not a market-maker organization.`,
  percentage: 'A percentage: at most 100.',
  asset: (symbol: string) => `"${symbol}" is not one of the organization's assets.`,
  exchange: (slug: string) => `"${slug}" is not one of the organization's exchanges.`,
  pair: (pair: string, exchange: string, asset: string) => `"${pair}" on ${exchange} is not one of the organization's pairs of ${asset}.`,
  metric: (metric: string) => `"${metric}" is not a market-maker metric identifier (such as volume/volume, spread/spread_bps, depth/bid_2bps).`,
  timestamp: 'Enter a valid date-time (ISO 8601, UTC when no offset) or epoch milliseconds.',
  misaligned: (interval: ReportedInterval, start: number) => `Must be the start of a ${interval} interval (UTC), such as ${new Date(start).toISOString()}.`,
  future: 'Must not be in the future.',
  beforeEpoch: 'Must be 1970-01-01 or later.',
} as const;

const MM_METRIC_SET = new Set(MM_METRICS);

/** What one of the caller's market-maker organizations covers. */
interface Covered {
  assets: Set<string>;
  exchanges: Set<string>;
  /** `<exchange>\0<pair>` -> the pair's asset. */
  pairs: Map<string, string>;
}

interface PushScope {
  /** The caller's organizations (staff: all). */
  organizations: Map<string, Organization>;
  /** What each market-maker organization named in the request covers. */
  covered: Map<string, Covered>;
}

async function pushScope(deps: ApiDeps, user: User, named: Set<string>): Promise<PushScope> {
  const organizations = new Map((await organizationsOf(deps, user)).map((o) => [o.slug, o]));
  // Only the organizations the request names: staff have every one of them.
  const makers = [...named].filter((slug) => organizations.get(slug)?.kind === 'market_maker');
  const covered = new Map<string, Covered>();
  if (makers.length === 0) return { organizations, covered };
  const lists = await deps.referenceLists.lists();
  for (const slug of makers) {
    const s = scopeOf(organizations.get(slug)!, lists);
    covered.set(slug, {
      assets: new Set(s.assets.map((a) => a.symbol)),
      exchanges: new Set(s.exchanges.map((e) => e.slug)),
      pairs: new Map(s.pairs.map((p) => [`${p.exchange}\u0000${p.pair}`, p.asset])),
    });
  }
  return { organizations, covered };
}

type Checked = { errors: FieldErrors; item?: undefined } | { errors: FieldErrors; item: ReportedMessage; ts: number };

const NO_ERRORS: FieldErrors = Object.freeze({}) as FieldErrors;

/**
 * One item's errors against the caller's organizations and what each covers (`{}` when
 * valid) and, when valid, the message to produce. Its fields' types, the interval and the
 * value's bounds were checked by the contract (api/openapi.yaml, `ReportedMetric`).
 */
function reportedItemOf(x: ReportedMetric, scope: PushScope, now: number): Checked {
  const errors: FieldErrors = {};
  const fail = (field: string, message: string) => {
    errors[field] = [message];
  };
  // What the organization covers: asset, exchange and pair are judged only against it, so
  // they too never tell what exists outside the caller's organizations.
  const org = scope.organizations.get(x.organization);
  const covered = org?.kind === 'market_maker' ? scope.covered.get(x.organization) : undefined;
  if (!org) fail('organization', PUSH_MESSAGES.organization(x.organization));
  else if (org.kind !== 'market_maker') fail('organization', PUSH_MESSAGES.notMarketMaker(x.organization));
  if (covered) {
    const assetOk = covered.assets.has(x.asset);
    if (!assetOk) fail('asset', PUSH_MESSAGES.asset(x.asset));
    const exchangeOk = covered.exchanges.has(x.exchange);
    if (!exchangeOk) fail('exchange', PUSH_MESSAGES.exchange(x.exchange));
    if (assetOk && exchangeOk && covered.pairs.get(`${x.exchange}\u0000${x.pair}`) !== x.asset) fail('pair', PUSH_MESSAGES.pair(x.pair, x.exchange, x.asset));
  }
  if (!MM_METRIC_SET.has(x.metric)) fail('metric', PUSH_MESSAGES.metric(x.metric));
  else if (isPercentMetric(x.metric) && x.value > 100) fail('value', PUSH_MESSAGES.percentage);
  const ts = parseTimestamp(x.timestamp);
  if (ts === undefined) fail('timestamp', PUSH_MESSAGES.timestamp);
  else if (ts > now) fail('timestamp', PUSH_MESSAGES.future);
  // An ISO date before 1970 parses to a negative time, which the table's DateTime cannot hold.
  else if (ts < 0) fail('timestamp', PUSH_MESSAGES.beforeEpoch);
  else if (ts % REPORTED_INTERVAL_MS[x.interval] !== 0) {
    const step = REPORTED_INTERVAL_MS[x.interval];
    fail('timestamp', PUSH_MESSAGES.misaligned(x.interval, Math.floor(ts / step) * step));
  }
  if (Object.keys(errors).length > 0) return { errors };
  // Only the contract's fields go on, the time in one form: ISO 8601 in UTC.
  const item: ReportedMessage = { organization: x.organization, asset: x.asset, exchange: x.exchange, pair: x.pair, metric: x.metric, interval: x.interval, timestamp: new Date(ts!).toISOString(), value: x.value };
  return { errors: NO_ERRORS, item, ts: ts! };
}

export function pushReportedMetrics(deps: ApiDeps): Middleware {
  return async (ctx) => {
    // A non-empty list of at most MAX_PUSH_ITEMS items, each of the right shape: the contract checked it.
    const body = ctx.state.body as BodyOf<'pushReportedMetrics'>;
    // The one instant of the request: "not in the future" is judged by it, and it is the push time.
    const now = deps.now();
    const principal = principalOf(ctx.state);
    const user = principal.user;
    const named = new Set<string>();
    for (const item of body) named.add(item.organization);
    const scope = await pushScope(deps, user, named);

    const errors: FieldErrors[] = [];
    // By key, the last item of a key winning (a Map keeps the first one's place, which is fine: keys differ).
    const accepted = new Map<string, ReportedMessage>();
    let invalid = 0;
    for (const raw of body) {
      const c = reportedItemOf(raw, scope, now);
      errors.push(c.errors);
      if (!c.item) invalid++;
      else if (invalid === 0) accepted.set(reportedKey({ organization: c.item.organization, asset: c.item.asset, exchange: c.item.exchange, pair: c.item.pair, metric: c.item.metric, interval: c.item.interval, timestamp: c.ts }), c.item);
    }
    // Specification part 7: a list with one object per item, `{}` for the valid ones.
    if (invalid > 0) throw new HttpError(400, errors);

    await deps.reportedMetrics.publish([...accepted.values()], now);
    deps.log.debug('reported metrics pushed', { user_id: user.id, via: principal.via, items: body.length, keys: accepted.size });
    ctx.status = 202;
    ctx.body = { accepted: body.length };
  };
}
