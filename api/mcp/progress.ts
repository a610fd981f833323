/**
 * Progress of an imported MCP server's tool call, forwarded to the MCP client that sent `_meta.progressToken` on its
 * `tools/call` (both eras): the worker asks the server for progress only then (the job's `progress` flag) and NOTIFYs
 * it, coalesced (core/executions/progress.ts); this process listens before the call is queued, so that nothing sent
 * after the enqueue is missed, and hands each to `send`, which writes a `notifications/progress` on the call's SSE
 * response. A JavaScript tool has no progress: nothing is asked, nothing is sent.
 */
import type { ProgressToken } from '@modelcontextprotocol/sdk/types.js';
import type { ToolRow } from '../../core/repos/tools.js';
import { isFinalExecution, type ExecutionRow } from '../../core/repos/executions.js';
import type { Notifier } from '../../core/infra/notify.js';
import { subscribeProgress, type Progress } from '../../core/executions/progress.js';

/** How long a finished call waits for its last progress NOTIFY at most (it is normally there already). */
const LAST_PROGRESS_WAIT_MS = 1000;

/** Where a call's progress goes: the client's token and the request's notification sender. */
export interface ProgressSink {
  token: ProgressToken;
  send(notification: { method: 'notifications/progress'; params: Progress & { progressToken: ProgressToken } }): Promise<void>;
}

/** The client's progress token on a request's `_meta`, when it sent a usable one (a string or an integer). */
export function progressTokenOf(meta: unknown): ProgressToken | undefined {
  const t = (meta as { progressToken?: unknown } | undefined)?.progressToken;
  return typeof t === 'string' || (typeof t === 'number' && Number.isInteger(t)) ? t : undefined;
}

/** The sink for a request's progress, when its client sent a token. */
export function progressSink(token: ProgressToken | undefined, send: ProgressSink['send'] | ((n: never) => Promise<void>)): ProgressSink | undefined {
  return token === undefined ? undefined : { token, send: send as ProgressSink['send'] };
}

/** Whether a raw JSON-RPC message is a tools/call that asks for progress (its response must then be SSE). */
export function asksForProgress(body: unknown): boolean {
  const msg = body as { method?: unknown; params?: { _meta?: unknown } } | undefined;
  return msg?.method === 'tools/call' && progressTokenOf(msg.params?._meta) !== undefined;
}

/**
 * Runs the call with its progress forwarded (when the client asked and the tool is an MCP server's): `run` gets what
 * to add to the execution request and to runTool's options.
 */
export async function withProgress<T>(
  notifier: Notifier,
  sink: ProgressSink | undefined,
  tool: ToolRow,
  run: (p: { request: { mcp?: { progress: true } }; onQueued?: (e: ExecutionRow) => void }) => Promise<T & Pick<ExecutionRow, 'status'>>,
): Promise<T> {
  if (!sink || !tool.package_mcp) return run({ request: {} });
  let id: string | undefined;
  // Progress must increase: one that does not (a NOTIFY overtaken by another) is dropped.
  let last = Number.NEGATIVE_INFINITY;
  const sent: Promise<void>[] = [];
  let ended: () => void = () => undefined;
  const end = new Promise<void>((resolve) => (ended = resolve));
  const unsubscribe = await subscribeProgress(
    notifier,
    () => id,
    (p, final) => {
      if (p && p.progress > last) {
        last = p.progress;
        sent.push(sink.send({ method: 'notifications/progress', params: { ...p, progressToken: sink.token } }).catch(() => undefined));
      }
      if (final) ended();
    },
  );
  try {
    const r = await run({ request: { mcp: { progress: true } }, onQueued: (e) => (id = e.id) });
    // The worker marks its last progress before it finishes the execution; the result may be read before that NOTIFY
    // is delivered here: it is waited for (briefly: a worker that died sends none), and what was sent is written first.
    if (isFinalExecution(r)) await Promise.race([end, new Promise((resolve) => setTimeout(resolve, LAST_PROGRESS_WAIT_MS).unref())]);
    await Promise.all(sent);
    return r;
  } finally {
    unsubscribe();
  }
}
