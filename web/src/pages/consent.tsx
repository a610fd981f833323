/**
 * An MCP client's sign-in (OAuth, api/operations/oauth.ts): which client asks, for which collections, and what it may
 * then do; the signed-in user approves or denies, and the browser goes back to the authorization server (and from there
 * to the client). Grants are listed, and revoked, in the account settings.
 */
import { useState } from 'preact/hooks';
import { get, post } from '../api.js';
import { ErrorMessage, Show, useAsync } from '../components/common.js';
import { useSession } from '../session.js';

export function ConsentPage({ uid }: { uid: string }) {
  const session = useSession();
  const request = useAsync(async () => (await get(`/api/auth/oauth/interactions/${encodeURIComponent(uid)}/details`)).data, [uid]);
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const answer = async (approve: boolean) => {
    setError(undefined);
    setBusy(true);
    try {
      const r = await post(`/api/auth/oauth/interactions/${encodeURIComponent(uid)}/consent`, { approve });
      window.location.assign(r.data.redirectTo);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };
  return (
    <>
      <h1>Sign in an MCP client</h1>
      <Show value={request}>
        {(r) => {
          const clientName = r.client.name ?? r.client.id;
          const usable = r.resources.length > 0 && r.resources.every((x: any) => x.collection);
          return (
            <section class="panel consent" aria-labelledby="consent-h">
              <h2 id="consent-h">
                <span class="mono">{clientName}</span> asks to use your collections as {session.user?.username}
              </h2>
              <dl class="facts">
                <dt>Client</dt>
                <dd>
                  {clientName}
                  {r.client.uri && (
                    <>
                      {' '}
                      (<span class="mono">{r.client.uri}</span>)
                    </>
                  )}
                </dd>
                {r.client.redirectUri && (
                  <>
                    <dt>Returns to</dt>
                    <dd class="mono">{r.client.redirectUri}</dd>
                  </>
                )}
                <dt>Collections</dt>
                <dd>
                  <ul data-testid="consent-resources">
                    {r.resources.map((x: any) => (
                      <li>
                        {x.collection ? (
                          <>
                            <strong>{x.collection.name}</strong> ({x.collection.owner}/{x.collection.slug}
                            {x.collection.isPublic ? ', public' : ', private'})
                          </>
                        ) : (
                          <strong>Not found, or not yours to share</strong>
                        )}{' '}
                        <span class="mono muted">{x.url}</span>
                      </li>
                    ))}
                  </ul>
                </dd>
              </dl>
              <p>
                If you approve, the client may list and call these collections' tools as you, until you revoke it in your account settings. It gets nothing else
                of your account.
              </p>
              {!usable && <p role="alert">This request names no collection you may use: it can only be denied.</p>}
              <ErrorMessage error={error} />
              <div class="row">
                <button type="button" disabled={busy || !usable} onClick={() => answer(true)}>
                  Approve
                </button>
                <button type="button" class="secondary" disabled={busy} onClick={() => answer(false)}>
                  Deny
                </button>
              </div>
            </section>
          );
        }}
      </Show>
    </>
  );
}
