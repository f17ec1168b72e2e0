// POST /v2/organizations/reported-metrics/ (addendum section 3, specification part 7): a
// market maker pushes the metric values it reports, a non-empty list of mm.reported objects.
// Every item is checked against the caller's organizations and what each covers; one bad
// item fails the whole request with a list of per-item errors, and nothing is written.
// Accepted items go to the mm.reported topic (one message per organization, asset,
// exchange and pair, its items together), stamped with the time of the request: the
// processor (processors/reported/processor.ts) writes them with that time as their push
// time, so the latest push of a key replaces the value.
import type { Kafka, Message, Producer } from 'kafkajs';
import type { Middleware } from 'koa';
import type { User } from '../../../domain/accounts/users.ts';
import { MM_METRICS } from '../../../domain/market/facts.ts';
import { MAX_ITEMS_PER_MESSAGE, REPORTED_INTERVAL_MS, REPORTED_INTERVALS, reportedKey, type ReportedBatch, type ReportedInterval } from '../../../domain/market-makers/reported.ts';
import type { Organization } from '../../../domain/reference/repository.ts';
import { organizationsOf, scopeOf } from '../../../domain/reference/visibility.ts';
import type { Config } from '../../../lib/config.ts';
import { createProducer, sendInParts, topicName, type BaseTopic } from '../../../lib/kafka.ts';
import { frameHeader } from '../../../lib/schema-registry.ts';
import type { ReportedMessage } from '../../../schemas/index.ts';
import { parseTimestamp } from '../../../schemas/timestamps.ts';
import type { ApiDeps } from '../../deps.ts';
import { principalOf } from '../../http/auth.ts';
import { HttpError, MESSAGES, messageError, type FieldErrors } from '../../http/errors.ts';

/** Items per request (docs/ingest.md): a bound on the request's memory and on one answer's size. */
export const MAX_PUSH_ITEMS = 10_000;

export const PUSH_MESSAGES = {
  notAList: 'Expected a non-empty list of reported metrics.',
  tooMany: (n: number) => `A push holds at most ${MAX_PUSH_ITEMS} items; this one holds ${n}.`,
  string: 'Not a valid string.',
  null: 'This field may not be null.',
  object: 'Expected an object.',
  // Unknown and not the caller's read alike: the answer never tells whether a slug exists.
  organization: (slug: string) => `"${slug}" is not one of your organizations.`,
  notMarketMaker: (slug: string) => `"${slug}" is not a market-maker organization.`,
  asset: (symbol: string) => `"${symbol}" is not one of the organization's assets.`,
  exchange: (slug: string) => `"${slug}" is not one of the organization's exchanges.`,
  pair: (pair: string, exchange: string, asset: string) => `"${pair}" on ${exchange} is not one of the organization's pairs of ${asset}.`,
  metric: (metric: string) => `"${metric}" is not a market-maker metric identifier (such as volume/volume, spread/spread_bps, depth/bid_2bps).`,
  interval: `Not a valid choice; expected one of: ${REPORTED_INTERVALS.join(', ')}.`,
  timestamp: 'Enter a valid date-time (ISO 8601, UTC when no offset) or epoch milliseconds.',
  misaligned: (interval: ReportedInterval, start: number) => `Must be the start of a ${interval} interval (UTC), such as ${new Date(start).toISOString()}.`,
  future: 'Must not be in the future.',
  beforeEpoch: 'Must be 1970-01-01 or later.',
  number: 'A valid number is required.',
  finite: 'Must be a finite number.',
  negative: 'Ensure this value is greater than or equal to 0.',
} as const;

const MM_METRIC_SET = new Set(MM_METRICS);
const INTERVAL_SET = new Set<string>(REPORTED_INTERVALS);
const FIELDS = ['organization', 'asset', 'exchange', 'pair', 'metric', 'interval', 'timestamp', 'value'] as const;

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
 * A valid item's message, or undefined for anything checkItem might refuse: the common case
 * without building an item's errors (closures and an object per item were most of a push's
 * checking). Accepts only what checkItem accepts, by the same rules.
 */
function validItem(raw: unknown, scope: PushScope, now: number): Checked | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  const { organization, asset, exchange, pair, metric, interval, timestamp, value } = raw as Record<string, unknown>;
  if (typeof organization !== 'string' || typeof asset !== 'string' || typeof exchange !== 'string' || typeof pair !== 'string') return undefined;
  if (typeof metric !== 'string' || typeof interval !== 'string' || typeof value !== 'number') return undefined;
  if (typeof timestamp !== 'string' && typeof timestamp !== 'number') return undefined;
  if (scope.organizations.get(organization)?.kind !== 'market_maker') return undefined;
  const covered = scope.covered.get(organization);
  if (!covered || !covered.assets.has(asset) || !covered.exchanges.has(exchange) || covered.pairs.get(`${exchange}\u0000${pair}`) !== asset) return undefined;
  if (!MM_METRIC_SET.has(metric) || !INTERVAL_SET.has(interval)) return undefined;
  const ts = parseTimestamp(timestamp);
  if (ts === undefined || ts > now || ts < 0 || ts % REPORTED_INTERVAL_MS[interval as ReportedInterval] !== 0) return undefined;
  if (!Number.isFinite(value) || value < 0) return undefined;
  const item: ReportedMessage = { organization, asset, exchange, pair, metric, interval: interval as ReportedInterval, timestamp: new Date(ts).toISOString(), value };
  return { errors: NO_ERRORS, item, ts };
}

/** One item's field errors (`{}` when valid) and, when valid, the message to produce. */
function checkItem(raw: unknown, scope: PushScope, now: number): Checked {
  const valid = validItem(raw, scope, now);
  if (valid) return valid;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { errors: { non_field_errors: [PUSH_MESSAGES.object] } };
  const x = raw as Record<string, unknown>;
  const errors: FieldErrors = {};
  const fail = (field: string, message: string) => {
    errors[field] = [message];
  };
  for (const f of FIELDS) {
    if (x[f] === undefined) fail(f, MESSAGES.required);
    else if (x[f] === null) fail(f, PUSH_MESSAGES.null);
  }
  const str = (f: (typeof FIELDS)[number]): string | undefined => {
    const v = x[f];
    if (typeof v === 'string') return v;
    if (!errors[f]) fail(f, PUSH_MESSAGES.string);
    return undefined;
  };
  const organization = str('organization');
  const asset = str('asset');
  const exchange = str('exchange');
  const pair = str('pair');
  const metric = str('metric');
  const interval = str('interval');

  // What the organization covers: asset, exchange and pair are judged only against it, so
  // they too never tell what exists outside the caller's organizations.
  let covered: Covered | undefined;
  if (organization !== undefined) {
    const org = scope.organizations.get(organization);
    if (!org) fail('organization', PUSH_MESSAGES.organization(organization));
    else if (org.kind !== 'market_maker') fail('organization', PUSH_MESSAGES.notMarketMaker(organization));
    else covered = scope.covered.get(organization);
  }
  if (covered) {
    const assetOk = asset !== undefined && covered.assets.has(asset);
    if (asset !== undefined && !assetOk) fail('asset', PUSH_MESSAGES.asset(asset));
    const exchangeOk = exchange !== undefined && covered.exchanges.has(exchange);
    if (exchange !== undefined && !exchangeOk) fail('exchange', PUSH_MESSAGES.exchange(exchange));
    if (assetOk && exchangeOk && pair !== undefined && covered.pairs.get(`${exchange}\u0000${pair}`) !== asset) {
      fail('pair', PUSH_MESSAGES.pair(pair, exchange!, asset!));
    }
  }
  if (metric !== undefined && !MM_METRIC_SET.has(metric)) fail('metric', PUSH_MESSAGES.metric(metric));
  const validInterval = interval !== undefined && INTERVAL_SET.has(interval) ? (interval as ReportedInterval) : undefined;
  if (interval !== undefined && !validInterval) fail('interval', PUSH_MESSAGES.interval);

  let ts: number | undefined;
  if (!errors.timestamp) {
    const t = x.timestamp;
    ts = typeof t === 'string' || typeof t === 'number' ? parseTimestamp(t) : undefined;
    if (ts === undefined) fail('timestamp', PUSH_MESSAGES.timestamp);
    else if (ts > now) fail('timestamp', PUSH_MESSAGES.future);
    // An ISO date before 1970 parses to a negative time, which the table's DateTime cannot hold.
    else if (ts < 0) fail('timestamp', PUSH_MESSAGES.beforeEpoch);
    else if (validInterval && ts % REPORTED_INTERVAL_MS[validInterval] !== 0) {
      const step = REPORTED_INTERVAL_MS[validInterval];
      fail('timestamp', PUSH_MESSAGES.misaligned(validInterval, Math.floor(ts / step) * step));
    }
  }
  if (!errors.value) {
    const v = x.value;
    // JSON gives no NaN, but a number too large for a double (1e400) parses as Infinity.
    if (typeof v !== 'number') fail('value', PUSH_MESSAGES.number);
    else if (!Number.isFinite(v)) fail('value', PUSH_MESSAGES.finite);
    else if (v < 0) fail('value', PUSH_MESSAGES.negative);
  }
  if (Object.keys(errors).length > 0) return { errors };
  // Only the contract's fields go on, the time in one form: ISO 8601 in UTC.
  const item: ReportedMessage = {
    organization: organization!,
    asset: asset!,
    exchange: exchange!,
    pair: pair!,
    metric: metric!,
    interval: validInterval!,
    timestamp: new Date(ts!).toISOString(),
    value: x.value as number,
  };
  return { errors, item, ts: ts! };
}

export function pushReportedMetrics(deps: ApiDeps): Middleware {
  return async (ctx) => {
    const body: unknown = ctx.request.body;
    if (!Array.isArray(body) || body.length === 0) throw messageError(PUSH_MESSAGES.notAList);
    if (body.length > MAX_PUSH_ITEMS) throw messageError(PUSH_MESSAGES.tooMany(body.length));
    // The one instant of the request: "not in the future" is judged by it, and it is the push time.
    const now = deps.now();
    const principal = principalOf(ctx.state);
    const user = principal.user;
    const named = new Set<string>();
    for (const raw of body) {
      const org = (raw as { organization?: unknown } | null)?.organization;
      if (typeof org === 'string') named.add(org);
    }
    const scope = await pushScope(deps, user, named);

    const errors: FieldErrors[] = [];
    // By key, the last item of a key winning (a Map keeps the first one's place, which is fine: keys differ).
    const accepted = new Map<string, ReportedMessage>();
    let invalid = 0;
    for (const raw of body) {
      const c = checkItem(raw, scope, now);
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

// ---------------------------------------------------------------------------------------
// The producer of mm.reported

export interface ReportedMetricsPublisher {
  /**
   * Produces the items to mm.reported with `pushedAt` as each message's timestamp (the
   * processor's push time); resolves once the broker acknowledged every one (acks -1).
   */
  publish(items: readonly ReportedMessage[], pushedAt: number): Promise<void>;
  close(): Promise<void>;
}

/** A send the broker has not acknowledged by then fails the request (500: retry later); the push can be repeated as it is. */
const SEND_TIMEOUT_MS = 30_000;

export class KafkaReportedPublisher implements ReportedMetricsPublisher {
  private readonly header: Buffer;

  constructor(
    private readonly producer: Producer,
    schemaId: number,
    private readonly topic: string,
  ) {
    this.header = frameHeader(schemaId);
  }

  async publish(items: readonly ReportedMessage[], pushedAt: number): Promise<void> {
    const timestamp = String(pushedAt);
    // One message per organization, asset, exchange and pair (its items in `more`, at most
    // MAX_ITEMS_PER_MESSAGE a message), all under the key's Kafka key: the key's messages
    // keep one partition and their order, and the producer and the processor handle a few
    // messages a request instead of one per item.
    const byKey = new Map<string, ReportedMessage[]>();
    for (const m of items) {
      const k = `${m.organization}\u0000${m.asset}\u0000${m.exchange}\u0000${m.pair}`;
      const list = byKey.get(k);
      if (list) list.push(m);
      else byKey.set(k, [m]);
    }
    const messages: Message[] = [];
    for (const list of byKey.values()) {
      const key = `${list[0]!.organization}:${list[0]!.exchange}:${list[0]!.pair}`;
      for (let i = 0; i < list.length; i += MAX_ITEMS_PER_MESSAGE) {
        const [first, ...rest] = list.slice(i, i + MAX_ITEMS_PER_MESSAGE);
        const value: ReportedBatch = rest.length === 0 ? first! : { ...first!, more: rest.map((m) => ({ metric: m.metric, interval: m.interval, timestamp: m.timestamp, value: m.value })) };
        // Framed with the topic's registered schema by hand: every item was checked above, field
        // by field, more strictly than that schema, so the client's own validation would only
        // repeat it; the processor checks each item again anyway.
        messages.push({ key, value: Buffer.concat([this.header, Buffer.from(JSON.stringify(value))]), timestamp });
      }
    }
    await sendInParts(this.producer, this.topic, messages, { send: (part) => this.send(part) });
  }

  private async send(messages: Message[]): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`mm.reported: the broker did not acknowledge ${messages.length} messages within ${SEND_TIMEOUT_MS / 1000} s`)), SEND_TIMEOUT_MS);
    });
    try {
      await Promise.race([this.producer.send({ topic: this.topic, acks: -1, messages }), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  close(): Promise<void> {
    return this.producer.disconnect();
  }
}

/** The service's publisher: one idempotent producer, connected here, disconnected by close(). */
export async function connectReportedPublisher(
  kafka: Kafka,
  config: Pick<Config, 'topicPrefix'>,
  registry: { schemaIds: ReadonlyMap<BaseTopic, number> },
): Promise<ReportedMetricsPublisher> {
  const schemaId = registry.schemaIds.get('mm.reported');
  if (schemaId === undefined) throw new Error('the schema of mm.reported is not registered');
  // Idempotent, as every producer (lib/kafka.ts): a send kafkajs retries is written once;
  // requests' sends take turns, one produce request in flight. A send that gives up fails
  // its request, which may be sent again as it is: the copy carries the same key and push
  // time, so the processor writes the same row again and nothing changes.
  const producer = createProducer(kafka);
  await producer.connect();
  return new KafkaReportedPublisher(producer, schemaId, topicName(config, 'mm.reported'));
}
