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
import { CallsNote, ToolList, type ToolItem } from '../components/tool-list.js';
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
                  <RankedList tools={r.tools} key={q} />
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

type MatchKind = 'words' | 'synonyms' | 'related';
type RankedTool = ToolItem & { match?: number; matchKind?: MatchKind; reliability?: { calls: number; successRate: number | null } };
/** What share of the query's words covers a result well enough to be shown before the divider (GOOD_MATCH, core/search/match.ts). */
const GOOD_MATCH = 2 / 3;

/**
 * Why a result is in the list, in words a person can check against it: the share of their words it has, whether only
 * through synonyms, or none at all (then it was reached through its package's name, a misspelling or closeness of
 * meaning: "related", never "matches 0 %").
 */
function MatchNote({ t }: { t: RankedTool }) {
  if (t.match === undefined) return null;
  if (t.matchKind === 'related' || t.match === 0)
    return (
      <span class="match-weak" data-match="related">
        {' '}
        · related by meaning or package, none of your words
      </span>
    );
  const pct = Math.round(t.match * 100);
  return (
    <span class={t.match < GOOD_MATCH ? 'match-weak' : ''} data-match={t.matchKind ?? 'words'}>
      {' '}
      · matches {pct}% of your words{t.matchKind === 'synonyms' ? ' (through synonyms)' : ''}
    </span>
  );
}

function RankedItem({ t, rank }: { t: RankedTool; rank: number }) {
  return (
    <li>
      <span class="rank" aria-hidden="true">
        {rank}
      </span>
      <div>
        <h3>
          <a href={toolHref(t.package.npmPackageName, t.name)}>{t.name}</a>
        </h3>
        <p class="pkg">
          {t.package.npmPackageName} · {t.package.category}
          <MatchNote t={t} />
        </p>
        <p class="desc">{t.description}</p>
        <p class="meta">
          <HealthBadge status={t.healthStatus} /> <Rating average={t.averageRating} count={t.ratingCount} /> <RiskBadge risks={t.risks} />
          <CallsNote reliability={t.reliability} />
          {t.package.env.length > 0 && <span class="muted"> · needs {t.package.env.join(', ')}</span>}
        </p>
      </div>
    </li>
  );
}

/**
 * Search hits in rank order: numbered, the first one the best match. The engine gives a tool the page calls related
 * (none of the query's words in its own text) no credit for words, so it comes before a tool that has some only when
 * its meaning is much closer (docs/search.md, "Order and badges"). Only the best group is shown at first — the tools that cover most of the words, or, when none does, those that
 * share some — and the rest waits below a divider that says what they are ("convert csv to json" shows its 4 good
 * matches, not 50 tools): a floor would hide a tool found by meaning that a person may still want.
 */
function RankedList({ tools }: { tools: RankedTool[] }) {
  const [more, setMore] = useState(false);
  if (tools.length === 0) return <p class="muted">No tools found.</p>;
  // The API's order makes each group a prefix: the good matches if any, else those that share some words, else all.
  const prefix = (ok: (t: RankedTool) => boolean) => {
    const n = tools.findIndex((t) => !ok(t));
    return n === -1 ? tools.length : n;
  };
  const firstCount =
    prefix((t) => t.matchKind !== 'related' && (t.match ?? 1) >= GOOD_MATCH) || prefix((t) => t.matchKind !== 'related' && (t.match ?? 1) > 0) || tools.length;
  const first = tools.slice(0, firstCount);
  const rest = tools.slice(firstCount);
  // "Fewer of your words" only when it is true: a hit below may share as many as the last one above (the engine ranked
  // it lower by meaning: "check if a website is up" lists latencyPercentiles, 50 %, below tools related by meaning).
  const fewest = Math.min(...first.map((t) => (t.matchKind === 'related' ? 0 : (t.match ?? 1))));
  const below = rest.some((t) => t.matchKind !== 'related' && (t.match ?? 1) >= Math.min(GOOD_MATCH, fewest))
    ? 'ranked lower; each says how many of your words it shares'
    : `that ${rest.length === 1 ? 'shares' : 'share'} fewer of your words, or none and ${rest.length === 1 ? 'is' : 'are'} only related by meaning`;
  return (
    <>
      <ol class="ranked" aria-label="Tools, best match first" data-testid="ranked">
        {first.map((t, i) => (
          <RankedItem t={t} rank={i + 1} />
        ))}
      </ol>
      {rest.length > 0 && (
        <div class="more-results" data-testid="more-results">
          <p class="divider">
            <strong>
              {rest.length} more {rest.length === 1 ? 'result' : 'results'}
            </strong>{' '}
            {below}.{' '}
            <button type="button" class="secondary small" aria-expanded={more} onClick={() => setMore(!more)}>
              {more ? 'Hide them' : 'Show them'}
            </button>
          </p>
          {more && (
            <ol class="ranked" start={firstCount + 1} aria-label="More results, weaker matches" data-testid="ranked-more">
              {rest.map((t, i) => (
                <RankedItem t={t} rank={firstCount + i + 1} />
              ))}
            </ol>
          )}
        </div>
      )}
    </>
  );
}
