import { useEffect, useState } from 'preact/hooks';
import { apiKey, listEndpoints, type EndpointSummary } from './api/client';
import { EndpointEditor } from './pages/EndpointEditor';
import { EndpointPage } from './pages/EndpointPage';
import { EndpointsPage } from './pages/EndpointsPage';
import { SignIn } from './pages/SignIn';
import { SourcePage, SourcesPage } from './pages/SourcesPage';
import { AlertPage, AlertsPage } from './pages/AlertsPage';
import { linkProps, useRoute } from './router';
import { Explorer } from './explorer/Explorer';

export interface Session {
  admin: boolean;
  endpoints: EndpointSummary[];
  reload: () => Promise<void>;
}

export function App() {
  const route = useRoute();
  const [session, setSession] = useState<Session | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [signedIn, setSignedIn] = useState(apiKey.get() !== null);

  const load = async () => {
    const listed = await listEndpoints();
    if ('error' in listed) {
      setError(listed.error.message);
      if (listed.error.code === 401) signOut();
      return;
    }
    setError(null);
    setSession({ ...listed, reload: load });
  };
  const signOut = () => {
    apiKey.clear();
    setSession(null);
    setSignedIn(false);
  };
  useEffect(() => {
    if (signedIn) void load();
  }, [signedIn]);

  if (!signedIn) return <SignIn onSignedIn={() => setSignedIn(true)} />;
  return (
    <div class="shell">
      <header class="top">
        <a class="brand" {...linkProps({ page: 'endpoints' })}>
          logquery <span>console</span>
        </a>
        <nav>
          <a {...linkProps({ page: 'endpoints' })} class={route.page.startsWith('endpoint') ? 'active' : ''}>
            Endpoints
          </a>
          {session?.admin && (
            <a {...linkProps({ page: 'sources' })} class={route.page.startsWith('source') ? 'active' : ''}>
              Sources
            </a>
          )}
          {session?.admin && (
            <a {...linkProps({ page: 'alerts' })} class={route.page.includes('alert') ? 'active' : ''}>
              Alerts
            </a>
          )}
          {session?.admin && (
            <a {...linkProps({ page: 'new' })} class={route.page === 'new' ? 'active' : ''}>
              New endpoint
            </a>
          )}
          <a href="/api/openapi.json" target="_blank" rel="noreferrer">
            OpenAPI
          </a>
        </nav>
        <span class="who">{session ? (session.admin ? 'admin key' : 'query key') : ''}</span>
        <button class="link" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main>
        {error && <p class="error-box">{error}</p>}
        {!session ? (
          <p class="muted">Loading…</p>
        ) : route.page === 'endpoints' ? (
          <EndpointsPage session={session} />
        ) : route.page === 'endpoint' ? (
          <EndpointPage key={route.name} session={session} name={route.name} />
        ) : route.page === 'new' ? (
          <EndpointEditor session={session} />
        ) : route.page === 'edit' ? (
          <EndpointEditor session={session} name={route.name} />
        ) : route.page === 'sources' ? (
          <SourcesPage />
        ) : route.page === 'explorer' ? (
          <Explorer key={route.name} name={route.name} />
        ) : route.page === 'alerts' ? (
          <AlertsPage />
        ) : route.page === 'alert' ? (
          <AlertPage key={route.name} name={route.name} />
        ) : route.page === 'new-alert' ? (
          <AlertPage />
        ) : (
          <SourcePage name={route.name} />
        )}
      </main>
    </div>
  );
}
