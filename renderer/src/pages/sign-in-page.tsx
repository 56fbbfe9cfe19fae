import { useState } from 'preact/hooks';

import { ApiRequestError } from '../api-client.js';
import { TextField } from '../components/fields.js';
import { signIn } from '../session.js';

/** Shown when there is no session: the admin pastes the token the server printed. */
export function SignInPage({ onSignedIn, problem }: { onSignedIn: () => void; problem?: string | null }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(problem ?? null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    if (token.trim() === '') {
      setError('Paste the admin token.');
      return;
    }
    setBusy(true);
    try {
      await signIn(token.trim());
      onSignedIn();
    } catch (err) {
      setError(err instanceof ApiRequestError && err.status === 401 ? 'That token is not right. Check the admin-token file.' : String((err as Error).message ?? err));
      setBusy(false);
    }
  };
  return (
    <main class="sign-in" id="main">
      <form class="card sign-in-card" onSubmit={submit} noValidate>
        <h1>Screenshot Appliance</h1>
        <p>
          Open the control-panel address the server printed when it started, or paste the admin token from the{' '}
          <code>admin-token</code> file in the data directory.
        </p>
        <TextField label="Admin token" value={token} onInput={setToken} error={error} autoFocus autoComplete="off" />
        <div class="form-actions">
          <button type="submit" class="button primary" disabled={busy}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
        </div>
      </form>
    </main>
  );
}
