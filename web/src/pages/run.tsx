/**
 * What a scenario run did, in full: the task (prompt), each tool call with its input and output (or error), the
 * agent's answer, the judge's verdict and reasoning, and each assertion with whether it held. A run's own page
 * (`/scenario-runs/:id`, what history rows open) and the scenario page's finished run both show it.
 */
import { get } from '../api.js';
import { ErrorMessage, formatDate, Show, useAsync, VerdictBadge } from '../components/common.js';
import { useSession } from '../session.js';

export interface RunStep {
  toolName?: string;
  toolId: string | null;
  params: unknown;
  output?: unknown;
  error?: { code?: string; message: string };
  executionTimeMs?: number;
}

const json = (v: unknown) => JSON.stringify(v, null, 2) ?? 'null';

/** Each tool call: its name and state, then its input and its output or error, in scrolling blocks. */
export function Steps({ steps, done }: { steps: RunStep[]; done: boolean }) {
  if (steps.length === 0) return <p class="muted">{done ? 'The agent called no tool.' : 'No tool called yet.'}</p>;
  return (
    <ol class="steps">
      {steps.map((st) => {
        const state = st.error ? 'failed' : st.output !== undefined ? 'succeeded' : done ? 'failed' : 'running';
        return (
          <li class={`tool-card tool-${state}`} data-testid="run-step">
            <p class="tool-head">
              <span>
                Tool <code>{st.toolName ?? st.toolId}</code>
              </span>
              <span class={`badge ${state === 'failed' ? 'health-broken' : state === 'succeeded' ? 'health-healthy' : 'health-unknown'}`}>
                <span aria-hidden="true">{state === 'failed' ? '✗ ' : state === 'succeeded' ? '✓ ' : '… '}</span>
                {state}
                {st.executionTimeMs !== undefined ? ` · ${st.executionTimeMs} ms` : ''}
              </span>
            </p>
            <p class="step-label">Input</p>
            <pre tabIndex={0}>
              <code>{json(st.params)}</code>
            </pre>
            {st.error ? (
              <p class="error">
                {st.error.code && <code>{st.error.code}</code>} {st.error.message}
              </p>
            ) : (
              st.output !== undefined && (
                <>
                  <p class="step-label">Output</p>
                  <pre tabIndex={0}>
                    <code>{json(st.output)}</code>
                  </pre>
                </>
              )
            )}
          </li>
        );
      })}
    </ol>
  );
}

/** An assertion in words (core/llm/assertions.ts checks them). */
export function assertionText(a: any): string {
  switch (a.type) {
    case 'toolCalled':
      return `calls ${a.tool}`;
    case 'outputContains':
      return `answer contains “${a.text}”`;
    case 'noToolErrors':
      return 'no tool errors';
    case 'toolSequence':
      return `calls ${a.tools.join(' → ')} in this order`;
    case 'toolArgs':
      return `calls ${a.tool} with ${JSON.stringify(a.args)}`;
    case 'maxSteps':
      return `at most ${a.max} tool calls`;
    case 'maxLatencyMs':
      return `takes at most ${a.max} ms`;
    case 'maxTokens':
      return `uses at most ${a.max} tokens`;
    default:
      return a.type;
  }
}

/** The agent's answer, the verdict with the judge's reasoning, and each assertion's outcome. */
export function Outcome({ run }: { run: any }) {
  const e = run.evaluator ?? {};
  return (
    <>
      <h3>The agent's answer</h3>
      {run.finalText ? (
        <p class="answer panel-text" data-testid="run-answer">
          {run.finalText}
        </p>
      ) : (
        <p class="muted">No answer.</p>
      )}
      {run.error && (
        <p class="error">
          The run failed: <code>{run.error.code}</code> {run.error.message}
        </p>
      )}
      {e.verdict && (
        <>
          <h3>Verdict</h3>
          <p class={`verdict verdict-${e.verdict}`} data-testid="verdict">
            Verdict: <VerdictBadge verdict={e.verdict} /> <span class="muted">judged by {e.model}</span>
          </p>
          <p class="reasoning" data-testid="judge-reason">
            <strong>Why:</strong> {e.reason}
          </p>
        </>
      )}
      {e.assertions?.length > 0 && (
        <>
          <h3>Assertions</h3>
          <ul class="assertions" data-testid="assertions">
            {e.assertions.map((r: any) => (
              <li>
                <VerdictBadge verdict={r.passed ? 'pass' : 'fail'} /> {assertionText(r.assertion)} <span class="muted">— {r.detail}</span>
              </li>
            ))}
          </ul>
        </>
      )}
    </>
  );
}

/** Says when runs, judging and chat are rule-based (no LLM configured), and how to configure one. */
export function OfflineNotice({ provider }: { provider?: string }) {
  if (provider !== 'offline') return null;
  return (
    <aside class="notice" aria-label="No language model" data-testid="offline-notice">
      <p>
        <strong>No language model is configured.</strong> Agent runs, judging and chat here are rule-based: the offline agent picks tools by matching words and
        fills their input from the text, and the judge applies fixed rules. To use a real model, the operator sets <code>LLM_BASE_URL</code> (an
        OpenAI-compatible server, with its <code>/v1</code>), <code>LLM_API_KEY</code> and <code>LLM_MODEL</code> and restarts the service: see “LLM providers”
        in <code>docs/scenarios.md</code> of the Toolshed repository.
      </p>
    </aside>
  );
}

export function RunPage({ id }: { id: string }) {
  const { llm } = useSession();
  const run = useAsync(async () => {
    const r = (await get(`/api/scenario-runs/${encodeURIComponent(id)}`)).data;
    const scenario = await get(`/api/scenarios/${encodeURIComponent(r.scenarioId)}`).then(
      (s) => s.data,
      () => null,
    );
    return { r, scenario };
  }, [id]);
  return (
    <Show value={run}>
      {({ r, scenario }) => (
        <article>
          <p class="pkg">{scenario ? <a href={`/scenarios/${r.scenarioId}`}>{scenario.name}</a> : 'Scenario'} · run</p>
          <h1>
            Run of {formatDate(r.timestamps.createdAt)} {r.evaluator?.verdict && <VerdictBadge verdict={r.evaluator.verdict} />}
          </h1>
          <OfflineNotice provider={r.agent?.provider ?? r.evaluator?.provider ?? llm?.provider} />
          <p class="meta">
            Status {r.status}
            {r.agent && (
              <>
                {' '}
                · agent model {r.agent.model} ({r.agent.provider})
              </>
            )}{' '}
            · {r.usage.totalTokens} tokens · {r.usage.executionTimeMs} ms
          </p>
          <h2>Task</h2>
          {scenario ? <p class="prompt">{scenario.prompt}</p> : <ErrorMessage error={new Error('The scenario is gone.')} />}
          <h2>Tool calls</h2>
          <Steps steps={r.steps} done={r.status === 'completed' || r.status === 'failed'} />
          <h2>Result</h2>
          <Outcome run={r} />
        </article>
      )}
    </Show>
  );
}
