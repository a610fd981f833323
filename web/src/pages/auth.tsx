/** Sign in and sign up (sign-up as the service allows: open, by invitation, or closed). */
import { useState } from 'preact/hooks';
import { get, post, setCsrfToken } from '../api.js';
import { ErrorMessage, Show, useAsync } from '../components/common.js';
import { navigate, useLoc } from '../router.js';
import { useSession } from '../session.js';

/** Why a single sign-on came back without a session (`/login?sso=<reason>`, see core/auth/oidc.ts). */
const SSO_REFUSALS: Record<string, string> = {
  expired: 'That sign-in took too long or was not started here. Try again.',
  provider: 'The single sign-on provider did not complete the sign-in. Try again later.',
  closed: 'No account here is linked to that identity, and sign-up is closed. Ask the operator for an account.',
  invite: 'No account here is linked to that identity. Sign up with an invitation first, then link it from a signed-in session.',
  linked: 'This account is already linked to another identity.',
};

/**
 * Where to go after signing in: `next` when it is a path of this site, else home. `//host/x` and `/\host` start with
 * a slash but name another site; resolving against our origin tells them apart.
 */
export function localNext(next: string | null): string {
  if (!next?.startsWith('/')) return '/';
  try {
    const url = new URL(next, window.location.origin);
    return url.origin === window.location.origin ? `${url.pathname}${url.search}${url.hash}` : '/';
  } catch {
    return '/';
  }
}

function AuthForm({ mode }: { mode: 'login' | 'signup' }) {
  const session = useSession();
  const { query } = useLoc();
  const options = useAsync(async () => (await get('/api/auth/options')).data, []);
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [invitation, setInvitation] = useState(query.get('invite') ?? '');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setBusy(true);
    try {
      const body = mode === 'signup' ? { username, password, ...(invitation ? { invitation } : {}) } : { username, password };
      const r = await post(`/api/auth/${mode}`, body);
      setCsrfToken(r.data.csrfToken);
      await session.refresh();
      navigate(localNext(query.get('next')));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const title = mode === 'login' ? 'Sign in' : 'Create an account';
  return (
    <section class="narrow">
      <h1>{title}</h1>
      {mode === 'login' && query.get('sso') && (
        <p class="error" role="alert">
          {SSO_REFUSALS[query.get('sso')!] ?? 'Single sign-on did not complete.'}
        </p>
      )}
      <Show value={options}>
        {(o) =>
          mode === 'signup' && o.signup === 'closed' ? (
            <p>Sign-up is closed on this service. Ask its operator for an account.</p>
          ) : (
            <form onSubmit={submit}>
              <div class="field">
                <label for="username">Username</label>
                <input id="username" name="username" autocomplete="username" required value={username} onInput={(e) => setUsername(e.currentTarget.value)} />
              </div>
              <div class="field">
                <label for="password">Password</label>
                <input
                  id="password"
                  name="password"
                  type="password"
                  autocomplete={mode === 'login' ? 'current-password' : 'new-password'}
                  required
                  minLength={mode === 'signup' ? 10 : 1}
                  aria-describedby={mode === 'signup' ? 'pw-hint' : undefined}
                  value={password}
                  onInput={(e) => setPassword(e.currentTarget.value)}
                />
                {mode === 'signup' && <small id="pw-hint">At least 10 characters.</small>}
              </div>
              {mode === 'signup' && o.signup === 'invite' && (
                <div class="field">
                  <label for="invitation">Invitation</label>
                  <input id="invitation" required value={invitation} onInput={(e) => setInvitation(e.currentTarget.value)} />
                </div>
              )}
              <button type="submit" disabled={busy}>
                {title}
              </button>
              <ErrorMessage error={error} />
              {o.oidc && mode === 'login' && (
                <p>
                  <a href={o.oidc.startUrl}>Sign in with {o.oidc.label}</a>
                </p>
              )}
              <p>
                {mode === 'login' ? (
                  o.signup !== 'closed' && (
                    <>
                      No account? <a href="/signup">Create one</a>.
                    </>
                  )
                ) : (
                  <>
                    Have an account? <a href="/login">Sign in</a>.
                  </>
                )}
              </p>
            </form>
          )
        }
      </Show>
    </section>
  );
}

export const LoginPage = () => <AuthForm mode="login" />;
export const SignupPage = () => <AuthForm mode="signup" />;
