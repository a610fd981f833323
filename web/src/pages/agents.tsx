/**
 * Agents: the signed-in user's agents and a form to make one (name, description, system prompt, collections); an
 * agent's page is a chat whose answer streams in (`POST /api/agents/:id/chat`): text as it arrives, each tool call
 * as a card that fills in when the call completes. Each message carries the conversation so far (the server keeps
 * none), cut to the API's bounds.
 */
import { useRef, useState } from 'preact/hooks';
import { get, post, postStream } from '../api.js';
import { ErrorMessage, plural, Show, useAsync } from '../components/common.js';
import { navigate } from '../router.js';
import { useSession } from '../session.js';
import { OfflineNotice } from './run.js';

export function AgentsPage() {
  const agents = useAsync(async () => (await get('/api/agents')).data as any[], []);
  return (
    <>
      <h1>Agents</h1>
      <p class="lead">An agent is a system prompt and the tools of some of your collections. Chat with it, and watch it call them.</p>
      <section aria-labelledby="agents-h">
        <h2 id="agents-h">Your agents</h2>
        <Show value={agents}>
          {(list) =>
            list.length === 0 ? (
              <p class="muted">You have none yet.</p>
            ) : (
              <ul class="cards">
                {list.map((a) => (
                  <li class="card">
                    <h3>
                      <a href={`/agents/${a.id}`}>{a.name}</a>
                    </h3>
                    {a.description && <p>{a.description}</p>}
                    <p class="meta">{a.collections.length ? a.collections.map((c: any) => c.name).join(', ') : 'No collections'}</p>
                  </li>
                ))}
              </ul>
            )
          }
        </Show>
      </section>
      <CreateAgent />
    </>
  );
}

function CreateAgent() {
  const collections = useAsync(async () => (await get('/api/auth/me/collections?limit=100')).data as any[], []);
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [systemPrompt, setSystemPrompt] = useState('');
  const [chosen, setChosen] = useState<string[]>([]);
  const [error, setError] = useState<unknown>();
  const toggle = (id: string, on: boolean) => setChosen((c) => (on ? [...c, id] : c.filter((x) => x !== id)));
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      const body = { name, collectionIds: chosen, ...(description ? { description } : {}), ...(systemPrompt ? { systemPrompt } : {}) };
      const r = await post('/api/agents', body);
      navigate(`/agents/${r.data.id}`);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form onSubmit={submit} class="panel" aria-labelledby="new-agent-h">
      <h2 id="new-agent-h">New agent</h2>
      <div class="field">
        <label for="agent-name">Name</label>
        <input id="agent-name" required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </div>
      <div class="field">
        <label for="agent-desc">Description</label>
        <input id="agent-desc" maxLength={1000} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      </div>
      <div class="field">
        <label for="agent-prompt">System prompt</label>
        <textarea id="agent-prompt" rows={4} maxLength={8000} value={systemPrompt} onInput={(e) => setSystemPrompt(e.currentTarget.value)} />
      </div>
      <fieldset>
        <legend>Collections whose tools it may use</legend>
        <Show value={collections}>
          {(list) =>
            list.length === 0 ? (
              <p class="muted">
                You have no collections yet. <a href="/collections">Make one</a> first.
              </p>
            ) : (
              list.map((c) => (
                <div class="field checkbox">
                  <input id={`agent-col-${c.id}`} type="checkbox" checked={chosen.includes(c.id)} onChange={(e) => toggle(c.id, e.currentTarget.checked)} />
                  <label for={`agent-col-${c.id}`}>
                    {c.name} <span class="muted">({plural(c.toolCount, 'tool')})</span>
                  </label>
                </div>
              ))
            )
          }
        </Show>
      </fieldset>
      <button type="submit">Create agent</button>
      <ErrorMessage error={error} />
    </form>
  );
}

interface ToolCall {
  kind: 'tool';
  key: string;
  name: string;
  params: unknown;
  state: 'running' | 'succeeded' | 'failed';
  output?: unknown;
  error?: { code: string; message: string };
  ms?: number;
}
type Part = ToolCall | { kind: 'text'; text: string };
interface Turn {
  question: string;
  parts: Part[];
  tools?: number;
  state: 'streaming' | 'done' | 'failed';
  error?: string;
}

/** The API's bounds on a chat request's history (CHAT_HISTORY_MAX_TURNS and _CHARS in api/operations/agents.ts). */
const HISTORY_TURNS = 40;
const HISTORY_CHARS = 64_000;

/** The finished turns as chat history, oldest first: the newest that fit the API's bounds. */
export function historyOf(turns: Turn[]): { role: 'user' | 'assistant'; content: string }[] {
  const out: { role: 'user' | 'assistant'; content: string }[] = [];
  let chars = 0;
  for (const t of [...turns].reverse()) {
    if (t.state !== 'done') continue;
    const answer = t.parts
      .filter((p): p is { kind: 'text'; text: string } => p.kind === 'text')
      .map((p) => p.text)
      .join('')
      .trim()
      .slice(0, 8000);
    const pair = [{ role: 'user' as const, content: t.question.slice(0, 8000) }, ...(answer ? [{ role: 'assistant' as const, content: answer }] : [])];
    const size = pair.reduce((n, m) => n + m.content.length, 0);
    if (out.length + pair.length > HISTORY_TURNS || chars + size > HISTORY_CHARS) break;
    out.unshift(...pair);
    chars += size;
  }
  return out;
}

export function AgentPage({ id }: { id: string }) {
  const { llm } = useSession();
  const agent = useAsync(async () => (await get(`/api/agents/${encodeURIComponent(id)}`)).data, [id]);
  return (
    <Show value={agent}>
      {(a) => (
        <>
          <p class="pkg">
            <a href="/agents">Agents</a>
          </p>
          <h1>{a.name}</h1>
          <OfflineNotice provider={llm?.provider} />
          {a.description && <p class="lead">{a.description}</p>}
          <p class="meta">
            Tools from:{' '}
            {a.collections.length
              ? a.collections.map((c: any, i: number) => [i ? ', ' : '', <a href={`/collections/${c.uid}`}>{c.name}</a>])
              : 'no collections'}
          </p>
          <Chat id={a.id} />
        </>
      )}
    </Show>
  );
}

function Chat({ id }: { id: string }) {
  const [turns, setTurns] = useState<Turn[]>([]);
  const [message, setMessage] = useState('');
  const [error, setError] = useState<unknown>();
  const busy = turns.at(-1)?.state === 'streaming';
  const input = useRef<HTMLTextAreaElement>(null);
  /** Changes the last turn (the one streaming). */
  const update = (fn: (t: Turn) => Turn) => setTurns((ts) => [...ts.slice(0, -1), fn(ts.at(-1)!)]);
  const send = async (e: Event) => {
    e.preventDefault();
    const question = message.trim();
    if (!question || busy) return;
    setError(undefined);
    setMessage('');
    const history = historyOf(turns);
    setTurns((ts) => [...ts, { question, parts: [], state: 'streaming' }]);
    try {
      await postStream(
        `/api/agents/${encodeURIComponent(id)}/chat`,
        { message: question, ...(history.length ? { history } : {}) },
        {
          'tools.discovered': (d) => update((t) => ({ ...t, tools: d.tools.length })),
          'tool.started': (d) =>
            update((t) => ({
              ...t,
              parts: [...t.parts, { kind: 'tool', key: d.executionId ?? `${t.parts.length}`, name: d.name, params: d.params, state: 'running' }],
            })),
          'tool.completed': (d) =>
            update((t) => {
              const matches = (p: Part) => p.kind === 'tool' && p.state === 'running' && (d.executionId ? p.key === d.executionId : p.name === d.name);
              let i = t.parts.length - 1;
              while (i >= 0 && !matches(t.parts[i]!)) i--;
              if (i < 0) return t;
              const done: ToolCall = {
                ...(t.parts[i] as ToolCall),
                state: d.error ? 'failed' : 'succeeded',
                output: d.output,
                error: d.error,
                ms: d.executionTimeMs,
              };
              return { ...t, parts: [...t.parts.slice(0, i), done, ...t.parts.slice(i + 1)] };
            }),
          'message.delta': (d) =>
            update((t) => {
              const last = t.parts.at(-1);
              if (last?.kind === 'text') return { ...t, parts: [...t.parts.slice(0, -1), { kind: 'text', text: last.text + d.text }] };
              return { ...t, parts: [...t.parts, { kind: 'text', text: d.text }] };
            }),
          error: (d) => update((t) => ({ ...t, state: 'failed', error: d.message })),
          done: () => update((t) => ({ ...t, state: t.state === 'failed' ? 'failed' : 'done' })),
        },
      );
      update((t) => (t.state === 'streaming' ? { ...t, state: 'failed', error: 'The stream ended early' } : t));
    } catch (err) {
      setTurns((ts) => ts.slice(0, -1));
      setMessage(question);
      setError(err);
    }
    input.current?.focus();
  };
  return (
    <section aria-labelledby="chat-h">
      <h2 id="chat-h">Chat</h2>
      <ol class="chat" aria-busy={busy} data-testid="transcript">
        {turns.map((t) => (
          <li class="turn">
            <p class="bubble you">
              <span class="visually-hidden">You: </span>
              {t.question}
            </p>
            <div class="bubble agent">
              <span class="visually-hidden">Agent: </span>
              {t.parts.map((p) => (p.kind === 'tool' ? <ToolCard call={p} /> : <p class="answer">{p.text}</p>))}
              {t.state === 'streaming' && t.parts.length === 0 && <p class="muted">Thinking…</p>}
              {t.error && (
                <p class="error" role="alert">
                  {t.error}
                </p>
              )}
            </div>
          </li>
        ))}
      </ol>
      <p class="visually-hidden" role="status">
        {busy ? 'The agent is answering' : turns.length ? 'The answer is complete' : ''}
      </p>
      <form onSubmit={send} class="chat-form">
        <div class="field">
          <label for="chat-message">Message</label>
          <textarea
            id="chat-message"
            ref={input}
            rows={3}
            required
            maxLength={8000}
            value={message}
            onInput={(e) => setMessage(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && !e.shiftKey) send(e);
            }}
          />
          <small>Enter sends; Shift+Enter starts a new line. Each message is sent with the conversation so far.</small>
        </div>
        <button type="submit" disabled={busy}>
          Send
        </button>
        <ErrorMessage error={error} />
      </form>
    </section>
  );
}

function ToolCard({ call }: { call: ToolCall }) {
  const label = { running: 'running', succeeded: 'succeeded', failed: 'failed' }[call.state];
  return (
    <div class={`tool-card tool-${call.state}`} data-testid="tool-call">
      <p class="tool-head">
        <span>
          Tool <code>{call.name}</code>
        </span>
        <span class={`badge ${call.state === 'failed' ? 'health-broken' : call.state === 'succeeded' ? 'health-healthy' : 'health-unknown'}`}>
          <span aria-hidden="true">{call.state === 'failed' ? '✗ ' : call.state === 'succeeded' ? '✓ ' : '… '}</span>
          {label}
          {call.ms !== undefined ? ` · ${call.ms} ms` : ''}
        </span>
      </p>
      <details>
        <summary>Input</summary>
        <pre tabIndex={0}>
          <code>{JSON.stringify(call.params, null, 2)}</code>
        </pre>
      </details>
      {call.state === 'succeeded' && (
        <details open>
          <summary>Output</summary>
          <pre tabIndex={0}>
            <code>{JSON.stringify(call.output, null, 2)}</code>
          </pre>
        </details>
      )}
      {call.error && (
        <p>
          <code>{call.error.code}</code>: {call.error.message}
        </p>
      )}
    </div>
  );
}
