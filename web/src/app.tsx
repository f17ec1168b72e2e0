import { useQuery, useQueryClient } from '@tanstack/react-query';
import { lazy, Suspense, useEffect, useRef, type ReactNode } from 'react';
import { api, unwrap } from './api/client';
import { session, useSession } from './api/session';
import { navigate, useLocation } from './router';
import { MarketsView } from './views/markets/markets-view';
import { SignInView } from './views/sign-in/sign-in-view';

// The first view ships with the app; the others load when opened.
const MarketMakersView = lazy(() => import('./views/market-makers/market-makers-view'));
const TargetsView = lazy(() => import('./views/targets/targets-view'));
const LoansView = lazy(() => import('./views/loans/loans-view'));
const RfqView = lazy(() => import('./views/rfq/rfq-view'));
const AccountView = lazy(() => import('./views/account/account-view'));

const VIEWS: { path: string; title: string; render: () => ReactNode }[] = [
  { path: 'markets', title: 'Markets', render: () => <MarketsView /> },
  { path: 'market-makers', title: 'Market makers', render: () => <MarketMakersView /> },
  { path: 'targets', title: 'Targets', render: () => <TargetsView /> },
  { path: 'loans', title: 'Loans', render: () => <LoansView /> },
  { path: 'rfq', title: 'RFQ', render: () => <RfqView /> },
  { path: 'account', title: 'Account', render: () => <AccountView /> },
];

export function useSessionInfo() {
  return useQuery({ queryKey: ['session'], queryFn: async () => unwrap(await api.GET('/v1/session/')), refetchInterval: false, staleTime: 60_000 });
}

export function App() {
  const signedIn = useSession();
  const { view } = useLocation();
  if (!signedIn) return <SignInView />;
  const current = VIEWS.find((v) => v.path === view);
  if (!current) {
    navigate('markets', true);
    return null;
  }
  return <Shell current={current.path} title={current.title}>{current.render()}</Shell>;
}

function Shell({ current, title, children }: { current: string; title: string; children: ReactNode }) {
  const queryClient = useQueryClient();
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
            {VIEWS.map((v) => (
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
