/**
 * Account settings: API keys (create — shown once —, list with last use, revoke), the MCP clients signed in with OAuth
 * (list, revoke), tier and quotas, sign-out.
 */
import { useState } from 'preact/hooks';
import { del, get, post } from '../api.js';
import { CopyButton, ErrorMessage, formatDate, Show, useAsync } from '../components/common.js';
import { navigate } from '../router.js';
import { useSession } from '../session.js';

export function SettingsPage() {
  const session = useSession();
  const me = useAsync(async () => (await get('/api/auth/me')).data, []);
  const keyName = (k: any) => k.name ?? 'Unnamed key';
  const keys = useAsync(async () => (await get('/api/keys')).data as any[], []);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<{ key: string; name: string }>();
  const [error, setError] = useState<unknown>();
  const create = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      // A key with no name would be hard to tell apart later: name it after when it was made.
      const r = await post('/api/keys', { name: name.trim() || `Key made ${new Date().toLocaleString()}` });
      setCreated({ key: r.data.key, name: r.data.name ?? '' });
      setName('');
      keys.reload();
    } catch (err) {
      setError(err);
    }
  };
  const revoke = async (k: any) => {
    if (!confirm(`Revoke the key “${keyName(k)}” (${k.prefix}…)? Programs using it stop working at once; this cannot be undone.`)) return;
    setError(undefined);
    try {
      await del(`/api/keys/${k.id}`);
      keys.reload();
    } catch (err) {
      setError(err);
    }
  };
  const grants = useAsync(async () => (await get('/api/auth/me/oauth-grants')).data as any[], []);
  const clientName = (g: any) => g.client.name ?? g.client.id;
  const revokeGrant = async (g: any) => {
    if (!confirm(`Revoke the sign-in of “${clientName(g)}”? It stops working at once; signing in again asks you again.`)) return;
    setError(undefined);
    try {
      await del(`/api/auth/me/oauth-grants/${encodeURIComponent(g.id)}`);
      grants.reload();
    } catch (err) {
      setError(err);
    }
  };
  const signOut = async (everywhere: boolean) => {
    await post(everywhere ? '/api/auth/logout-all' : '/api/auth/logout').catch(() => undefined);
    await session.refresh();
    navigate('/');
  };
  return (
    <>
      <h1>Account</h1>
      <Show value={me}>
        {(m) => (
          <section aria-labelledby="plan-h" class="panel">
            <h2 id="plan-h">Plan and quotas</h2>
            <dl class="facts">
              <dt>Username</dt>
              <dd>{m.user.username}</dd>
              <dt>Tier</dt>
              <dd>{m.user.tier}</dd>
              <dt>API requests</dt>
              <dd>
                {m.rateLimits.perMinute ?? 'unlimited'} per minute, {m.rateLimits.perDay ?? 'unlimited'} per day
              </dd>
              <dt>Scenario runs today</dt>
              <dd>
                {m.scenarioQuota.limit === null
                  ? `${m.scenarioQuota.used} used (unlimited)`
                  : `${m.scenarioQuota.remaining} of ${m.scenarioQuota.limit} left; resets ${formatDate(m.scenarioQuota.resetAt)}`}
              </dd>
            </dl>
          </section>
        )}
      </Show>
      <section aria-labelledby="keys-h">
        <h2 id="keys-h">API keys</h2>
        <p>Keys let programs and MCP clients act as you. A key is shown once, when it is made.</p>
        <form onSubmit={create} class="row">
          <div class="field inline">
            <label for="key-name">Key name</label>
            <input id="key-name" maxLength={100} placeholder="e.g. laptop" value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </div>
          <button type="submit">Create key</button>
        </form>
        {created && (
          <div class="panel new-key" role="status">
            <p>
              <strong>Your new key{created.name ? ` “${created.name}”` : ''}.</strong> Copy it now: it will not be shown again.
            </p>
            <div class="row">
              <label for="new-key" class="visually-hidden">
                New API key
              </label>
              <input id="new-key" class="mono" readOnly value={created.key} data-testid="new-key" />
              <CopyButton text={created.key} label="Copy key" />
            </div>
          </div>
        )}
        <ErrorMessage error={error} />
        <Show value={keys}>
          {(list) => (
            <table class="stack">
              <caption class="visually-hidden">Your API keys</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Key</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.map((k) => (
                  <tr>
                    <th scope="row">{keyName(k)}</th>
                    <td data-label="Key">
                      <code>{k.prefix}…</code>
                    </td>
                    <td data-label="Created">{formatDate(k.createdAt)}</td>
                    <td data-label="Last used">{k.lastUsedAt ? formatDate(k.lastUsedAt) : 'never'}</td>
                    <td>
                      {k.revokedAt ? (
                        <span class="muted">revoked {formatDate(k.revokedAt)}</span>
                      ) : (
                        <button type="button" class="danger small" onClick={() => revoke(k)}>
                          Revoke<span class="visually-hidden"> key {keyName(k)}</span>
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </Show>
      </section>
      <section aria-labelledby="grants-h">
        <h2 id="grants-h">MCP clients signed in</h2>
        <p>MCP clients you approved with OAuth: each may use the listed collections as you until you revoke it.</p>
        <Show value={grants}>
          {(list) =>
            list.length === 0 ? (
              <p class="muted">None.</p>
            ) : (
              <table class="stack">
                <caption class="visually-hidden">MCP clients signed in</caption>
                <thead>
                  <tr>
                    <th scope="col">Client</th>
                    <th scope="col">Collections</th>
                    <th scope="col">Approved</th>
                    <th scope="col">
                      <span class="visually-hidden">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((g) => (
                    <tr>
                      <th scope="row">{clientName(g)}</th>
                      <td data-label="Collections">
                        {g.resources.map((r: string) => (
                          <div class="mono">{r}</div>
                        ))}
                      </td>
                      <td data-label="Approved">{formatDate(g.createdAt)}</td>
                      <td>
                        <button type="button" class="danger small" onClick={() => revokeGrant(g)}>
                          Revoke<span class="visually-hidden"> client {clientName(g)}</span>
                        </button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )
          }
        </Show>
      </section>
      <section aria-labelledby="out-h">
        <h2 id="out-h">Sign out</h2>
        <div class="row">
          <button type="button" class="secondary" onClick={() => signOut(false)}>
            Sign out
          </button>
          <button type="button" class="secondary" onClick={() => signOut(true)}>
            Sign out everywhere
          </button>
        </div>
      </section>
    </>
  );
}
