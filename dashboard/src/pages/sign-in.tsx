import { useState } from 'preact/hooks';
import { ApiError, api } from '../api.js';
import type { SessionInfo } from '../types.js';

/** The form a visitor without a session sees, whatever /dashboard page they asked for. */
export function SignIn({ onSignedIn, notice }: { onSignedIn(session: SessionInfo): void; notice?: string }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    setError(undefined);
    try {
      const session = await api.post<SessionInfo>('/session', {
        email: String(form.get('email') ?? ''),
        password: String(form.get('password') ?? ''),
      });
      onSignedIn(session);
    } catch (e) {
      const apiError = e instanceof ApiError ? e : undefined;
      // The server never says which of the two was wrong; neither does the page.
      setError(
        apiError?.status === 401 ? 'Invalid email or password' : (apiError?.message ?? 'Sign-in failed; try again in a moment.'),
      );
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" class="sign-in">
      <h1>Sign in to Waytrack</h1>
      {notice && <p class="notice">{notice}</p>}
      <form onSubmit={submit} noValidate={false}>
        <div class="field">
          <label for="email">Email</label>
          <input id="email" name="email" type="email" autocomplete="username" required autofocus />
        </div>
        <div class="field">
          <label for="password">Password</label>
          <input id="password" name="password" type="password" autocomplete="current-password" required />
        </div>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      <p class="hint">
        No password yet? On the server, run <code>waytrack account password --email you@example.com</code>.
      </p>
    </main>
  );
}
