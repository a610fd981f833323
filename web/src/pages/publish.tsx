/**
 * Publish a package (issue 24): a form for POST /api/packages (an npm source, and what the package may not say itself:
 * category, env variables, MCP server options, a toolkit's entry and arguments). The request answers at once (`?wait=false`) with the import to
 * follow; its id goes into the address (`/publish?import=<id>`, so a reload keeps following it) and the page polls
 * GET /api/package-imports/:id — every second at first, then less often (up to every 5 s), after a refusal (429)
 * only once its wait is over, and not at all once the import is final or the page is left. Then the result: the
 * package's tools with links and how each was found, or the failure in full. Field errors of a refused request
 * (400) show next to their field.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { CATEGORIES } from '../../../core/types.js';
import { ApiError, getFresh, post, slugPath } from '../api.js';
import { ErrorMessage, formatDate, HealthBadge, plural, Show, toolHref, useAsync } from '../components/common.js';
import { currentVersionOf, type Discovery, howFound, versionsOf } from '../components/compatibility.js';
import { StartupRules } from '../components/startup.js';
import { navigate, useLoc } from '../router.js';

interface EnvRow {
  name: string;
  required: boolean;
  secret: boolean;
  description: string;
}

/** `npm:<name>[@range]` as the API wants it: a bare name (`@agentic/calculator@7.6.9`) gets the `npm:` prefix. */
export function toSource(input: string): string {
  const s = input.trim();
  return s.startsWith('npm:') || s.startsWith('path:') ? s : `npm:${s}`;
}

/** Field errors of a 400 (`body.source`, `body.env.0.name`) by field (`source`, `env.0.name`); the rest stays whole. */
function fieldErrorsOf(err: unknown): Record<string, string> | undefined {
  if (!(err instanceof ApiError) || err.status !== 400 || err.details.length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const d of err.details) {
    const key = d.path.replace(/^body\./, '');
    out[key] = out[key] ? `${out[key]}; ${d.message}` : d.message;
  }
  return out;
}

/** `${NAME}`: how an import's arguments name a caller's variable. */
const variable = (name: string) => `$\{${name}}`;

function FieldError({ id, message }: { id: string; message?: string }) {
  if (!message) return null;
  return (
    <p class="field-error" id={id} role="alert">
      {message}
    </p>
  );
}

export function PublishPage() {
  const { query } = useLoc();
  const importId = query.get('import');
  const [source, setSource] = useState('');
  const [category, setCategory] = useState('');
  const [env, setEnv] = useState<EnvRow[]>([]);
  const [mcp, setMcp] = useState(false);
  const [args, setArgs] = useState('');
  const [network, setNetwork] = useState(false);
  const [toolkit, setToolkit] = useState(false);
  const [entry, setEntry] = useState('');
  const [options, setOptions] = useState('');
  const [fields, setFields] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>();
  const [published, setPublished] = useState<any>();
  const [busy, setBusy] = useState(false);
  const sending = useRef(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    // One request per click, however fast the clicks: the button is disabled, and a second submit is dropped.
    if (sending.current) return;
    sending.current = true;
    setBusy(true);
    setFields({});
    setError(undefined);
    setPublished(undefined);
    const argList = args
      .split('\n')
      .map((a) => a.trim())
      .filter(Boolean);
    // A toolkit's arguments are JSON: text that is not is said by its field, and nothing is sent.
    let optionList: unknown;
    if (toolkit && options.trim()) {
      try {
        optionList = JSON.parse(options);
      } catch (err) {
        setFields({ options: `not JSON: ${(err as Error).message}` });
        sending.current = false;
        setBusy(false);
        return;
      }
    }
    const body = {
      source: toSource(source),
      ...(category ? { category } : {}),
      ...(env.length
        ? {
            env: env.map((v) => ({
              name: v.name.trim(),
              required: v.required,
              secret: v.secret,
              ...(v.description.trim() ? { description: v.description.trim() } : {}),
            })),
          }
        : {}),
      ...(mcp ? { kind: 'mcp', ...(argList.length ? { args: argList } : {}), ...(network ? { network: true } : {}) } : {}),
      ...(toolkit && !mcp ? { ...(entry.trim() ? { entry: entry.trim() } : {}), ...(optionList !== undefined ? { options: optionList } : {}) } : {}),
    };
    try {
      const r = await post('/api/packages?wait=false', body);
      if (r.data.status) navigate(`/publish?import=${encodeURIComponent(r.data.importId)}`, true);
      else {
        // Imported already (this exact version, nothing done) or done within the request.
        setPublished(r.data);
        if (importId) navigate('/publish', true);
      }
    } catch (err) {
      const byField = fieldErrorsOf(err);
      if (byField) setFields(byField);
      setError(err);
    } finally {
      sending.current = false;
      setBusy(false);
    }
  };

  const setRow = (i: number, patch: Partial<EnvRow>) => setEnv((rows) => rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  const unplaced = Object.keys(fields).filter((k) => !/^(source|category|kind|network|args(\.\d+)?|env(\.\d+\.\w+)?|entry|options(\.\d+)?)$/.test(k));
  const aria = (key: string) => (fields[key] ? { 'aria-invalid': true, 'aria-describedby': `err-${key.replace(/\./g, '-')}` } : {});
  return (
    <>
      <h1>Publish a package</h1>
      <p>
        Publish tools from npm: AI SDK tool packages, Agentic functions, packages with a <code>toolshed</code> or <code>tpmjs</code> field, and stdio MCP
        servers. The import runs in a sandbox; you become the package's publisher, who alone imports its further versions and may hide it. See{' '}
        <a href="/packages">packages</a> for what is there.
      </p>
      <form onSubmit={submit} class="panel publish-form" aria-labelledby="pub-h" noValidate>
        <h2 id="pub-h">Package</h2>
        <div class="field">
          <label for="pub-source">npm package</label>
          <input
            id="pub-source"
            required
            spellcheck={false}
            autoCapitalize="off"
            placeholder="@agentic/calculator or npm:@tavily/ai-sdk@0.5.0"
            value={source}
            onInput={(e) => setSource(e.currentTarget.value)}
            {...aria('source')}
          />
          <small>
            A name, optionally with a version or range (<code>name@1.2.3</code>, <code>name@^2</code>); the latest version when none is given.
          </small>
          <FieldError id="err-source" message={fields.source} />
        </div>
        <div class="field">
          <label for="pub-category">Category (used when the package names none)</label>
          <select id="pub-category" value={category} onChange={(e) => setCategory(e.currentTarget.value)} {...aria('category')}>
            <option value="">As the package says (else api-integration)</option>
            {CATEGORIES.map((c) => (
              <option value={c}>{c}</option>
            ))}
          </select>
          <FieldError id="err-category" message={fields.category} />
        </div>
        <fieldset>
          <legend>Environment variables</legend>
          <p class="muted">Variables the package needs that it does not declare itself (an API key, say). Callers send their values when they run a tool.</p>
          {env.map((v, i) => (
            <div class="env-row" key={i}>
              <div class="field">
                <label for={`env-name-${i}`}>Name</label>
                <input
                  id={`env-name-${i}`}
                  class="mono"
                  value={v.name}
                  onInput={(e) => setRow(i, { name: e.currentTarget.value })}
                  {...aria(`env.${i}.name`)}
                />
                <FieldError id={`err-env-${i}-name`} message={fields[`env.${i}.name`]} />
              </div>
              <div class="field">
                <label for={`env-desc-${i}`}>Description</label>
                <input
                  id={`env-desc-${i}`}
                  value={v.description}
                  onInput={(e) => setRow(i, { description: e.currentTarget.value })}
                  {...aria(`env.${i}.description`)}
                />
                <FieldError id={`err-env-${i}-description`} message={fields[`env.${i}.description`]} />
              </div>
              <div class="field checkbox">
                <input id={`env-req-${i}`} type="checkbox" checked={v.required} onChange={(e) => setRow(i, { required: e.currentTarget.checked })} />
                <label for={`env-req-${i}`}>Required</label>
              </div>
              <div class="field checkbox">
                <input id={`env-secret-${i}`} type="checkbox" checked={v.secret} onChange={(e) => setRow(i, { secret: e.currentTarget.checked })} />
                <label for={`env-secret-${i}`}>Secret</label>
              </div>
              <button type="button" class="danger small" onClick={() => setEnv((rows) => rows.filter((_, j) => j !== i))}>
                Remove<span class="visually-hidden"> variable {v.name || i + 1}</span>
              </button>
            </div>
          ))}
          <FieldError id="err-env" message={fields.env} />
          <button
            type="button"
            class="secondary small"
            onClick={() => setEnv((rows) => [...rows, { name: '', required: true, secret: true, description: '' }])}
          >
            Add a variable
          </button>
        </fieldset>
        <div class="field checkbox">
          <input id="pub-mcp" type="checkbox" checked={mcp} onChange={(e) => setMcp(e.currentTarget.checked)} />
          <label for="pub-mcp">It is an MCP server</label>
          <small>
            (a server that says so — an <code>mcpName</code>, or a bin built on an MCP library — is recognised without this)
          </small>
        </div>
        {mcp && (
          <fieldset>
            <legend>MCP server</legend>
            <div class="field">
              <label for="pub-args">Arguments, one per line</label>
              <textarea id="pub-args" rows={3} class="mono" value={args} onInput={(e) => setArgs(e.currentTarget.value)} {...aria('args')} />
              <FieldError id="err-args" message={fields.args ?? Object.entries(fields).find(([k]) => k.startsWith('args.'))?.[1]} />
            </div>
            <div class="field checkbox">
              <input id="pub-network" type="checkbox" checked={network} onChange={(e) => setNetwork(e.currentTarget.checked)} />
              <label for="pub-network">It needs the network</label>
            </div>
          </fieldset>
        )}
        {!mcp && (
          <div class="field checkbox">
            <input id="pub-toolkit" type="checkbox" checked={toolkit} onChange={(e) => setToolkit(e.currentTarget.checked)} />
            <label for="pub-toolkit">Its tools are made with arguments</label>
            <small>
              (a toolkit class or factory that takes its key as an argument, as <code>@paypal/agent-toolkit</code> or <code>@supermemory/tools</code>)
            </small>
          </div>
        )}
        {toolkit && !mcp && (
          <fieldset>
            <legend>Toolkit</legend>
            <div class="field">
              <label for="pub-entry">Subpath export (optional)</label>
              <input id="pub-entry" class="mono" placeholder="./ai-sdk" value={entry} onInput={(e) => setEntry(e.currentTarget.value)} {...aria('entry')} />
              <FieldError id="err-entry" message={fields.entry} />
            </div>
            <div class="field">
              <label for="pub-options">Arguments, as a JSON array</label>
              <textarea
                id="pub-options"
                rows={4}
                class="mono"
                placeholder={`[{ "apiKey": "${variable('ACME_API_KEY')}" }]`}
                value={options}
                onInput={(e) => setOptions(e.currentTarget.value)}
                {...aria('options')}
              />
              <small>
                Write <code>{variable('NAME')}</code> where a caller's own value goes: each such variable is required of every call, and its value is never
                stored.
              </small>
              <FieldError id="err-options" message={fields.options ?? Object.entries(fields).find(([k]) => k.startsWith('options.'))?.[1]} />
            </div>
          </fieldset>
        )}
        <button type="submit" disabled={busy}>
          {busy ? 'Publishing…' : 'Publish'}
        </button>
        <PublishError error={error} unplaced={unplaced} />
      </form>
      {importId && (
        <ImportProgress
          id={importId}
          key={importId}
          onFailed={(st) => {
            // The source in the form is the one that failed: say so by the field too.
            if (st.source === toSource(source)) setFields({ source: `The import of ${st.source} failed: ${st.error?.message ?? 'see below'}` });
          }}
        />
      )}
      {published && <PublishedResult pkg={published.package} tools={published.tools} discovery={published.discovery} again={published.importId === null} />}
    </>
  );
}

/** A refusal in words: the daily quota, someone else's package, or the API's own message (field errors sit by their fields). */
function PublishError({ error, unplaced }: { error: unknown; unplaced: string[] }) {
  if (!error) return null;
  if (error instanceof ApiError && error.code === 'QUOTA_EXCEEDED') {
    return (
      <div class="error" role="alert" data-testid="quota">
        <p>
          <strong>Your daily publishing quota is used up.</strong> {error.message}. Every import you requested in the last 24 hours counts, failed ones too; you
          can publish again once the oldest of them is a day old. Nothing was queued.
        </p>
      </div>
    );
  }
  if (error instanceof ApiError && error.status === 403) {
    return (
      <div class="error" role="alert">
        <p>
          <strong>Not yours to publish.</strong> {error.message}.
        </p>
      </div>
    );
  }
  if (error instanceof ApiError && error.status === 400 && error.details.length > 0) {
    return (
      <div class="error" role="alert">
        <p>The request was refused: see the fields marked above.</p>
        {unplaced.length > 0 && (
          <ErrorMessage
            error={
              new ApiError(
                400,
                error.code,
                error.message,
                error.details.filter((d) => unplaced.includes(d.path.replace(/^body\./, ''))),
              )
            }
          />
        )}
      </div>
    );
  }
  return <ErrorMessage error={error} />;
}

const STEPS = [
  { status: 'queued', label: 'Waiting for a worker' },
  { status: 'running', label: 'Importing: installing from npm, loading it in a sandbox, describing and checking its tools' },
];

/** Follows an import until it is final, then shows the package it made or why it failed. */
function ImportProgress({ id, onFailed }: { id: string; onFailed?: (status: { source: string; error: { message: string } | null }) => void }) {
  const [status, setStatus] = useState<any>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let delay = 1000;
    const later = (ms: number) => {
      if (live) timer = setTimeout(tick, ms);
    };
    async function tick() {
      try {
        const r = await getFresh(`/api/package-imports/${encodeURIComponent(id)}`);
        if (!live) return;
        setError(undefined);
        setStatus(r.data);
        if (r.data.status === 'failed') onFailed?.(r.data);
        if (r.data.status === 'succeeded' || r.data.status === 'failed') return;
        later(delay);
        delay = Math.min(Math.round(delay * 1.5), 5000);
      } catch (err) {
        if (!live) return;
        setError(err);
        // Refused by the rate limit: ask again only after the wait it was given. A 4xx (not found) ends the polling.
        if (err instanceof ApiError && err.retryAfter) later(err.retryAfter * 1000 + 250);
        else if (!(err instanceof ApiError) || err.status >= 500) later(5000);
      }
    }
    void tick();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [id]);
  const s = status?.status as string | undefined;
  const at = STEPS.findIndex((x) => x.status === s);
  return (
    <section aria-labelledby="progress-h" class="panel" data-testid="import-progress">
      <h2 id="progress-h">Import {status ? <code>{status.source}</code> : null}</h2>
      {status && (
        <>
          <ol class="import-steps">
            <li class="done">Requested {formatDate(status.createdAt)}</li>
            {STEPS.map((step, i) => (
              <li class={s === 'succeeded' || s === 'failed' || i < at ? 'done' : i === at ? 'current' : 'todo'} aria-current={i === at ? 'step' : undefined}>
                {step.label}
              </li>
            ))}
            <li class={s === 'succeeded' ? 'done' : s === 'failed' ? 'failed' : 'todo'}>
              {s === 'failed' ? 'Failed' : 'Published'}
              {status.completedAt ? ` ${formatDate(status.completedAt)}` : ''}
            </li>
          </ol>
          <p role="status" data-testid="import-status">
            {s === 'queued' && 'Queued: waiting for a worker…'}
            {s === 'running' && 'Importing… this takes from a few seconds to a minute or two.'}
            {s === 'succeeded' && 'Published.'}
            {s === 'failed' && 'The import failed.'}
          </p>
        </>
      )}
      {!status && !error && <p class="muted">Asking how the import goes…</p>}
      <ErrorMessage error={error} />
      {s === 'failed' && status.error && (
        <div class="error" role="alert" data-testid="import-error">
          <p>
            <strong>Why it failed</strong> <span class="muted">({status.error.code})</span>
          </p>
          <p class="full-message">{status.error.message}</p>
        </div>
      )}
      {s === 'succeeded' && status.package && <ImportedPackage name={status.package.name} version={status.package.version} />}
      {(s === 'succeeded' || s === 'failed') && <StartupRules startup={status.startup} heading="h3" />}
    </section>
  );
}

/** The package an import made, read once it succeeded (the version it imported, or the current one). */
function ImportedPackage({ name, version }: { name: string; version: string }) {
  const pkg = useAsync(async () => (await getFresh(`/api/packages/${slugPath(name)}`)).data, [name, version]);
  return (
    <Show value={pkg}>
      {(p) => {
        const v = versionsOf(p).find((x) => x.version === version) ?? currentVersionOf(p);
        return <PublishedResult pkg={{ name: p.name, version: v.version, category: p.category }} tools={v.tools} discovery={v.discovery} />;
      }}
    </Show>
  );
}

function PublishedResult({
  pkg,
  tools,
  discovery,
  again,
}: {
  pkg: { name: string; version: string; category: string; kind?: string };
  tools: any[];
  discovery: Discovery | null;
  again?: boolean;
}) {
  return (
    <section aria-labelledby="result-h" class="result" data-testid="publish-result">
      <h2 id="result-h">
        {pkg.name}@{pkg.version}
      </h2>
      <p>
        {again ? 'This version was imported already: nothing changed. ' : ''}
        {plural(tools.length, 'tool')} · {pkg.category}
        {pkg.kind === 'mcp' ? ' · MCP server' : ''} · <a href={packageHref(pkg.name)}>Package page</a>
      </p>
      <ul class="plain published-tools">
        {tools.map((t) => (
          <li>
            <a href={toolHref(pkg.name, t.name)}>{t.name}</a> <HealthBadge status={t.healthStatus} />
            <br />
            <span class="muted">{howFound(discovery, t.name, pkg.kind)}</span>
            <p>{brief(t.description)}</p>
          </li>
        ))}
      </ul>
      {discovery && discovery.envRead.length > 0 && (
        <p>
          It reads{' '}
          {discovery.envRead.map((n) => (
            <code key={n}>{n} </code>
          ))}
          while loading: these were added as optional variables that callers may send.
        </p>
      )}
      {discovery && discovery.notes.length > 0 && (
        <>
          <h3>Not examined</h3>
          <ul>
            {discovery.notes.map((n) => (
              <li>{n}</li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

/** A description's start (the tool page has all of it). */
export const brief = (s: string) => (s.length > 240 ? `${s.slice(0, 240).trimEnd()}…` : s);

/** `/packages/@scope/name`, each segment escaped. */
export const packageHref = (name: string) => `/packages/${slugPath(name)}`;
