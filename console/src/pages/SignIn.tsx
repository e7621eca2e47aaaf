import { useState } from 'preact/hooks';
import { api, apiKey } from '../api/client';

/** Asks for an API key and checks it before keeping it (sessionStorage; see api/client.ts). */
export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    apiKey.set(key.trim());
    const { response, error: failure } = await api.GET('/api/openapi.json');
    setBusy(false);
    if (response.ok) return onSignedIn();
    apiKey.clear();
    setError(
      response.status === 403
        ? 'This key cannot run endpoints (it has no query or admin scope).'
        : ((failure as { error?: { message?: string } })?.error?.message ?? `The service answered ${response.status}.`),
    );
  };
  return (
    <div class="signin">
      <form onSubmit={submit}>
        <h1>
          logquery <span>console</span>
        </h1>
        <p class="muted">Sign in with an API key with the query or admin scope. It is kept for this tab only.</p>
        <label>
          API key
          <input name="api_key" type="password" autocomplete="off" value={key} onInput={(e) => setKey(e.currentTarget.value)} required />
        </label>
        {error && <p class="error-box">{error}</p>}
        <button type="submit" disabled={busy || !key.trim()}>
          Sign in
        </button>
      </form>
    </div>
  );
}
