// The load generator of bench:load, in a process of its own so it does not share the
// service's event loop: autocannon with `connections` clients for `seconds`, on one path
// or on a window of its own per request. Prints its figures as one JSON line.
import autocannon from 'autocannon';

export interface LoadSpec {
  url: string;
  token: string;
  connections: number;
  seconds: number;
  /** Paths asked in turn by every client (the same rolling windows again and again). */
  paths: string[];
  /**
   * Instead, on this endpoint: `client`, each client its own rolling hour, ending `i` minutes
   * before now for the i-th client (asked again and again, like a dashboard); `request`,
   * every request an hour of its own, ending at a random moment of the last `spreadHours`.
   */
  windows?: { path: string; per: 'client' | 'request'; spreadHours: number };
}

export interface LoadResult {
  requests: number;
  perSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
  status5xx: number;
  errors: number;
  timeouts: number;
}

const spec = JSON.parse(process.argv[2]!) as LoadSpec;

const iso = (ms: number) => new Date(ms).toISOString();
/**
 * An hour ending `endsAgoMs` before now, to the millisecond, as a browser's clock gives it.
 * (To the second, the windows of the clients came round again minutes later, so the window
 * cache kept their pieces, at a cost, without their being asked again: docs/benchmarks.md.)
 */
const hourPath = (path: string, endsAgoMs: number) => {
  const end = Date.now() - Math.round(endsAgoMs);
  return `${path}${path.includes('?') ? '&' : '?'}time_start=${iso(end - 3_600_000)}&time_end=${iso(end)}`;
};
let clients = 0;

const result = await autocannon({
  url: spec.url,
  connections: spec.connections,
  duration: spec.seconds,
  headers: { Authorization: `Token ${spec.token}` },
  requests: spec.windows
    ? [
        {
          method: 'GET',
          // autocannon gives each client a context of its own.
          setupRequest: (req, context: { client?: number }) => {
            const w = spec.windows!;
            context.client ??= clients++;
            return { ...req, path: hourPath(w.path, w.per === 'client' ? context.client * 60_000 : Math.random() * w.spreadHours * 3_600_000) };
          },
        },
      ]
    : spec.paths.map((path) => ({ method: 'GET' as const, path })),
});
const out: LoadResult = {
  requests: result.requests.total,
  perSecond: result.requests.total / result.duration,
  p50: result.latency.p50,
  p99: result.latency.p99,
  non2xx: result.non2xx,
  status5xx: result['5xx'],
  errors: result.errors,
  timeouts: result.timeouts,
};
process.stdout.write(JSON.stringify(out) + '\n');
