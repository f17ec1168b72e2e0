// Where the token lives. The API takes it in the Authorization header (never in a URL, never
// a cookie the browser would send by itself), so it must be readable by the app's own code:
// sessionStorage by default (this tab only, gone when the tab closes, kept across a
// reload), localStorage when the user ticks "keep me signed in" (the API's remember_me, a
// token that idles out after 7 days instead of 1). The page's Content-Security-Policy runs
// no script but the app's own, which is what keeps either store from other code.
import { useSyncExternalStore } from 'react';

const KEY = 'mm-metrics.token';

export interface Session {
  token: string;
  remembered: boolean;
}

type Listener = () => void;
const listeners = new Set<Listener>();
let current: Session | null = read();
/** Why the last session ended when it was not by signing out (the API's words). */
let endedBecause: string | null = null;

function read(): Session | null {
  const t = sessionStorage.getItem(KEY);
  if (t) return { token: t, remembered: false };
  const r = localStorage.getItem(KEY);
  return r ? { token: r, remembered: true } : null;
}

function emit(): void {
  for (const l of listeners) l();
}

export const session = {
  get: (): Session | null => current,
  token: (): string | null => current?.token ?? null,
  endedBecause: (): string | null => endedBecause,
  start(token: string, remembered: boolean): void {
    sessionStorage.removeItem(KEY);
    localStorage.removeItem(KEY);
    (remembered ? localStorage : sessionStorage).setItem(KEY, token);
    current = { token, remembered };
    endedBecause = null;
    emit();
  },
  end(reason: string | null = null): void {
    sessionStorage.removeItem(KEY);
    localStorage.removeItem(KEY);
    current = null;
    endedBecause = reason;
    emit();
  },
  subscribe(l: Listener): () => void {
    listeners.add(l);
    return () => listeners.delete(l);
  },
};

// Another tab signing out (or in) with a remembered token.
window.addEventListener('storage', (e) => {
  if (e.key !== KEY && e.key !== null) return;
  current = read();
  emit();
});

export function useSession(): Session | null {
  return useSyncExternalStore(session.subscribe, session.get);
}
