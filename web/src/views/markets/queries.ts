// The Markets view's server state: one query per endpoint and parameter set, kept in
// TanStack Query's cache (refreshed on the live stream's minutes, api/live.ts).
import { useQueries, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap, type QueryOf, type Schemas } from '../../api/client';
import { refetchInterval } from '../../api/live';
import { windowQuery, type MarketParams } from './params';

export type SpreadUptimeRow = Schemas['SpreadUptimeRow'];
export type DepthUptimeRow = Schemas['DepthUptimeRow'];
export type SummaryRow = Schemas['MarketSummaryRow'];

export const spreadUptimeQuery = (p: MarketParams): QueryOf<'/v2/metrics/uptime/spread/'> => ({ assets: [p.asset], interval: p.interval, bps: [p.level], ...windowQuery(p) });
export const depthUptimeQuery = (p: MarketParams): QueryOf<'/v2/metrics/uptime/depth/'> => ({ assets: [p.asset], interval: p.interval, bps: [p.level], amounts: [p.amount], ...windowQuery(p) });
export const summaryQuery = (p: MarketParams): QueryOf<'/v2/metrics/summary/'> => ({ assets: [p.asset], bps: [p.level], ...windowQuery(p) });
export const regionalQuery = (p: MarketParams): QueryOf<'/v2/metrics/volume/regional/'> => ({ assets: [p.asset], interval: 'a', ...windowQuery(p) });

/**
 * The spread uptime; its buckets are the spans of depth and volume over time, whose summary
 * requests are sent as soon as it is answered (not after the view has drawn what it got:
 * drawing the charts holds the main thread before the spans' queries would start).
 */
export function useSpreadUptime(p: MarketParams) {
  const queryClient = useQueryClient();
  const query = spreadUptimeQuery(p);
  return useQuery({
    queryKey: ['uptime/spread', query],
    queryFn: async () => {
      const rows = unwrap(await api.GET('/v2/metrics/uptime/spread/', { params: { query } }));
      if (p.mode !== 'session') for (const s of spansOf(rows, p)) void queryClient.prefetchQuery(spanQuery(p, s));
      return rows;
    },
    enabled: !!p.asset,
  });
}

export function useDepthUptime(p: MarketParams) {
  const query = depthUptimeQuery(p);
  return useQuery({ queryKey: ['uptime/depth', query], queryFn: async () => unwrap(await api.GET('/v2/metrics/uptime/depth/', { params: { query } })), enabled: !!p.asset });
}

export function useSummary(p: MarketParams) {
  const query = summaryQuery(p);
  return useQuery({ queryKey: ['summary', query], queryFn: async () => unwrap(await api.GET('/v2/metrics/summary/', { params: { query } })), enabled: !!p.asset });
}

/** One asset's entry of the regional volume over the window (`interval=a`: keyed by asset). */
export type RegionalAsset = Extract<Schemas['RegionalVolume'], Record<string, unknown>>[string];

export function useRegional(p: MarketParams) {
  const query = regionalQuery(p);
  return useQuery({
    queryKey: ['volume/regional', query],
    queryFn: async (): Promise<RegionalAsset | null> => {
      const data = unwrap(await api.GET('/v2/metrics/volume/regional/', { params: { query } }));
      // Bucketed intervals answer a list; this query asks `a`, the object keyed by asset.
      return Array.isArray(data) ? null : (data[p.asset] ?? null);
    },
    enabled: !!p.asset,
  });
}

export interface Span {
  start: string;
  /** undefined: up to the window's end ("now" for a lookback). */
  end?: string;
}

/** At most this many buckets are asked of the summary for the depth and volume over time. */
export const MAX_SPANS = 24;

/**
 * The buckets of the spread-uptime answer (the API's own bucket starts for these parameters)
 * as spans for the summary, merged into at most MAX_SPANS. The summary answers one window
 * at a time, so depth and volume over time are one summary answer per span.
 */
export function spansOf(rows: readonly SpreadUptimeRow[], p: MarketParams): Span[] {
  const starts = [...new Set(rows.map((r) => r.timestamp).filter((t): t is string => !!t))].sort((a, b) => Date.parse(a) - Date.parse(b));
  if (starts.length === 0) return [];
  const step = Math.ceil(starts.length / MAX_SPANS);
  const picked = starts.filter((_, i) => i % step === 0);
  const end = p.mode === 'range' && p.end ? p.end : undefined;
  return picked.map((start, i) => ({ start, end: picked[i + 1] ?? end }));
}

/** The summary of one span, as the view and the spread uptime's prefetch ask it. */
function spanQuery(p: MarketParams, s: Span) {
  const query: QueryOf<'/v2/metrics/summary/'> = { assets: [p.asset], bps: [p.level], time_start: s.start, ...(s.end ? { time_end: s.end } : {}) };
  const sealed = !!s.end && Date.parse(s.end) < Date.now() - 10 * 60_000;
  return {
    queryKey: ['summary', query],
    queryFn: async () => unwrap(await api.GET('/v2/metrics/summary/', { params: { query } })),
    // A span that ended a while ago does not change: asked once ('static': the live
    // stream's invalidations pass it by too).
    staleTime: sealed ? ('static' as const) : 10_000,
    refetchInterval: sealed ? (false as const) : refetchInterval,
  };
}

export function useSummaryPerSpan(p: MarketParams, spans: Span[]) {
  return useQueries({ queries: spans.map((s) => spanQuery(p, s)) });
}
