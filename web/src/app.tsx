import { useQueryClient } from '@tanstack/react-query';
import { lazy, Suspense, useEffect, useRef, type ReactNode } from 'react';
import { api } from './api/client';
import { useFollow, useLiveState, type Follow } from './api/live';
import { session, useSession } from './api/session';
import { useSessionInfo } from './api/session-info';
import { navigate, useLocation } from './router';
import { MarketsView } from './views/markets/markets-view';
import { SignInView } from './views/sign-in/sign-in-view';

// The first view ships with the app; the others load when opened.
const MarketMakersView = lazy(() => import('./views/market-makers/market-makers-view'));
const TargetsView = lazy(() => import('./views/targets/targets-view'));
const LoansView = lazy(() => import('./views/loans/loans-view'));
const RfqView = lazy(() => import('./views/rfq/rfq-view'));
const AccountView = lazy(() => import('./views/account/account-view'));
const OperationsView = lazy(() => import('./views/operations/operations-view'));

/** Market data's queries: what a new minute changes. */
const MARKET_KEYS = ['summary', 'uptime/spread', 'uptime/depth', 'volume/regional', 'leaderboard'];

/**
 * The views, and what each follows on the live stream (api/live.ts): the event types it
 * shows, narrowed to the asset it shows when it shows one, and the queries (by the first
 * part of their key) each type refreshes. The Account view follows nothing; Operations is
 * for staff only (the API answers its endpoints to staff alone).
 */
const VIEWS: { path: string; title: string; staff?: true; render: () => ReactNode; follow?: (q: URLSearchParams) => Follow }[] = [
  { path: 'markets', title: 'Markets', render: () => <MarketsView />, follow: (q) => ({ events: ['minute'], assets: oneOf(q.get('asset')), refresh: { minute: MARKET_KEYS } }) },
  { path: 'market-makers', title: 'Market makers', render: () => <MarketMakersView />, follow: () => ({ events: ['minute'], refresh: { minute: ['reconciliation', 'trusted-depth', 'mm-summary'] } }) },
  // A target's evaluations come a minute at a time after the market's minutes; its status
  // changes are `target` events.
  { path: 'targets', title: 'Targets', render: () => <TargetsView />, follow: (q) => ({ events: ['target', 'minute'], assets: oneOf(q.get('target_assets')), refresh: { target: ['targets', 'evaluations'], minute: ['evaluations'] } }) },
  // A loan's valuation and a proposal's measured track record move with the market too.
  { path: 'loans', title: 'Loans', render: () => <LoansView />, follow: () => ({ events: ['loan', 'minute'], refresh: { loan: ['loans', 'loan'], minute: ['loan'] } }) },
  { path: 'rfq', title: 'RFQ', render: () => <RfqView />, follow: () => ({ events: ['rfq', 'minute'], refresh: { rfq: ['rfqs', 'proposals'], minute: ['proposals'] } }) },
  { path: 'account', title: 'Account', render: () => <AccountView /> },
  { path: 'operations', title: 'Operations', staff: true, render: () => <OperationsView />, follow: () => ({ events: ['minute'], refresh: { minute: ['status', 'orderbook-minutes'] } }) },
];

/** A filter of one value from the address, as the stream's list; none: all the caller's. */
const oneOf = (v: string | null): string[] | undefined => (v ? [v] : undefined);

export function App() {
  const signedIn = useSession();
  const { view, params } = useLocation();
  const info = useSessionInfo(signedIn !== null);
  if (!signedIn) return <SignInView />;
  const views = VIEWS.filter((v) => !v.staff || info.data?.staff === true);
  const current = views.find((v) => v.path === view);
  if (!current) {
    // A staff view waits for the session to say who this is; for anyone else it does not exist.
    if (info.isPending && VIEWS.some((v) => v.path === view)) return null;
    navigate('markets', true);
    return null;
  }
  return <Shell views={views} current={current.path} title={current.title} follow={current.follow?.(params) ?? null}>{current.render()}</Shell>;
}

function Shell({ views, current, title, follow, children }: { views: typeof VIEWS; current: string; title: string; follow: Follow | null; children: ReactNode }) {
  const queryClient = useQueryClient();
  useFollow(follow);
  const live = useLiveState();
  const info = useSessionInfo();
  const main = useRef<HTMLElement>(null);
  useEffect(() => {
    document.title = `${title} · mm-metrics`;
    main.current?.focus();
  }, [title]);
  const signOut = async () => {
    // The token is revoked first; whatever the answer, this browser forgets it.
    await api.POST('/v1/logout/').catch(() => undefined);
    session.end();
    queryClient.clear();
  };
  const user = info.data?.user;
  return (
    <div className="shell">
      <a className="skip" href="#main">Skip to content</a>
      <header className="top">
        <span className="brand">mm-metrics</span>
        <nav aria-label="Views">
          <ul>
            {views.map((v) => (
              <li key={v.path}>
                <a
                  href={`/app/${v.path}`}
                  aria-current={v.path === current ? 'page' : undefined}
                  onClick={(e) => {
                    if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
                    e.preventDefault();
                    navigate(v.path);
                  }}
                >
                  {v.title}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <span className="who">
          <span className="muted" title={live === 'live' ? 'Views refresh when the data changes (the live stream).' : 'The live stream is not open: views refresh every 15 s.'}>
            {live === 'live' ? 'Live' : 'Refreshing every 15 s'}
          </span>
          {user && <span>{user.first_name || user.username} · {user.email}</span>}
          <button type="button" className="secondary" onClick={signOut}>Sign out</button>
        </span>
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        <h1>{title}</h1>
        <Suspense fallback={<p role="status" className="muted">Loading…</p>}>{children}</Suspense>
      </main>
    </div>
  );
}
