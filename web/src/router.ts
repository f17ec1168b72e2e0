// A small router over the History API: the view is the path under /app/, the view's
// parameters are the query string (so a view's address can be shared and reloaded; it
// never holds a token).
import { useCallback, useSyncExternalStore } from 'react';

export const BASE = '/app/';
const listeners = new Set<() => void>();
const emit = () => listeners.forEach((l) => l());
window.addEventListener('popstate', emit);

const subscribe = (l: () => void) => {
  listeners.add(l);
  return () => listeners.delete(l);
};
const snapshot = () => window.location.pathname + window.location.search;

export function navigate(to: string, replace = false): void {
  const url = to.startsWith('/') ? to : BASE + to;
  if (url === snapshot()) return;
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  emit();
}

export function useLocation(): { view: string; params: URLSearchParams } {
  const loc = useSyncExternalStore(subscribe, snapshot);
  const [path = '', search = ''] = loc.split('?');
  const view = path.startsWith(BASE) ? path.slice(BASE.length).replace(/\/$/, '') : '';
  return { view, params: new URLSearchParams(search) };
}

/** The view's parameters in the query string: read one, or set several (replacing the entry). */
export function useSearchParams(): [URLSearchParams, (changes: Record<string, string | null>) => void] {
  const { params } = useLocation();
  const set = useCallback((changes: Record<string, string | null>) => {
    const next = new URLSearchParams(window.location.search);
    for (const [k, v] of Object.entries(changes)) {
      if (v === null || v === '') next.delete(k);
      else next.set(k, v);
    }
    const q = next.toString();
    navigate(window.location.pathname + (q ? `?${q}` : ''), true);
  }, []);
  return [params, set];
}
