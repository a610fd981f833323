/**
 * One collection: its tools (add by search, remove), edit, like, delete; its MCP endpoint with ready-to-paste client
 * configurations; its scenarios (list, create).
 */
import { useState } from 'preact/hooks';
import { del, get, patch, post, qs, slugPath } from '../api.js';
import { CodeBlock, CopyButton, ErrorMessage, plural, Show, toolHref, useAsync } from '../components/common.js';
import { describeChange, type SchemaChange } from '../components/compatibility.js';
import { navigate } from '../router.js';
import { useSession } from '../session.js';
import { ScenarioList } from './scenarios.js';

export function CollectionPage({ uid }: { uid: string }) {
  const col = useAsync(async () => (await get(`/api/collections/${encodeURIComponent(uid)}`)).data, [uid]);
  return <Show value={col}>{(c) => <CollectionView c={c} reload={col.reload} />}</Show>;
}

function CollectionView({ c, reload }: { c: any; reload: () => void }) {
  const { user } = useSession();
  const owner = user?.id === c.owner.id;
  const [error, setError] = useState<unknown>();
  const act = (fn: () => Promise<unknown>) => async () => {
    setError(undefined);
    try {
      await fn();
      reload();
    } catch (err) {
      setError(err);
    }
  };
  const base = `/api/collections/${encodeURIComponent(c.uid)}`;
  return (
    <article>
      <header class="page-head">
        <h1>{c.name}</h1>
        <p class="pkg">
          by {c.owner.username} · {c.isPublic ? 'public' : 'private'} · {plural(c.tools.length, 'tool')} · {plural(c.likeCount, 'like')}
        </p>
        {c.description && <p class="lead">{c.description}</p>}
        {user && (
          <button type="button" class="secondary" aria-pressed={!!c.likedByMe} onClick={act(() => post(`${base}/like`))}>
            {c.likedByMe ? 'Unlike' : 'Like'}
          </button>
        )}
      </header>
      <ErrorMessage error={error} />
      <Notices c={c} owner={owner} base={base} act={act} />
      <section aria-labelledby="tools-h">
        <h2 id="tools-h">Tools</h2>
        {c.tools.length === 0 ? (
          <p class="muted">No tools yet.</p>
        ) : (
          <ul class="plain">
            {c.tools.map((t: any) => (
              <li class="row" data-tool={t.toolId}>
                <a href={toolHref(t.slug ?? t.id)}>{t.name}</a>
                <span class="muted">{t.description}</span>
                <span class="tool-version" data-testid="tool-version">
                  v{t.version} · {t.pinned ? 'pinned' : 'follows the latest'}
                </span>
                {owner && <PinVersion t={t} base={base} onChange={reload} onError={setError} />}
                {owner && (
                  <button type="button" class="secondary small" onClick={act(() => del(`${base}/tools/${encodeURIComponent(t.id)}`))}>
                    Remove<span class="visually-hidden"> {t.name}</span>
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
        {owner && <AddTools base={base} have={new Set(c.tools.map((t: any) => t.id))} onAdded={reload} />}
      </section>
      <McpSection c={c} />
      <ScenarioList collection={c} owner={owner} />
      {owner && <EditCollection c={c} base={base} onSaved={reload} />}
    </article>
  );
}

/**
 * Packages whose new version has changes that need review (SPEC, Trust): the collection stays on the version it has
 * (what its MCP endpoint serves) and says what changed; its owner accepts, which moves the entries to the latest.
 */
function Notices({ c, owner, base, act }: { c: any; owner: boolean; base: string; act: (fn: () => Promise<unknown>) => () => Promise<void> }) {
  if (!c.notices?.length) return null;
  return (
    <section aria-labelledby="notices-h" class="notice version-held" data-testid="collection-notices">
      <h2 id="notices-h">Changes to review</h2>
      {(c.notices as CollectionNotice[]).map((n) => (
        <div class="held-package" data-package={n.package}>
          <p>
            <strong>{n.package}</strong> {n.to} changes what {plural(n.tools.length, 'tool')} ({n.tools.join(', ')}) would do or tell the model, so this
            collection stays on {n.from}
            {owner ? ' until you accept it' : ' until its owner accepts it'}:
          </p>
          <ul class="changes">
            {n.changes.map((ch) => (
              <li class={ch.breaking ? 'breaking' : ''}>{describeChange(ch)}</li>
            ))}
          </ul>
          {owner && (
            <button type="button" onClick={act(() => post(`${base}/notices/accept`, { package: n.package, to: n.to }))}>
              Accept {n.to}
              <span class="visually-hidden"> of {n.package}</span>
            </button>
          )}
        </div>
      ))}
    </section>
  );
}

interface CollectionNotice {
  package: string;
  from: string;
  to: string;
  tools: string[];
  changes: SchemaChange[];
}

/** `@scope/pkg` of a collection entry's `toolId` (`<package>[@<version>]::<tool>`). */
function packageOf(toolId: string): string {
  const pkg = toolId.slice(0, toolId.lastIndexOf('::'));
  const at = pkg.lastIndexOf('@');
  return at > 0 ? pkg.slice(0, at) : pkg;
}

/**
 * The owner's choice of the version an entry runs: the latest (followed), or one recorded version that declares the
 * tool (pinned). The API pins an entry when it is added by a versioned reference, so a change removes the entry and
 * adds it again (it moves to the end of the list); if the add is refused, the entry is put back as it was.
 */
function PinVersion({ t, base, onChange, onError }: { t: any; base: string; onChange: () => void; onError: (e: unknown) => void }) {
  const pkg = packageOf(t.toolId);
  const versions = useAsync(async () => (await get(`/api/packages/${slugPath(pkg)}`)).data.versions as any[], [pkg]);
  const [busy, setBusy] = useState(false);
  const choices = (versions.data ?? []).filter((v) => (v.tools as any[]).some((x) => x.name === t.name)).map((v) => v.version as string);
  const ref = (version: string) => (version === '' ? `${pkg}::${t.name}` : `${pkg}@${version}::${t.name}`);
  const change = async (version: string) => {
    onError(undefined);
    setBusy(true);
    const before = t.pinned ? t.version : '';
    try {
      await del(`${base}/tools/${encodeURIComponent(t.id)}`);
      try {
        await post(`${base}/tools`, { toolId: ref(version) });
      } catch (err) {
        await post(`${base}/tools`, { toolId: ref(before) }).catch(() => undefined);
        throw err;
      }
    } catch (err) {
      onError(err);
    } finally {
      setBusy(false);
      onChange();
    }
  };
  const id = `pin-${t.id}`;
  return (
    <span class="pin">
      <label for={id} class="visually-hidden">
        Version of {t.name}
      </label>
      <select id={id} value={t.pinned ? t.version : ''} disabled={busy || !versions.data} onChange={(e) => change(e.currentTarget.value)}>
        <option value="">Follow the latest</option>
        {choices.map((v) => (
          <option value={v}>Pin {v}</option>
        ))}
      </select>
    </span>
  );
}

/** Search and add; a tool already in the collection shows "Added" and cannot be added again. */
function AddTools({ base, have, onAdded }: { base: string; have: Set<string>; onAdded: () => void }) {
  const [q, setQ] = useState('');
  const [results, setResults] = useState<any[]>();
  const [error, setError] = useState<unknown>();
  const search = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      setResults((await get(`/api/tools/search${qs({ q, limit: 10 })}`)).results.tools);
    } catch (err) {
      setError(err);
    }
  };
  const add = async (t: any) => {
    setError(undefined);
    try {
      await post(`${base}/tools`, { toolId: t.id });
      onAdded();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <div class="panel">
      <h3>Add tools</h3>
      <form onSubmit={search} class="row" role="search">
        <label for="add-q" class="visually-hidden">
          Find tools to add
        </label>
        <input id="add-q" type="search" placeholder="Find tools to add" value={q} onInput={(e) => setQ(e.currentTarget.value)} required />
        <button type="submit">Find</button>
      </form>
      <ErrorMessage error={error} />
      {results && (
        <ul class="plain" aria-label="Tools to add">
          {results.map((t) => (
            <li class="row">
              <span>
                <strong>{t.name}</strong> <span class="muted">{t.package.npmPackageName}</span>
              </span>
              {have.has(t.id) ? (
                <button type="button" class="small added" disabled>
                  <span aria-hidden="true">✓ </span>Added<span class="visually-hidden"> {t.name} (already in this collection)</span>
                </button>
              ) : (
                <button type="button" class="small" onClick={() => add(t)}>
                  Add<span class="visually-hidden"> {t.name}</span>
                </button>
              )}
            </li>
          ))}
          {results.length === 0 && <li class="muted">No tools match.</li>}
        </ul>
      )}
    </div>
  );
}

function McpSection({ c }: { c: any }) {
  const url = `${window.location.origin}/api/mcp/${c.owner.username}/${c.uid}/mcp`;
  const name = `toolshed-${c.uid}`;
  const auth = c.isPublic ? undefined : { Authorization: 'Bearer YOUR_TOOLSHED_API_KEY' };
  const claude = {
    mcpServers: { [name]: { command: 'npx', args: ['-y', 'mcp-remote', url, ...(auth ? ['--header', `Authorization:${auth.Authorization}`] : [])] } },
  };
  const cursor = { mcpServers: { [name]: { url, ...(auth ? { headers: auth } : {}) } } };
  const vscode = { servers: { [name]: { type: 'http', url, ...(auth ? { headers: auth } : {}) } } };
  return (
    <section aria-labelledby="mcp-h" class="panel">
      <h2 id="mcp-h">MCP endpoint</h2>
      <p>
        {c.isPublic ? 'Public: any MCP client can use it without a key.' : 'Private: clients must send an API key of yours.'} Tools that need environment
        variables take them from <code>X-Tool-Env-NAME</code> headers.
      </p>
      <div class="row">
        <label for="mcp-url">Endpoint URL</label>
        <input id="mcp-url" readOnly value={url} class="mono" />
        <CopyButton text={url} label="Copy URL" />
      </div>
      <details>
        <summary>Claude Desktop (claude_desktop_config.json)</summary>
        <CodeBlock label="Claude Desktop config" code={JSON.stringify(claude, null, 2)} />
      </details>
      <details>
        <summary>Cursor (.cursor/mcp.json)</summary>
        <CodeBlock label="Cursor config" code={JSON.stringify(cursor, null, 2)} />
      </details>
      <details>
        <summary>VS Code (.vscode/mcp.json)</summary>
        <CodeBlock label="VS Code config" code={JSON.stringify(vscode, null, 2)} />
      </details>
    </section>
  );
}

function EditCollection({ c, base, onSaved }: { c: any; base: string; onSaved: () => void }) {
  const [name, setName] = useState(c.name);
  const [description, setDescription] = useState(c.description ?? '');
  const [isPublic, setIsPublic] = useState(c.isPublic);
  const [error, setError] = useState<unknown>();
  const [saved, setSaved] = useState(false);
  const save = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      await patch(base, { name, description: description || null, isPublic });
      setSaved(true);
      onSaved();
    } catch (err) {
      setError(err);
    }
  };
  const remove = async () => {
    if (!confirm(`Delete the collection “${c.name}” with its scenarios?`)) return;
    try {
      await del(base);
      navigate('/collections');
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section aria-labelledby="edit-h" class="panel">
      <h2 id="edit-h">Settings</h2>
      <form onSubmit={save}>
        <div class="field">
          <label for="ed-name">Name</label>
          <input id="ed-name" required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="ed-desc">Description</label>
          <textarea id="ed-desc" rows={2} maxLength={1000} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </div>
        <div class="field checkbox">
          <input id="ed-public" type="checkbox" checked={isPublic} onChange={(e) => setIsPublic(e.currentTarget.checked)} />
          <label for="ed-public">Public</label>
        </div>
        <div class="row">
          <button type="submit">Save changes</button>
          <button type="button" class="danger" onClick={remove}>
            Delete collection
          </button>
        </div>
        {saved && <p role="status">Saved.</p>}
        <ErrorMessage error={error} />
      </form>
    </section>
  );
}
