import { useEffect, useMemo, useState } from 'preact/hooks';
import { type ApiError, api, type Mode, setApiMode, setCsrfToken, whenSignedOut } from './api.js';
import { AppContext, type AppState, savedMode, saveMode } from './app-state.js';
import { Shell } from './components/shell.js';
import { ErrorMessage, Loading } from './components/status.js';
import { ApiKeys } from './pages/api-keys.js';
import { Channels } from './pages/channels.js';
import { ConversionPage } from './pages/conversion.js';
import { Conversions } from './pages/conversions.js';
import { Customers } from './pages/customers.js';
import { MatchQuality } from './pages/match-quality.js';
import { NotFound } from './pages/not-found.js';
import { Overview } from './pages/overview.js';
import { Reconciliation } from './pages/reconciliation.js';
import { SignIn } from './pages/sign-in.js';
import { StorePage } from './pages/store.js';
import { Stores } from './pages/stores.js';
import { Webhooks } from './pages/webhooks.js';
import { BASE, match, Redirect, useLocation } from './router.js';
import type { SessionInfo } from './types.js';

type Phase =
  | { phase: 'checking' }
  | { phase: 'unreachable'; error: ApiError }
  | { phase: 'signed-out'; notice?: string }
  | { phase: 'signed-in'; session: SessionInfo };

function Page() {
  const { path } = useLocation();
  if (path === BASE) return <Overview />;
  if (path === `${BASE}/stores`) return <Stores />;
  const store = match(`${BASE}/stores/:id`, path);
  if (store?.id) return <StorePage id={store.id} />;
  if (path === `${BASE}/conversions`) return <Conversions />;
  const conversion = match(`${BASE}/conversions/:id`, path);
  if (conversion?.id) return <ConversionPage id={conversion.id} />;
  if (path === `${BASE}/match-quality`) return <MatchQuality />;
  if (path === `${BASE}/reconciliation`) return <Reconciliation />;
  if (path === `${BASE}/channels`) return <Channels />;
  if (path === `${BASE}/customers`) return <Customers />;
  if (path === `${BASE}/webhooks`) return <Webhooks />;
  if (path === `${BASE}/settings`) return <Redirect to={`${BASE}/settings/api-keys`} />;
  if (path === `${BASE}/settings/api-keys`) return <ApiKeys />;
  return <NotFound />;
}

export function App() {
  const [state, setState] = useState<Phase>({ phase: 'checking' });
  const [mode, setMode] = useState<Mode>(savedMode);
  // Set before the pages render: their requests carry the mode they were rendered for.
  setApiMode(mode);

  const check = () => {
    setState({ phase: 'checking' });
    api.get<SessionInfo | { signedIn: false }>('/session').then(
      (session) => {
        if (!session.signedIn) return setState({ phase: 'signed-out' });
        setCsrfToken(session.csrfToken);
        setState({ phase: 'signed-in', session });
      },
      (error: ApiError) => setState({ phase: 'unreachable', error }),
    );
  };

  // Runs once, at start.
  useEffect(() => {
    whenSignedOut(() => setState({ phase: 'signed-out', notice: 'Your session has ended. Sign in again to go on.' }));
    check();
  }, []);

  const app = useMemo<AppState | null>(() => {
    if (state.phase !== 'signed-in') return null;
    return {
      session: state.session,
      mode,
      setMode(next) {
        saveMode(next);
        setMode(next);
      },
      async signOut() {
        await api.delete('/session').catch(() => undefined);
        setCsrfToken('');
        setState({ phase: 'signed-out', notice: 'You are signed out.' });
      },
    };
  }, [state, mode]);

  if (state.phase === 'checking') return <Loading />;
  if (state.phase === 'unreachable') {
    return (
      <main id="main">
        <ErrorMessage error={state.error} retry={check} />
      </main>
    );
  }
  if (state.phase === 'signed-out' || !app) {
    return (
      <SignIn
        notice={state.phase === 'signed-out' ? state.notice : undefined}
        onSignedIn={(session) => {
          setCsrfToken(session.csrfToken);
          setState({ phase: 'signed-in', session });
        }}
      />
    );
  }
  return (
    <AppContext.Provider value={app}>
      <Shell>
        <Page />
      </Shell>
    </AppContext.Provider>
  );
}
