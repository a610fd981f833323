/**
 * Env asked for by an MCP tool call (api/mcp/env-elicit.ts): the MCP client sent its user here because a tool of a
 * collection needs variables the client could not send as headers. The signed-in user the call acts as sees which tool
 * of which collection asks for which variables, with the call's arguments, and enters the values for that one call.
 * They go to that call's execution only; this page never shows them again.
 */
import { useState } from 'preact/hooks';
import { get, post } from '../api.js';
import { ErrorMessage, Show, formatDate, useAsync } from '../components/common.js';

export function EnvRequestPage({ token }: { token: string }) {
  const request = useAsync(async () => (await get(`/api/mcp-env/${encodeURIComponent(token)}`)).data, [token]);
  const [values, setValues] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setBusy(true);
    try {
      await post(`/api/mcp-env/${encodeURIComponent(token)}`, { env: values });
      setValues({});
      setDone(true);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <h1>Env for a tool call</h1>
      {done ? (
        <p role="status" data-testid="env-done">
          Sent. The call runs with these values now; go back to your MCP client, which gets its result when it retries. The values are not kept.
        </p>
      ) : (
        <Show value={request}>
          {(r) => (
            <section class="panel" aria-labelledby="env-h">
              <h2 id="env-h">
                <span class="mono">{r.tool.name}</span> of {r.collection.name} needs {r.env.length === 1 ? 'a variable' : 'variables'}
              </h2>
              <dl class="facts">
                <dt>Tool</dt>
                <dd>
                  <span class="mono">{r.tool.name}</span> ({r.tool.package}){r.tool.description && <> — {r.tool.description}</>}
                </dd>
                <dt>Collection</dt>
                <dd>
                  {r.collection.name} ({r.collection.owner}/{r.collection.slug})
                </dd>
                <dt>Arguments</dt>
                <dd>
                  <code data-testid="env-params">{JSON.stringify(r.params)}</code>
                </dd>
                <dt>Link valid until</dt>
                <dd>{formatDate(r.expiresAt)}</dd>
              </dl>
              <form onSubmit={submit}>
                <fieldset>
                  <legend>Values for this one call</legend>
                  {r.env.map((v: { name: string; description: string | null }) => (
                    <div class="field">
                      <label for={`env-${v.name}`}>{v.name}</label>
                      <input
                        id={`env-${v.name}`}
                        type="password"
                        autocomplete="off"
                        required
                        value={values[v.name] ?? ''}
                        onInput={(e) => setValues({ ...values, [v.name]: e.currentTarget.value })}
                      />
                      {v.description && <small>{v.description}</small>}
                    </div>
                  ))}
                </fieldset>
                <p class="muted">The values go to this call's sandbox only: they are not stored, and neither you nor the client will see them here again.</p>
                <ErrorMessage error={error} />
                <button type="submit" disabled={busy}>
                  {busy ? 'Sending…' : 'Run the call with these values'}
                </button>
              </form>
            </section>
          )}
        </Show>
      )}
    </>
  );
}
