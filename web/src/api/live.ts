// Open views follow the data through the API's event stream (GET /v2/stream/tickets/{ticket}/,
// server-sent events): an event says what changed, and the cached queries it touches are
// invalidated, so TanStack Query asks the API again for what is shown. The stream carries no
// state of its own to the views: the endpoints stay the one source of what a view shows.
//
// An EventSource cannot send the Authorization header, and a token never goes in a URL: the
// app asks a single-use ticket (valid 30 s) through the typed client and opens the stream
// with it. A used ticket cannot reconnect, so on any error this closes the EventSource
// itself (its own retry would only get a 401) and, while it is down, the views ask again
// every 15 s (`refetchInterval` below); it reconnects with a new ticket and the last id
// received, so the events missed meanwhile still come.
import { type QueryClient, useQueryClient } from '@tanstack/react-query';
import { useEffect, useSyncExternalStore } from 'react';
import { api, unwrap, type QueryOf } from './client';
import { useSession } from './session';

type StreamQuery = QueryOf<'/v2/stream/tickets/{ticket}/'>;
export type EventType = NonNullable<StreamQuery['events']>[number];

/** What a view follows: the event types, and per type the query keys (their first part) it refreshes. */
export interface Follow {
  events: EventType[];
  assets?: string[];
  refresh: Partial<Record<EventType, string[]>>;
}

/** How often an open view asks again when the stream is not open. */
export const REFRESH_MS = 15_000;
/** Minutes come by the dozen (one per pair and source): the keys they touch are refreshed at most this often. */
const GATHER_MS = 2_000;
/** Waits before a new ticket after an error, growing to the last. */
const RECONNECT_MS = [1_000, 3_000, 10_000, 30_000];

export type LiveState = 'off' | 'connecting' | 'live' | 'down';
let state: LiveState = 'off';
const listeners = new Set<() => void>();
function setState(s: LiveState): void {
  if (s === state) return;
  state = s;
  for (const l of listeners) l();
}

/** The queries' refetchInterval: none while the stream tells what changed, 15 s otherwise. */
export const refetchInterval = (): number | false => (state === 'live' ? false : REFRESH_MS);

export function useLiveState(): LiveState {
  return useSyncExternalStore(
    (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    () => state,
  );
}

/** Opens the stream for what the view follows, and keeps it open until the returned function is called. */
export function follow(queryClient: QueryClient, f: Follow): () => void {
  let closed = false;
  let source: EventSource | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let lastId: string | null = null;
  let failures = 0;
  const pending = new Set<string>();
  let flush: ReturnType<typeof setTimeout> | undefined;

  const refresh = (keys: string[]) => {
    for (const k of keys) pending.add(k);
    flush ??= setTimeout(() => {
      flush = undefined;
      for (const k of pending) void queryClient.invalidateQueries({ queryKey: [k] });
      pending.clear();
    }, GATHER_MS);
  };

  const retry = () => {
    if (closed) return;
    setState('down');
    // Whatever changed while the stream was closing is asked now; the 15 s refetch then
    // runs until the stream is back (a query's interval is read again when it updates).
    void queryClient.invalidateQueries();
    timer = setTimeout(connect, RECONNECT_MS[Math.min(failures, RECONNECT_MS.length - 1)]);
    failures += 1;
  };

  async function connect(): Promise<void> {
    if (closed) return;
    setState('connecting');
    let url: string;
    try {
      const t = unwrap(await api.POST('/v2/stream/tickets/'));
      const q = new URLSearchParams();
      // Lists as the document takes them: one comma-separated value.
      q.set('events', f.events.join(','));
      if (f.assets?.length) q.set('assets', f.assets.join(','));
      if (lastId) q.set('last_event_id', lastId);
      url = `${t.url}?${q}`;
    } catch {
      retry();
      return;
    }
    if (closed) return;
    const opened = Date.now();
    const resumed = lastId !== null;
    const es = new EventSource(url);
    source = es;
    es.onopen = () => {
      failures = 0;
      setState('live');
      // A new stream starts from now: what changed between a query's answer and this moment
      // would come as no event, so queries answered before it are asked again. A resumed one
      // sends the events after the last id.
      if (!resumed) void queryClient.invalidateQueries({ predicate: (q) => q.state.dataUpdatedAt > 0 && q.state.dataUpdatedAt < opened });
    };
    for (const type of f.events) {
      es.addEventListener(type, (e) => {
        lastId = (e as MessageEvent).lastEventId || lastId;
        const keys = f.refresh[type];
        if (keys) refresh(keys);
      });
    }
    es.addEventListener('reset', (e) => {
      lastId = (e as MessageEvent).lastEventId || null;
      // The events after our id are no longer kept (or we fell behind): read everything again.
      void queryClient.invalidateQueries();
    });
    es.onerror = () => {
      es.close();
      if (source === es) source = null;
      retry();
    };
  }

  void connect();
  return () => {
    closed = true;
    clearTimeout(timer);
    clearTimeout(flush);
    source?.close();
    setState('off');
  };
}

/** Follows the data for the open view while signed in; `f` null follows nothing (the view polls). */
export function useFollow(f: Follow | null): void {
  const queryClient = useQueryClient();
  const signedIn = useSession();
  // The follow's identity: a new stream only when what it asks changes.
  const key = f && signedIn ? JSON.stringify([f.events, f.assets ?? []]) : null;
  useEffect(() => {
    if (!f || !key) return;
    return follow(queryClient, f);
    // `f` is read through its key: a new object with the same content keeps the stream.
  }, [key, queryClient]);
}
