/** Home: search box, counts, trending tools, featured scenarios. */
import { get } from '../api.js';
import { Show, useAsync, VerdictBadge } from '../components/common.js';
import { ToolList, type ToolItem } from '../components/tool-list.js';
import { SearchForm } from './search.js';
import { scenarioRecord } from './scenarios.js';

const countOf = (r: { data: unknown[]; pagination?: { hasMore: boolean } }) => `${r.data.length}${r.pagination?.hasMore ? '+' : ''}`;

export function HomePage() {
  const counts = useAsync(async () => {
    const [tools, collections, scenarios] = await Promise.all([get('/api/tools?limit=100'), get('/api/collections?limit=50'), get('/api/scenarios?limit=50')]);
    return { tools: countOf(tools), collections: countOf(collections), scenarios: countOf(scenarios) };
  }, []);
  const trending = useAsync(async () => {
    const week = await get('/api/tools/trending?period=week&limit=6');
    if (week.data.length) return week.data as ToolItem[];
    // Nothing used this week: the best-scored tools, from the list the counts already fetched (one shared call).
    return (await get('/api/tools?limit=100')).data.slice(0, 6) as ToolItem[];
  }, []);
  // Featured on the home page means proven: the API mixes in the best-scored scenarios (SPEC), but a scenario whose
  // last run did not pass (or that never ran) proves nothing to a visitor.
  const featured = useAsync(
    async () => ((await get('/api/scenarios/featured?limit=20')).data as any[]).filter((s) => s.lastRunStatus === 'pass').slice(0, 6),
    [],
  );
  return (
    <>
      <section class="hero">
        <h1>Tools for AI agents, ready to run</h1>
        <p>Find a tool, try it in a sandbox, gather tools into collections and serve them to any MCP client.</p>
        <SearchForm />
        <Show value={counts}>
          {(c) => (
            <p class="counts">
              <strong>{c.tools}</strong> {c.tools === '1' ? 'tool' : 'tools'} · <strong>{c.collections}</strong> public{' '}
              {c.collections === '1' ? 'collection' : 'collections'} · <strong>{c.scenarios}</strong> public {c.scenarios === '1' ? 'scenario' : 'scenarios'}
            </p>
          )}
        </Show>
      </section>
      <section aria-labelledby="trending-h">
        <h2 id="trending-h">Trending tools</h2>
        <Show value={trending}>{(tools) => <ToolList tools={tools} empty="Nothing is trending yet." />}</Show>
      </section>
      <section aria-labelledby="featured-h">
        <h2 id="featured-h">Featured scenarios</h2>
        <Show value={featured}>
          {(list) =>
            list.length === 0 ? (
              <p class="muted">No public scenarios yet.</p>
            ) : (
              <ul class="cards">
                {list.map((s) => (
                  <li class="card">
                    <h3>
                      <a href={`/scenarios/${s.id}`}>{s.name}</a>
                    </h3>
                    <p class="pkg">
                      in {s.collection.username}/{s.collection.slug}
                    </p>
                    <p class="prompt">{s.prompt}</p>
                    <p class="meta">
                      {scenarioRecord(s)}
                      {s.lastRunStatus && <VerdictBadge verdict={s.lastRunStatus} prefix="last: " />}
                    </p>
                  </li>
                ))}
              </ul>
            )
          }
        </Show>
      </section>
    </>
  );
}
