/**
 * Packages (issue 24): the signed-in user's own (GET /api/auth/me/packages, hidden ones included, each with Hide /
 * Show), all visible packages paged (GET /api/packages), and a package's page (GET /api/packages/:name): publisher,
 * versions (the `versions` the API lists, or the current one), each with its tools, import time, deprecation and its
 * compatibility with the version before in plain words. Its publisher hides or shows it and deprecates its version.
 */
import { useState } from 'preact/hooks';
import { get, patch, qs, slugPath } from '../api.js';
import { ErrorMessage, formatDate, HealthBadge, plural, Show, toolHref, useAsync } from '../components/common.js';
import { CompatibilityNote, howFound, versionsOf } from '../components/compatibility.js';
import { AboutFacts, Readme } from '../components/readme.js';
import { DownloadsFact } from '../components/downloads.js';
import { StartupRules } from '../components/startup.js';
import { useLoc } from '../router.js';
import { useSession } from '../session.js';
import { brief, packageHref } from './publish.js';

const PAGE_SIZE = 20;

export function PackagesPage() {
  const { user } = useSession();
  const { query } = useLoc();
  const page = Math.max(1, Number(query.get('page')) || 1);
  const all = useAsync(async () => get(`/api/packages${qs({ limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE })}`), [page]);
  return (
    <>
      <h1>Packages</h1>
      <p>
        Packages hold the tools: each was imported from npm by its publisher.{' '}
        {user ? <a href="/publish">Publish a package</a> : <a href="/login?next=%2Fpublish">Sign in to publish one</a>}.
      </p>
      {user && <MyPackages onChange={all.reload} />}
      <section aria-labelledby="all-h">
        <h2 id="all-h">All packages</h2>
        <Show value={all}>
          {(r) => (
            <>
              <PackageTable list={r.data} caption="All packages" />
              <nav aria-label="Pages" class="row">
                {page > 1 && <a href={`/packages${qs({ page: page - 1 > 1 ? page - 1 : undefined })}`}>Previous page</a>}
                <span class="muted">Page {page}</span>
                {r.pagination?.hasMore && <a href={`/packages?page=${page + 1}`}>Next page</a>}
              </nav>
            </>
          )}
        </Show>
      </section>
    </>
  );
}

/** The user's own packages; hiding or showing one also reloads the list of all (which it leaves or joins). */
function MyPackages({ onChange }: { onChange: () => void }) {
  const mine = useAsync(async () => (await get('/api/auth/me/packages?limit=100')).data as any[], []);
  const [error, setError] = useState<unknown>();
  const toggle = async (p: any) => {
    setError(undefined);
    try {
      await patch(`/api/packages/${slugPath(p.name)}`, { hidden: !p.hidden });
      mine.reload();
      onChange();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section aria-labelledby="mine-h">
      <h2 id="mine-h">Your packages</h2>
      <ErrorMessage error={error} />
      <Show value={mine}>
        {(list) =>
          list.length === 0 ? (
            <p class="muted">
              You have published none yet. <a href="/publish">Publish a package</a>.
            </p>
          ) : (
            <PackageTable list={list} caption="Your packages" onToggle={toggle} />
          )
        }
      </Show>
    </section>
  );
}

function PackageTable({ list, caption, onToggle }: { list: any[]; caption: string; onToggle?: (p: any) => void }) {
  if (list.length === 0) return <p class="muted">No packages yet.</p>;
  return (
    <table class="stack">
      <caption class="visually-hidden">{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Package</th>
          <th scope="col">Version</th>
          <th scope="col">Category</th>
          <th scope="col">Publisher</th>
          <th scope="col">Imported</th>
          {onToggle && <th scope="col">Listed</th>}
        </tr>
      </thead>
      <tbody>
        {list.map((p) => (
          <tr>
            <th scope="row">
              <a href={packageHref(p.name)}>{p.name}</a>
              {p.official && <span class="badge official">Official</span>}
            </th>
            <td data-label="Version">{p.version}</td>
            <td data-label="Category">{p.category}</td>
            <td data-label="Publisher">{p.publisher ?? 'the operator'}</td>
            <td data-label="Imported">{formatDate(p.importedAt)}</td>
            {onToggle && (
              <td data-label="Listed">
                {p.hidden ? 'Hidden' : 'Listed'}{' '}
                <button type="button" class="secondary small" onClick={() => onToggle(p)}>
                  {p.hidden ? 'Show' : 'Hide'}
                  <span class="visually-hidden"> {p.name}</span>
                </button>
              </td>
            )}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function PackagePage({ name }: { name: string }) {
  const pkg = useAsync(async () => (await get(`/api/packages/${slugPath(name)}`)).data, [name]);
  return <Show value={pkg}>{(p) => <PackageView pkg={p} reload={pkg.reload} />}</Show>;
}

function PackageView({ pkg: p, reload }: { pkg: any; reload: () => void }) {
  const { user } = useSession();
  const mine = !!user && user.username === p.publisher;
  const versions = versionsOf(p);
  const current = versions.find((v) => v.version === p.version) ?? versions[0];
  return (
    <article>
      <header class="page-head">
        <h1>{p.name}</h1>
        <p class="pkg">
          {p.version} · {p.category}
          {p.official && <span class="badge official">Official</span>}
        </p>
      </header>
      {p.description && <p class="lead">{p.description}</p>}
      {p.hidden && (
        <div class="notice" data-testid="hidden-notice">
          <p>Hidden by its publisher: its tools are left out of lists and search, and still run for those who refer to them.</p>
        </div>
      )}
      <dl class="facts">
        <dt>Publisher</dt>
        <dd>{p.publisher ?? 'the operator (imported by the admin)'}</dd>
        <dt>Current version</dt>
        <dd>{p.version}</dd>
        <dt>Imported</dt>
        <dd>{formatDate(p.importedAt)}</dd>
        <AboutFacts about={current?.about ?? null} provenance={current?.provenance} />
        <DownloadsFact downloads={p.downloads ?? null} fromNpm={current?.provenance?.from === 'npm'} />
      </dl>
      {mine && <PublisherActions pkg={p} current={versions.find((v) => v.version === p.version) ?? versions[0]} onChange={reload} />}
      <section aria-labelledby="readme-h" class="panel">
        <h2 id="readme-h">README</h2>
        {current?.about?.readme ? (
          <Readme markdown={current.about.readme} truncated={current.about.readmeTruncated} />
        ) : (
          <p class="muted" data-testid="no-readme">
            {current?.about ? 'This version has no README.' : 'Not recorded: this version was imported before READMEs were kept.'}
          </p>
        )}
      </section>
      <StartupRules startup={p.startup} />
      <section aria-labelledby="versions-h">
        <h2 id="versions-h">{versions.length === 1 ? 'Version' : 'Versions'}</h2>
        {versions.map((v) => (
          <section class="panel version" aria-label={`Version ${v.version}`} data-testid={`version-${v.version}`}>
            <h3>
              {v.version}
              {v.version === p.version && versions.length > 1 ? ' (current)' : ''}
            </h3>
            <p class="muted">Imported {formatDate(v.importedAt)}</p>
            {v.deprecated && (
              <div class="notice" data-testid="deprecated">
                <p>
                  <strong>Deprecated:</strong> {v.deprecated}
                </p>
              </div>
            )}
            <h4>Compared with the version before</h4>
            <CompatibilityNote compat={v.compatibility} version={v.version} />
            <h4>{plural(v.tools.length, 'tool')}</h4>
            <ul class="plain">
              {v.tools.map((t) => (
                <li>
                  {/* A version other than the latest links its pinned tool (`pkg@1.0.0/tool`), which runs that version. */}
                  <a href={toolHref(v.version === p.version ? p.name : `${p.name}@${v.version}`, t.name)}>{t.name}</a> <HealthBadge status={t.healthStatus} />{' '}
                  <span class="muted">— {howFound(v.discovery, t.name)}</span>
                  <p>{brief(t.description)}</p>
                </li>
              ))}
            </ul>
          </section>
        ))}
      </section>
    </article>
  );
}

/** The publisher's switches: hide or show the package, deprecate its current version or take that back. */
function PublisherActions({ pkg: p, current, onChange }: { pkg: any; current: { version: string; deprecated: string | null }; onChange: () => void }) {
  const [message, setMessage] = useState('');
  const [error, setError] = useState<unknown>();
  const change = async (body: Record<string, unknown>) => {
    setError(undefined);
    try {
      await patch(`/api/packages/${slugPath(p.name)}`, body);
      setMessage('');
      onChange();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section aria-labelledby="yours-h" class="panel">
      <h2 id="yours-h">You publish this package</h2>
      <div class="row">
        <button type="button" class="secondary" onClick={() => change({ hidden: !p.hidden })}>
          {p.hidden ? 'Show it in lists and search' : 'Hide it from lists and search'}
        </button>
        <a href="/publish">Publish a new version</a>
      </div>
      {current.deprecated ? (
        <button type="button" class="secondary" onClick={() => change({ deprecated: null })}>
          Take back the deprecation of {current.version}
        </button>
      ) : (
        <form
          class="row"
          onSubmit={(e) => {
            e.preventDefault();
            void change({ deprecated: message });
          }}
        >
          <div class="field inline">
            <label for="dep-msg">Deprecate {current.version}:</label>
            <input id="dep-msg" required maxLength={500} placeholder="e.g. Use 3.x" value={message} onInput={(e) => setMessage(e.currentTarget.value)} />
          </div>
          <button type="submit" class="secondary">
            Deprecate
          </button>
        </form>
      )}
      <ErrorMessage error={error} />
    </section>
  );
}
