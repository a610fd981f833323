/** Search results with category and official filters (the form is shared with the home page). */
import { useState } from 'preact/hooks';
// The contract's categories: the service's own list, bundled at build time (core/types.ts is constants only).
import { CATEGORIES } from '../../../core/types.js';
import { get, qs } from '../api.js';
import { Show, useAsync } from '../components/common.js';
import { ToolList, type ToolItem } from '../components/tool-list.js';
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
      return { tools: r.results.tools as ToolItem[], total: r.results.total as number };
    }
    const r = await get(`/api/tools${qs({ q, category, official, limit: 100 })}`);
    return { tools: r.data as ToolItem[], total: r.data.length as number };
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
              <p class="muted">
                {r.total} {r.total === 1 ? 'tool' : 'tools'}
              </p>
              <ToolList tools={r.tools} />
            </>
          )}
        </Show>
      </section>
    </>
  );
}
