/** A tool: description, reliability, schema table, env names, health, ratings and reviews, snippets, Try it, add to a collection. */
import { useState } from 'preact/hooks';
import { get, post, slugPath } from '../api.js';
import { CodeBlock, ErrorMessage, formatDate, HealthBadge, plural, Rating, Show, useAsync } from '../components/common.js';
import { CompatibilityNote, currentVersionOf } from '../components/compatibility.js';
import { Reliability } from '../components/reliability.js';
import { RiskWarning } from '../components/risks.js';
import { exampleParams, SchemaTable } from '../components/schema-form.js';
import { packageHref } from './publish.js';
import { useSession } from '../session.js';
import { TryIt } from './try-it.js';

export function ToolPage({ slug }: { slug: string }) {
  const tool = useAsync(async () => (await get(`/api/tools/${slugPath(slug)}`)).data, [slug]);
  return <Show value={tool}>{(t) => <ToolView tool={t} reload={tool.reload} />}</Show>;
}

function ToolView({ tool: t, reload }: { tool: any; reload: () => void }) {
  const origin = window.location.origin;
  const required: string[] = t.package.envVars.filter((v: any) => v.required).map((v: any) => v.name);
  const curl = `curl -X POST ${origin}/api/tools/execute/${t.slug} \\
  -H "Authorization: Bearer $TOOLSHED_API_KEY" \\
  -H "Content-Type: application/json" \\
  -d '${curlBody(exampleParams(t.inputSchema), required)}'`;
  const mcp = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: t.name, arguments: exampleParams(t.inputSchema) } }, null, 2);
  return (
    <article>
      <header class="page-head">
        <h1>{t.name}</h1>
        <p class="pkg">
          <a href={packageHref(t.package.npmPackageName)}>
            {t.package.npmPackageName}@{t.package.version}
          </a>{' '}
          · {t.package.category}
          {t.package.official && <span class="badge official">Official</span>}
        </p>
        <p class="meta">
          <HealthBadge status={t.healthStatus} /> <Rating average={t.averageRating} count={t.ratingCount} /> ·{' '}
          <span class="muted">
            {plural(t.executionCount, 'run')} · checked {formatDate(t.lastHealthCheckAt)}
          </span>
        </p>
      </header>
      <RiskWarning risks={t.risks} />
      <p class="lead">{t.description}</p>
      <VersionNotes tool={t} />
      {t.healthError && <p class="error">Health check: {t.healthError}</p>}
      <Reliability toolId={t.id} />
      <section aria-labelledby="schema-h">
        <h2 id="schema-h">Input</h2>
        <SchemaTable schema={t.inputSchema} />
        <h3>Environment variables</h3>
        {t.package.envVars.length === 0 ? (
          <p class="muted">None.</p>
        ) : (
          <ul>
            {t.package.envVars.map((v: any) => (
              <li>
                <code>{v.name}</code> {v.required ? '(required)' : '(optional)'} {v.description}
              </li>
            ))}
          </ul>
        )}
        <Permissions tool={t} />
      </section>
      <TryIt slug={t.slug} schema={t.inputSchema} envVars={t.package.envVars} />
      <AddToCollection toolId={t.toolId} />
      <section aria-labelledby="use-h">
        <h2 id="use-h">Use it from code</h2>
        {required.length > 0 && (
          <p>
            It needs {required.map((name, i) => [i > 0 && ', ', <code>{name}</code>])} with each call: set {required.length === 1 ? 'it' : 'them'} in your shell
            first; the call sends {required.length === 1 ? 'it' : 'them'} as <code>env</code>, used for that run and never stored.
          </p>
        )}
        <CodeBlock label="REST (curl)" code={curl} />
        <p>Over MCP: add the tool to a collection; the collection's page gives its endpoint. A call looks like:</p>
        <CodeBlock label="MCP tools/call" code={mcp} />
      </section>
      <Reviews tool={t} onChange={reload} />
    </article>
  );
}

/**
 * What the tool's package says of its current version: a deprecation, and its compatibility with the version before
 * as it concerns this tool. Nothing for a first version that is not deprecated (or when the package cannot be read).
 */
function VersionNotes({ tool: t }: { tool: any }) {
  const pkg = useAsync(async () => (await get(`/api/packages/${slugPath(t.package.npmPackageName)}`)).data, [t.package.npmPackageName]);
  if (!pkg.data) return null;
  const v = currentVersionOf(pkg.data);
  if (!v.deprecated && !v.compatibility) return null;
  return (
    <section aria-labelledby="version-h" class="notice version-notes" data-testid="version-notes">
      <h2 id="version-h">Version {v.version}</h2>
      {v.deprecated && (
        <p data-testid="deprecated">
          <strong>Deprecated</strong> by its publisher: {v.deprecated}
        </p>
      )}
      {v.compatibility && <CompatibilityNote compat={v.compatibility} tool={t.name} version={v.version} />}
      <p>
        <a href={packageHref(t.package.npmPackageName)}>The package's versions and changes</a>
      </p>
    </section>
  );
}

/** What the tool may do, as the sandbox enforces it and as MCP clients are told (its annotations). */
function Permissions({ tool: t }: { tool: any }) {
  const a = t.annotations;
  const secrets: string[] | undefined = t.permissions?.secrets;
  return (
    <>
      <h3>What it may do</h3>
      <ul aria-label="What it may do">
        <li>{a.openWorldHint ? 'Network access: declared (reaches the public internet)' : 'Network access: none (the sandbox has no network)'}</li>
        <li>{a.readOnlyHint ? 'Read-only' : a.destructiveHint ? 'May change or delete things' : 'May change things (not destructively)'}</li>
        <li>{a.idempotentHint ? 'Idempotent: calling it again with the same input changes nothing more' : 'Not idempotent'}</li>
        {secrets && <li>Secrets it is given: {secrets.length ? secrets.map((s) => <code key={s}>{s} </code>) : 'none'}</li>}
        <li class="muted">Its definition costs {t.tokenCount} tokens of a model's context.</li>
      </ul>
    </>
  );
}

function AddToCollection({ toolId }: { toolId: string }) {
  const { user } = useSession();
  const mine = useAsync(async () => (user ? (await get('/api/auth/me/collections?limit=100')).data : []), [user?.id]);
  const [uid, setUid] = useState('');
  const [msg, setMsg] = useState<string>();
  const [error, setError] = useState<unknown>();
  if (!user) return null;
  const add = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setMsg(undefined);
    try {
      const r = await post(`/api/collections/${encodeURIComponent(uid)}/tools`, { toolId });
      setMsg(`Added; the collection now has ${plural(r.data.toolCount, 'tool')}.`);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section aria-labelledby="add-h" class="panel">
      <h2 id="add-h">Add to a collection</h2>
      <Show value={mine}>
        {(list: any[]) =>
          list.length === 0 ? (
            <p>
              You have no collections yet. <a href="/collections">Create one</a>.
            </p>
          ) : (
            <form onSubmit={add} class="row">
              <div class="field inline">
                <label for="add-collection">Collection</label>
                <select id="add-collection" required value={uid} onChange={(e) => setUid(e.currentTarget.value)}>
                  <option value="">Choose…</option>
                  {list.map((c) => (
                    <option value={c.uid}>{c.name}</option>
                  ))}
                </select>
              </div>
              <button type="submit">Add</button>
            </form>
          )
        }
      </Show>
      {msg && <p role="status">{msg}</p>}
      <ErrorMessage error={error} />
    </section>
  );
}

function Reviews({ tool, onChange }: { tool: any; onChange: () => void }) {
  const { user } = useSession();
  const reviews = useAsync(async () => (await get(`/api/tools/${slugPath(tool.slug)}/reviews?limit=20`)).data as any[], [tool.slug]);
  const [rating, setRating] = useState('5');
  const [title, setTitle] = useState('');
  const [body, setBody] = useState('');
  const [error, setError] = useState<unknown>();
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      await post(`/api/tools/${slugPath(tool.slug)}/rate`, { rating: Number(rating) });
      if (body.trim()) await post(`/api/tools/${slugPath(tool.slug)}/reviews`, { rating: Number(rating), ...(title ? { title } : {}), body });
      setBody('');
      setTitle('');
      reviews.reload();
      onChange();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section aria-labelledby="reviews-h">
      <h2 id="reviews-h">Ratings and reviews</h2>
      <Show value={reviews}>
        {(list) =>
          list.length === 0 ? (
            <p class="muted">No reviews yet.</p>
          ) : (
            <ul class="reviews">
              {list.map((r) => (
                <li>
                  <p>
                    <Rating average={r.rating} count={1} /> <strong>{r.title}</strong>
                  </p>
                  <p>{r.body}</p>
                  <p class="muted">
                    {r.user.username}, {formatDate(r.createdAt)}
                  </p>
                </li>
              ))}
            </ul>
          )
        }
      </Show>
      {user ? (
        <form onSubmit={submit} class="panel">
          <h3>Rate this tool</h3>
          <div class="field inline">
            <label for="rv-rating">Stars</label>
            <select id="rv-rating" value={rating} onChange={(e) => setRating(e.currentTarget.value)}>
              {[5, 4, 3, 2, 1].map((n) => (
                <option value={n}>{n}</option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for="rv-title">Title (optional)</label>
            <input id="rv-title" maxLength={120} value={title} onInput={(e) => setTitle(e.currentTarget.value)} />
          </div>
          <div class="field">
            <label for="rv-body">Review (optional)</label>
            <textarea id="rv-body" rows={3} maxLength={5000} value={body} onInput={(e) => setBody(e.currentTarget.value)} />
          </div>
          <button type="submit">Save</button>
          <ErrorMessage error={error} />
        </form>
      ) : (
        <p>
          <a href="/login">Sign in</a> to rate or review this tool.
        </p>
      )}
    </section>
  );
}

/**
 * The body of the curl snippet, for inside single quotes: the example params (a quote in them closed and reopened),
 * and each required variable read from the caller's shell (`"'"$NAME"'"`), so a copied call is not refused for a
 * missing variable. Built beside the params, never by replacing text in them: an example value of the package's own
 * cannot make the shell put one of the caller's variables into the call.
 */
function curlBody(params: Record<string, unknown>, required: string[]): string {
  const quoted = JSON.stringify(params).replaceAll("'", "'\\''");
  const env = required.filter((name) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(name)).map((name) => `"${name}":"'"$${name}"'"`);
  return env.length ? `{"params":${quoted},"env":{${env.join(',')}}}` : `{"params":${quoted}}`;
}
