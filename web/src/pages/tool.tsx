/** A tool: description, reliability, schema table, env names, health, ratings and reviews, snippets, Try it, add to a collection. */
import { useState } from 'preact/hooks';
import { get, post, slugPath } from '../api.js';
import { callsFailing, CodeBlock, ErrorMessage, formatDate, plural, Rating, Show, ToolHealthBadge, useAsync } from '../components/common.js';
import { CompatibilityNote, currentVersionOf, versionsOf, type PackageVersion } from '../components/compatibility.js';
import { Reliability } from '../components/reliability.js';
import { RiskWarning } from '../components/risks.js';
import { exampleParams, initialValues, readParams, SchemaTable, type FieldValues } from '../components/schema-form.js';
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
  const [values, setValues] = useState<FieldValues>(() => initialValues(t.inputSchema));
  // Its calls, not only its last check, decide whether it is shown healthy (callsFailing).
  const failing = useAsync(async () => callsFailing((await get(`/api/tools/${t.id}/stats?window=7d`)).data), [t.id]);
  // Its package's licence and repository, of the version this page shows (recorded at import; nothing invented).
  const pkgAbout = useAsync(async () => {
    const versions = versionsOf((await get(`/api/packages/${slugPath(t.package.npmPackageName)}`)).data);
    return versions.find((v) => v.version === t.package.version) ?? versions[0];
  }, [t.package.npmPackageName, t.package.version]);
  // An MCP server's declared icon, when one was recorded; the app's CSP loads only inline (data:) images.
  const icon = (t.icons as { src: string }[] | undefined)?.find((i) => i.src.startsWith('data:image/'));
  // The call sends what the Try it form holds (as Run would); a required field the form leaves empty gets the
  // example's placeholder, and the whole example stands in while the form cannot be read.
  const read = readParams(t.inputSchema, values);
  const params = { ...exampleParams(t.inputSchema), ...('params' in read ? read.params : {}) };
  // No Authorization header: the route runs anonymous calls (counted per address); a key is optional (see below).
  const curl = `curl -X POST ${origin}/api/tools/execute/${t.slug} \\
  -H "Content-Type: application/json" \\
  -d '${curlBody(params, required)}'`;
  const mcp = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: t.name, arguments: params } }, null, 2);
  return (
    <article>
      <header class="page-head">
        <h1>
          {icon && <img class="tool-icon" src={icon.src} alt="" width={32} height={32} />}
          {t.name}
        </h1>
        <p class="pkg">
          <a href={packageHref(t.package.npmPackageName)}>
            {t.package.npmPackageName}@{t.package.version}
          </a>{' '}
          · {t.package.category}
          {t.package.official && <span class="badge official">Official</span>}
          <PackageLinks about={pkgAbout.data?.about} />
        </p>
        <p class="meta">
          <ToolHealthBadge status={t.healthStatus} failing={failing.data} /> <Rating average={t.averageRating} count={t.ratingCount} /> ·{' '}
          <span class="muted">
            {plural(t.executionCount, 'run')} · checked {formatDate(t.lastHealthCheckAt)}
          </span>
        </p>
      </header>
      <RiskWarning risks={t.risks} />
      {/* What a person came to do first: on a wide screen, Try it beside the description; on a phone, right after it. */}
      <div class="tool-top">
        <div class="tool-about">
          <p class="lead">{t.description}</p>
          <VersionNotes tool={t} />
          {t.healthError && <p class="error">Health check: {t.healthError}</p>}
        </div>
        <TryIt slug={t.slug} schema={t.inputSchema} envVars={t.package.envVars} values={values} setValues={setValues} />
        <div class="tool-perms">
          <Permissions tool={t} />
        </div>
      </div>
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
      </section>
      <AddToCollection toolId={t.toolId} />
      <section aria-labelledby="use-h">
        <h2 id="use-h">Use it from code</h2>
        {required.length > 0 && (
          <p>
            It needs {required.map((name, i) => [i > 0 && ', ', <code>{name}</code>])} with each call: set {required.length === 1 ? 'it' : 'them'} in your shell
            first; the call sends {required.length === 1 ? 'it' : 'them'} as <code>env</code>, used for that run and never stored.
          </p>
        )}
        <p data-testid="curl-note">
          The call below sends what the Try it form holds (an example value where a required field is empty)
          {'error' in read ? `; the example instead, until the form is fixed: ${read.error}` : ''}. Headers: <code>Content-Type: application/json</code> is
          required (the body is JSON). <code>Authorization: Bearer $TOOLSHED_API_KEY</code> is optional: without it the call is anonymous and counts against
          your address's limit; with your key it counts against your account's (and the execution is recorded as yours).
        </p>
        <CodeBlock label="REST (curl)" code={curl} />
        <p>Over MCP: add the tool to a collection; the collection's page gives its endpoint. A call looks like:</p>
        <CodeBlock label="MCP tools/call" code={mcp} />
      </section>
      <Reliability toolId={t.id} />
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

/**
 * What the tool may do: network and secrets as the sandbox enforces them, and only what its package or MCP server
 * declares of the rest (its manifest's permissions, or the server's annotations, kept in `permissions`). Nothing is
 * inferred: a tool without network may still write files or change what it is given, so an undeclared hint says
 * "not declared" rather than guess.
 */
function Permissions({ tool: t }: { tool: any }) {
  const p: { readOnly?: boolean; destructive?: boolean; idempotent?: boolean; network?: boolean; secrets?: string[] } = t.permissions ?? {};
  const hint = (label: string, value: boolean | undefined, yes: string, no: string) => (
    <li data-hint={label}>
      {label}: {value === undefined ? <span class="muted">not declared</span> : <>{value ? yes : no} (declared)</>}
    </li>
  );
  return (
    <>
      <h2 class="h3">What it may do</h2>
      <ul aria-label="What it may do">
        <li>
          {p.network
            ? 'Network access: declared (it may reach the public internet where this service allows egress)'
            : 'Network access: none (the sandbox gives it no network)'}
        </li>
        {hint('Read-only', p.readOnly, 'yes, it changes nothing', 'no, it may change things')}
        {hint('Destructive', p.readOnly ? false : p.destructive, 'yes, it may delete or overwrite things', 'no')}
        {hint('Idempotent', p.idempotent, 'yes, calling it again with the same input changes nothing more', 'no')}
        {p.secrets && <li>Secrets it is given: {p.secrets.length ? p.secrets.map((s) => <code key={s}>{s} </code>) : 'none'}</li>}
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

/** The package's licence and repository beside its name, when its package.json declares them (said so otherwise). */
function PackageLinks({ about }: { about: PackageVersion['about'] | undefined }) {
  if (about === undefined) return null;
  return (
    <span data-testid="tool-package-about">
      {' '}
      · {about?.license ? <span data-testid="license">{about.license}</span> : <span class="muted">no licence declared</span>}
      {about?.repository && (
        <>
          {' '}
          ·{' '}
          <a href={about.repository} rel="nofollow noopener ugc" data-testid="repository">
            repository
          </a>
        </>
      )}
    </span>
  );
}
