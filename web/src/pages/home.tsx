/** Home: search box, counts, trending tools, featured scenarios. */
import { get } from '../api.js';
import { Show, useAsync } from '../components/common.js';
import { ToolList, type ToolItem } from '../components/tool-list.js';
import { SearchForm } from './search.js';

const countOf = (r: { data: unknown[]; pagination?: { hasMore: boolean } }) => `${r.data.length}${r.pagination?.hasMore ? '+' : ''}`;

export function HomePage() {
  const counts = useAsync(async () => {
    const [tools, collections, scenarios] = await Promise.all([get('/api/tools?limit=100'), get('/api/collections?limit=50'), get('/api/scenarios?limit=50')]);
    return { tools: countOf(tools), collections: countOf(collections), scenarios: countOf(scenarios) };
  }, []);
  const trending = useAsync(async () => {
    const week = await get('/api/tools/trending?period=week&limit=6');
    if (week.data.length) return week.data as ToolItem[];
    const all = await get('/api/tools/trending?period=all&limit=6');
    // A new registry has no activity yet: show the best-scored tools instead.
    return (all.data.length ? all.data : (await get('/api/tools?limit=6')).data) as ToolItem[];
  }, []);
  const featured = useAsync(async () => (await get('/api/scenarios/featured?limit=6')).data as any[], []);
  return (
    <>
      <section class="hero">
        <h1>Tools for AI agents, ready to run</h1>
        <p>Find a tool, try it in a sandbox, gather tools into collections and serve them to any MCP client.</p>
        <SearchForm />
        <Show value={counts}>
          {(c) => (
            <p class="counts">
              <strong>{c.tools}</strong> tools · <strong>{c.collections}</strong> public collections · <strong>{c.scenarios}</strong> public scenarios
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
                    <p>{s.prompt}</p>
                    <p class="meta">
                      Quality {Math.round(s.qualityScore * 100)}% · {s.totalRuns} runs
                      {s.lastRunStatus && <span class={`badge verdict-${s.lastRunStatus}`}>last: {s.lastRunStatus}</span>}
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
