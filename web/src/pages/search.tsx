/**
 * Search results with category and official filters (the form is shared with the home page). A ranked search is a
 * numbered list, best match first; when no tool covers the query's words well (`goodMatch`, docs/search.md) the page
 * says so before the closest matches.
 */
import { useState } from 'preact/hooks';
// The contract's categories: the service's own list, bundled at build time (core/types.ts is constants only).
import { CATEGORIES } from '../../../core/types.js';
import { get, qs } from '../api.js';
import { HealthBadge, Rating, Show, toolHref, useAsync } from '../components/common.js';
import { ToolList, type ToolItem } from '../components/tool-list.js';
import { RiskBadge } from '../components/risks.js';
import { navigate, useLoc } from '../router.js';

export function SearchForm({ initial = '' }: { initial?: string }) {
  const [q, setQ] = useState(initial);
  const loc = useLoc();
  return (
    <form
      role="search"
      class="search-form"
      onSubmit={(e) => {
        e.preventDefault();
        const params = new URLSearchParams(loc.path === '/search' ? loc.query : '');
        params.set('q', q);
        navigate(`/search?${params}`);
      }}
    >
      <label for="search-q" class="visually-hidden">
        Search tools
      </label>
      <input
        id="search-q"
        type="search"
        name="q"
        placeholder="Search tools, e.g. “convert a colour to RGB”"
        value={q}
        onInput={(e) => setQ(e.currentTarget.value)}
      />
      <button type="submit">Search</button>
    </form>
  );
}

export function SearchPage() {
  const { query } = useLoc();
  const q = query.get('q') ?? '';
  const category = query.get('category') ?? '';
  const official = query.get('official') ?? '';
  const results = useAsync(async () => {
    // Ranked search when there is a query and no official filter; otherwise the filtered list.
    if (q && !official) {
      const r = await get(`/api/tools/search${qs({ q, category, limit: 50 })}`);
      return { tools: r.results.tools as RankedTool[], total: r.results.total as number, ranked: true, goodMatch: r.results.goodMatch as boolean };
    }
    const r = await get(`/api/tools${qs({ q, category, official, limit: 100 })}`);
    return { tools: r.data as RankedTool[], total: r.data.length as number, ranked: false, goodMatch: true };
  }, [q, category, official]);
  const setFilter = (name: string, value: string) => {
    const p = new URLSearchParams(query);
    if (value) p.set(name, value);
    else p.delete(name);
    navigate(`/search?${p}`, true);
  };
  return (
    <>
      <h1>{q ? `Tools for “${q}”` : 'All tools'}</h1>
      <SearchForm initial={q} key={q} />
      <fieldset class="filters">
        <legend>Filters</legend>
        <div class="field inline">
          <label for="f-category">Category</label>
          <select id="f-category" value={category} onChange={(e) => setFilter('category', e.currentTarget.value)}>
            <option value="">Any</option>
            {CATEGORIES.map((c) => (
              <option value={c}>{c}</option>
            ))}
          </select>
        </div>
        <div class="field inline">
          <label for="f-official">Publisher</label>
          <select id="f-official" value={official} onChange={(e) => setFilter('official', e.currentTarget.value)}>
            <option value="">Any</option>
            <option value="true">Official only</option>
            <option value="false">Community only</option>
          </select>
        </div>
      </fieldset>
      <section aria-live="polite" aria-busy={results.loading}>
        <Show value={results}>
          {(r) => (
            <>
              {r.ranked && r.tools.length > 0 && !r.goodMatch && (
                <div class="notice" data-testid="no-good-match">
                  <p>
                    <strong>No tool does this well.</strong> None of them covers most of the words of “{q}”. The closest matches are below; check what each one
                    does before using it.
                  </p>
                </div>
              )}
              {r.ranked ? (
                <>
                  <p class="muted">
                    {r.tools.length} {r.tools.length === 1 ? 'tool' : 'tools'}, best match first
                  </p>
                  <RankedList tools={r.tools} />
                </>
              ) : (
                <>
                  <p class="muted">
                    {r.total} {r.total === 1 ? 'tool' : 'tools'}
                  </p>
                  <ToolList tools={r.tools} />
                </>
              )}
            </>
          )}
        </Show>
      </section>
    </>
  );
}

type RankedTool = ToolItem & { match?: number };

/** Search hits in rank order: numbered, the first one the best match. */
function RankedList({ tools }: { tools: RankedTool[] }) {
  if (tools.length === 0) return <p class="muted">No tools found.</p>;
  return (
    <ol class="ranked" aria-label="Tools, best match first" data-testid="ranked">
      {tools.map((t, i) => (
        <li>
          <span class="rank" aria-hidden="true">
            {i + 1}
          </span>
          <div>
            <h3>
              <a href={toolHref(t.package.npmPackageName, t.name)}>{t.name}</a>
            </h3>
            <p class="pkg">
              {t.package.npmPackageName} · {t.package.category}
              {t.match !== undefined && <span class={t.match < 2 / 3 ? 'match-weak' : ''}> · matches {Math.round(t.match * 100)}% of your words</span>}
            </p>
            <p class="desc">{t.description}</p>
            <p class="meta">
              <HealthBadge status={t.healthStatus} /> <Rating average={t.averageRating} count={t.ratingCount} /> <RiskBadge risks={t.risks} />
              {t.package.env.length > 0 && <span class="muted"> · needs {t.package.env.join(', ')}</span>}
            </p>
          </div>
        </li>
      ))}
    </ol>
  );
}
