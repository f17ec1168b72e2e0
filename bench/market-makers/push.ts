// The reported-metrics push under load, for the market-maker benchmark: N requests of
// 1,000 valid items each (by default) against a running service, a few at a time, each
// answered once Kafka acknowledged its items. Gives the items accepted per second and the
// request times. Items are new keys (a metric and a 5-minute bucket each), the costlier
// case for the processor behind; the figure is the endpoint's, not the processor's.
import { MM_METRICS } from '../../domain/market/facts.ts';
import { percentile } from '../common.ts';

const PATH = '/v2/organizations/reported-metrics/';
export const FIVE_MINUTES = 300_000;

export interface PushTarget {
  organization: string;
  asset: string;
  exchange: string;
  pair: string;
}

export interface PushBenchOptions {
  /** The service's base URL, e.g. http://127.0.0.1:8080. */
  url: string;
  /** A login token, or a whole Authorization value (`Api-Key <key>`). */
  token: string;
  requests: number;
  /** Default 1,000. */
  itemsPerRequest?: number;
  /** Requests in flight at once; default 4. */
  concurrency?: number;
  /** Where to push; by default the caller's first market-maker organization with a covered pair (GET /v1/organizations/). */
  target?: PushTarget;
  /** The latest 5-minute bucket pushed (epoch ms, aligned); by default the one an hour back. Items go back from it. */
  base?: number;
}

export interface PushBenchResult {
  target: PushTarget;
  requests: number;
  /** Items accepted (202) in all. */
  items: number;
  seconds: number;
  itemsPerSecond: number;
  p50Ms: number;
  p95Ms: number;
}

const authorization = (token: string) => (token.includes(' ') ? token : `Token ${token}`);

async function findTarget(url: string, token: string): Promise<PushTarget> {
  const res = await fetch(`${url}/v1/organizations/`, { headers: { Authorization: authorization(token) } });
  if (res.status !== 200) throw new Error(`GET /v1/organizations/ answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
  const orgs = (await res.json()) as { slug: string; kind: string; pairs: { exchange: string; pair: string; asset: string }[] }[];
  for (const o of orgs) {
    const p = o.kind === 'market_maker' ? o.pairs[0] : undefined;
    if (p) return { organization: o.slug, asset: p.asset, exchange: p.exchange, pair: p.pair };
  }
  throw new Error('the caller has no market-maker organization that covers a pair');
}

/** Request `r`'s items: slot s is metric s mod |MM_METRICS| at the (s div |MM_METRICS|)-th 5-minute bucket before `base`. */
function itemsOf(target: PushTarget, r: number, n: number, base: number): object[] {
  const out: object[] = [];
  for (let i = 0; i < n; i++) {
    const slot = r * n + i;
    out.push({
      ...target,
      metric: MM_METRICS[slot % MM_METRICS.length],
      interval: '5m',
      timestamp: new Date(base - Math.floor(slot / MM_METRICS.length) * FIVE_MINUTES).toISOString(),
      value: (slot % 1000) + 0.5,
    });
  }
  return out;
}

export async function benchPush(opts: PushBenchOptions): Promise<PushBenchResult> {
  const n = opts.itemsPerRequest ?? 1_000;
  const concurrency = Math.max(1, opts.concurrency ?? 4);
  const target = opts.target ?? (await findTarget(opts.url, opts.token));
  // A bucket an hour back: every item is in the past however long the run takes.
  const base = opts.base ?? Math.floor((Date.now() - 3_600_000) / FIVE_MINUTES) * FIVE_MINUTES;
  // Bodies built before the clock starts: the figure is the service's, not JSON.stringify's.
  const bodies = Array.from({ length: opts.requests }, (_, r) => JSON.stringify(itemsOf(target, r, n, base)));
  const times: number[] = [];
  let items = 0;
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    for (let r = next++; r < bodies.length; r = next++) {
      const t0 = performance.now();
      const res = await fetch(`${opts.url}${PATH}`, {
        method: 'POST',
        headers: { Authorization: authorization(opts.token), 'Content-Type': 'application/json' },
        body: bodies[r],
      });
      const text = await res.text();
      times.push(performance.now() - t0);
      if (res.status !== 202) throw new Error(`push ${r} answered ${res.status}: ${text.slice(0, 300)}`);
      items += (JSON.parse(text) as { accepted: number }).accepted;
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, bodies.length) }, worker));
  const seconds = (performance.now() - started) / 1000;
  return { target, requests: bodies.length, items, seconds, itemsPerSecond: items / seconds, p50Ms: percentile(times, 50), p95Ms: percentile(times, 95) };
}
