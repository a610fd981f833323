/**
 * Try it: runs the tool with params from a generated form. Env values are sent once with the request and then
 * cleared from the form; nothing keeps them. The execution's status streams in over SSE.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { post, slugPath, stream } from '../api.js';
import { ErrorMessage } from '../components/common.js';
import { readParams, SchemaFields, type FieldValues, type JsonSchema } from '../components/schema-form.js';

interface EnvVar {
  name: string;
  required: boolean;
  description: string | null;
}

interface Execution {
  id: string;
  status: string;
  result?: unknown;
  error?: { code: string; message: string };
  executionTimeMs?: number;
}

/** The form's values live with the tool page, which builds its curl call from them (what Run sends, curl sends). */
export function TryIt({
  slug,
  schema,
  envVars,
  values,
  setValues,
}: {
  slug: string;
  schema: JsonSchema;
  envVars: EnvVar[];
  values: FieldValues;
  setValues: (v: FieldValues) => void;
}) {
  const [env, setEnv] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [timeline, setTimeline] = useState<string[]>([]);
  const [execution, setExecution] = useState<Execution>();
  const close = useRef<(() => void) | undefined>(undefined);
  useEffect(() => () => close.current?.(), []);

  const run = async (e: Event) => {
    e.preventDefault();
    const read = readParams(schema, values);
    if ('error' in read) return setError(new Error(read.error));
    const sentEnv = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== ''));
    setEnv({}); // sent once, never kept
    setError(undefined);
    setExecution(undefined);
    setTimeline([]);
    setBusy(true);
    try {
      const res = await post(`/api/tools/execute/${slugPath(slug)}?wait=false`, {
        params: read.params,
        ...(Object.keys(sentEnv).length ? { env: sentEnv } : {}),
      });
      const id = res.data.executionId as string;
      close.current?.();
      close.current = stream(`/api/executions/${id}/events`, {
        status: (d: Execution) => {
          setTimeline((t) => (t.includes(d.status) ? t : [...t, d.status]));
          if (!['queued', 'running'].includes(d.status)) setExecution(d);
        },
        done: () => setBusy(false),
        error: (d) => {
          setError(new Error(d.message ?? 'The execution failed'));
          setBusy(false);
        },
        failed: (d) => {
          setError(new Error(d.message));
          setBusy(false);
        },
      });
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="try-h" class="panel">
      <h2 id="try-h">Try it</h2>
      <form onSubmit={run} aria-describedby="try-note">
        <SchemaFields schema={schema} values={values} onChange={setValues} />
        {envVars.length > 0 && (
          <fieldset>
            <legend>Environment</legend>
            <p id="try-note" class="muted">
              Sent once with this run to the sandbox, never stored or shown again.
            </p>
            {envVars.map((v) => (
              <div class="field">
                <label for={`env-${v.name}`}>
                  {v.name}
                  {v.required && <span aria-hidden="true"> *</span>}
                </label>
                <input
                  id={`env-${v.name}`}
                  type="password"
                  autocomplete="off"
                  required={v.required}
                  value={env[v.name] ?? ''}
                  onInput={(e) => setEnv({ ...env, [v.name]: e.currentTarget.value })}
                />
                {v.description && <small>{v.description}</small>}
              </div>
            ))}
          </fieldset>
        )}
        <button type="submit" disabled={busy}>
          {busy ? 'Running…' : 'Run'}
        </button>
      </form>
      <ErrorMessage error={error} />
      <div aria-live="polite" class="result-view">
        {timeline.length > 0 && (
          <ol class="timeline" aria-label="Execution status">
            {timeline.map((s) => (
              <li class={`status-${s}`}>{s}</li>
            ))}
          </ol>
        )}
        {execution && (
          <div class={`result status-${execution.status}`} data-testid="execution-result">
            <h3>
              Result: {execution.status}
              {execution.executionTimeMs !== undefined && <span class="muted"> in {execution.executionTimeMs} ms</span>}
            </h3>
            {execution.error ? (
              <p>
                <strong>{execution.error.code}</strong>: {execution.error.message}
              </p>
            ) : (
              <ResultView result={execution.result} />
            )}
          </div>
        )}
      </div>
    </section>
  );
}

interface McpBlock {
  type: string;
  text?: string;
  data?: string;
  mimeType?: string;
}

/** An MCP tool's result ({ content: [...] }): its blocks, or undefined when the result has another shape. */
function mcpBlocks(result: unknown): McpBlock[] | undefined {
  if (!result || typeof result !== 'object') return undefined;
  const content = (result as { content?: unknown }).content;
  if (!Array.isArray(content) || content.length === 0) return undefined;
  if (!content.every((b) => b && typeof b === 'object' && typeof (b as McpBlock).type === 'string')) return undefined;
  return content as McpBlock[];
}

const SAFE_IMAGE = /^image\/(png|jpeg|gif|webp)$/;

/**
 * A result as a person reads it: an MCP result's text blocks as text and its images as images (not a base64 blob
 * inside JSON), the raw JSON one click away; any other result as JSON.
 */
function ResultView({ result }: { result: unknown }) {
  const json = (
    <pre tabIndex={0}>
      <code>{JSON.stringify(result, null, 2)}</code>
    </pre>
  );
  const blocks = mcpBlocks(result);
  if (!blocks) return json;
  return (
    <>
      <div class="mcp-content" data-testid="mcp-content">
        {blocks.map((b, i) => {
          if (b.type === 'text' && typeof b.text === 'string') return <pre class="mcp-text">{b.text}</pre>;
          if (b.type === 'image' && typeof b.data === 'string' && SAFE_IMAGE.test(b.mimeType ?? ''))
            return <img class="mcp-image" src={`data:${b.mimeType};base64,${b.data}`} alt={`Block ${i + 1} of the result (${b.mimeType})`} />;
          return <p class="muted">A {b.type} block (see the raw result).</p>;
        })}
      </div>
      <details>
        <summary>Raw result (JSON)</summary>
        {json}
      </details>
    </>
  );
}
