/**
 * Scenarios: the list and create form of a collection, and a scenario's page: run it, watch the steps and the
 * verdict arrive live (SSE), and its run history.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { get, post, stream } from '../api.js';
import { ErrorMessage, formatDate, plural, Show, useAsync, VerdictBadge } from '../components/common.js';
import { navigate } from '../router.js';
import { useSession } from '../session.js';
import { assertionText, OfflineNotice, Outcome, Steps, type RunStep } from './run.js';
import { BatchActions, BatchHistory } from './batches.js';

/**
 * A scenario's record in words. Its qualityScore is (passes + 1) / (runs + 2) over the newest 20 owner runs — 50 %
 * before any run — so it is shown as a score beside the plain count of passes, never alone like a pass rate.
 */
export function scenarioRecord(s: { qualityScore: number; totalRuns: number }): string {
  const score = `quality score ${Math.round(s.qualityScore * 100)}%`;
  if (s.totalRuns === 0) return 'Not run yet';
  if (s.totalRuns > 20) return `${plural(s.totalRuns, 'run')} · ${score} over the last 20`;
  const passes = Math.max(0, Math.round(s.qualityScore * (s.totalRuns + 2) - 1));
  return `${passes} of ${plural(s.totalRuns, 'run')} passed · ${score}`;
}

export function ScenarioList({ collection, owner }: { collection: any; owner: boolean }) {
  const list = useAsync(async () => (await get(`/api/collections/${collection.id}/scenarios`)).data.scenarios as any[], [collection.id]);
  return (
    <section aria-labelledby="scen-h">
      <h2 id="scen-h">Scenarios</h2>
      <Show value={list}>
        {(items) =>
          items.length === 0 ? (
            <p class="muted">No scenarios yet.</p>
          ) : (
            <table>
              <caption class="visually-hidden">Scenarios of this collection</caption>
              <thead>
                <tr>
                  <th scope="col">Scenario</th>
                  <th scope="col">Record</th>
                  <th scope="col">Last verdict</th>
                </tr>
              </thead>
              <tbody>
                {items.map((s) => (
                  <tr>
                    <th scope="row">
                      <a href={`/scenarios/${s.id}`}>{s.name}</a>
                    </th>
                    <td>{scenarioRecord(s)}</td>
                    <td>{s.lastRunStatus ? <VerdictBadge verdict={s.lastRunStatus} /> : 'not run'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Show>
      {owner && <BatchActions collection={collection} onGenerated={list.reload} />}
      {owner && <CreateScenario collection={collection} />}
      <BatchHistory collectionId={collection.id} />
    </section>
  );
}

function CreateScenario({ collection }: { collection: any }) {
  const [prompt, setPrompt] = useState('');
  const [name, setName] = useState('');
  const [tool, setTool] = useState('');
  const [contains, setContains] = useState('');
  const [error, setError] = useState<unknown>();
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    const assertions = [...(tool ? [{ type: 'toolCalled', tool }] : []), ...(contains ? [{ type: 'outputContains', text: contains }] : [])];
    try {
      const r = await post('/api/scenarios', { collectionId: collection.id, prompt, ...(name ? { name } : {}), ...(assertions.length ? { assertions } : {}) });
      navigate(`/scenarios/${r.data.id}`);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form onSubmit={submit} class="panel" aria-labelledby="new-scen-h">
      <h3 id="new-scen-h">New scenario</h3>
      <div class="field">
        <label for="sc-prompt">Task for the agent</label>
        <textarea id="sc-prompt" required minLength={10} maxLength={4000} rows={3} value={prompt} onInput={(e) => setPrompt(e.currentTarget.value)} />
        <small>At least 10 characters. The agent gets this collection's tools; an evaluator judges its answer.</small>
      </div>
      <div class="field">
        <label for="sc-name">Name (optional)</label>
        <input id="sc-name" maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </div>
      <div class="field">
        <label for="sc-tool">Assert that this tool is called (optional)</label>
        <select id="sc-tool" value={tool} onChange={(e) => setTool(e.currentTarget.value)}>
          <option value="">—</option>
          {collection.tools.map((t: any) => (
            <option value={t.name}>{t.name}</option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="sc-contains">Assert that the answer contains (optional)</label>
        <input id="sc-contains" value={contains} onInput={(e) => setContains(e.currentTarget.value)} />
      </div>
      <button type="submit">Create scenario</button>
      <ErrorMessage error={error} />
    </form>
  );
}

interface LiveRun {
  runId: string;
  steps: RunStep[];
  verdict?: { success: boolean; verdict: string; reason: string; model: string };
  failure?: string;
  done: boolean;
}

export function ScenarioPage({ id }: { id: string }) {
  const { user, llm } = useSession();
  const scenario = useAsync(async () => (await get(`/api/scenarios/${id}`)).data, [id]);
  const history = useAsync(async () => (await get(`/api/scenarios/${id}/runs?limit=10`)).data as any[], [id]);
  const [live, setLive] = useState<LiveRun>();
  // The finished run as the service recorded it: answer, judge's reasoning, assertions.
  const [record, setRecord] = useState<any>();
  const [error, setError] = useState<unknown>();
  const close = useRef<(() => void) | undefined>(undefined);
  useEffect(() => () => close.current?.(), []);

  const run = async () => {
    setError(undefined);
    try {
      const r = await post(`/api/scenarios/${id}/run?wait=false`);
      const runId = r.data.runId as string;
      setLive({ runId, steps: [], done: false });
      setRecord(undefined);
      close.current?.();
      close.current = stream(`/api/scenario-runs/${runId}/events`, {
        step: (d) => setLive((l) => l && { ...l, steps: [...l.steps, { toolName: d.toolName, toolId: d.toolId, params: d.params }] }),
        'tool.completed': (d) =>
          setLive(
            (l) =>
              l && {
                ...l,
                steps: l.steps.map((s, i) => (i === l.steps.length - 1 ? { ...s, output: d.output, error: d.error, executionTimeMs: d.executionTimeMs } : s)),
              },
          ),
        verdict: (d) => setLive((l) => l && { ...l, verdict: d }),
        error: (d) => setLive((l) => l && { ...l, failure: d.message ?? 'The run failed' }),
        done: () => {
          setLive((l) => l && { ...l, done: true });
          history.reload();
          scenario.reload();
          get(`/api/scenario-runs/${runId}`).then(
            (res) => setRecord(res.data),
            () => undefined,
          );
        },
        failed: (d) => setLive((l) => l && { ...l, failure: d.message, done: true }),
      });
    } catch (err) {
      setError(err);
    }
  };

  return (
    <Show value={scenario}>
      {(s) => (
        <article>
          <header class="page-head">
            <h1>{s.name}</h1>
            <p class="pkg">
              in{' '}
              <a href={`/collections/${s.collection.slug}`}>
                {s.collection.username}/{s.collection.slug}
              </a>{' '}
              · {scenarioRecord(s)}
            </p>
          </header>
          <OfflineNotice provider={llm?.provider} />
          <p class="lead prompt">{s.prompt}</p>
          {s.assertions && (
            <ul>
              {s.assertions.map((a: any) => (
                <li>{assertionText(a)}</li>
              ))}
            </ul>
          )}
          {user ? (
            <button type="button" onClick={run} disabled={!!live && !live.done}>
              {live && !live.done ? 'Running…' : 'Run scenario'}
            </button>
          ) : (
            <p>
              <a href="/login">Sign in</a> to run this scenario.
            </p>
          )}
          <ErrorMessage error={error} />
          {live && (
            <section aria-live="polite" aria-labelledby="live-h" class="panel">
              <h2 id="live-h">This run</h2>
              <h3>Tool calls</h3>
              <Steps steps={record ? record.steps : live.steps} done={live.done} />
              {!live.verdict && !live.failure && <p role="status">Waiting for the verdict…</p>}
              {record ? (
                <Outcome run={record} />
              ) : (
                live.verdict && (
                  <p class={`verdict verdict-${live.verdict.verdict}`} data-testid="verdict">
                    Verdict: <VerdictBadge verdict={live.verdict.verdict} /> — {live.verdict.reason} <span class="muted">({live.verdict.model})</span>
                  </p>
                )
              )}
              {live.failure && <p class="error">{live.failure}</p>}
              {live.done && (
                <p>
                  <a href={`/scenario-runs/${live.runId}`}>Open this run</a>
                </p>
              )}
            </section>
          )}
          <section aria-labelledby="hist-h">
            <h2 id="hist-h">History</h2>
            <Show value={history}>
              {(runs) =>
                runs.length === 0 ? (
                  <p class="muted">Not run yet.</p>
                ) : (
                  <table>
                    <caption class="visually-hidden">Recent runs</caption>
                    <thead>
                      <tr>
                        <th scope="col">When</th>
                        <th scope="col">Status</th>
                        <th scope="col">Verdict</th>
                        <th scope="col">Steps</th>
                      </tr>
                    </thead>
                    <tbody>
                      {runs.map((r) => (
                        <tr>
                          <td>
                            <a href={`/scenario-runs/${r.id}`}>{formatDate(r.timestamps.createdAt)}</a>
                          </td>
                          <td>{r.status}</td>
                          <td>{r.evaluator?.verdict ? <VerdictBadge verdict={r.evaluator.verdict} /> : '—'}</td>
                          <td>{r.steps.length}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                )
              }
            </Show>
          </section>
        </article>
      )}
    </Show>
  );
}
