/**
 * MCP cancellation and tasks, mapped onto executions (core/executions/cancel.ts).
 *
 * - `notifications/cancelled` (either era) names the JSON-RPC id of a `tools/call`: the execution that call queued is
 *   cancelled. The endpoint is stateless (each POST its own server), so the call is found by a digest of who called
 *   (the caller identity and key), through which collection, with which id, kept on the execution (`mcp_request`). A
 *   client that merely goes away cancels nothing: its execution keeps running and stays pollable (2025 spec: a
 *   disconnect SHOULD NOT be taken for a cancel).
 * - 2025-11-25 tasks (task-augmented `tools/call`, SDK 1.x's experimental tasks): a call with `params.task` answers at
 *   once with a task whose id is the execution's; `tasks/get` polls it, `tasks/result` waits for and gives its result
 *   (the same result as a plain call), `tasks/cancel` cancels it. Served, and advertised (`capabilities.tasks`, each
 *   tool's `execution.taskSupport: optional`), only to clients of 2025-11-25 in `all` mode; a task is visible only to
 *   the caller who created it (any other: not found). `tasks/list` is not offered.
 */
import crypto from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  CancelTaskRequestSchema,
  ErrorCode,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type ListToolsResult,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import type { Context } from 'koa';
import type { AppDeps } from '../deps.js';
import { cancelExecution, CANCELLED } from '../../core/executions/cancel.js';
import { waitForExecution } from '../../core/executions/executions.js';
import { renderMcp, WAIT_SLACK_MS } from '../../core/executions/tool-calls.js';
import { findActiveByMcpRequest, findExecution, isFinalExecution, type ExecutionRow } from '../../core/repos/executions.js';
import type { CollectionRow } from '../../core/repos/collections.js';
import type { ToolRow } from '../../core/repos/tools.js';
import { callCollectionTool, cancelIfGone, renderCollectionCall, type CallContext } from './call.js';

/** How often a client is asked to poll a task (ms). */
export const TASK_POLL_INTERVAL_MS = 1000;

/** The digest that ties a tools/call's JSON-RPC id to the execution it queued, for that caller and collection only. */
export function mcpRequestKey(call: Pick<CallContext, 'client' | 'caller'>, collectionId: string, requestId: unknown): string {
  return crypto
    .createHash('sha256')
    .update(JSON.stringify([call.client, call.caller?.keyId ?? null, collectionId, requestId ?? null]))
    .digest('hex');
}

/**
 * A `notifications/cancelled` (either era), answered here before any SDK sees it: 202 as for any notification, and the
 * execution its `requestId`'s tools/call queued (this caller's, through this collection) is cancelled. True when the
 * message was one.
 */
export async function answerCancelledNotification(
  ctx: Context,
  deps: AppDeps,
  c: CollectionRow,
  call: Pick<CallContext, 'client' | 'caller'>,
): Promise<boolean> {
  const msg = ctx.request.body as { method?: unknown; id?: unknown; params?: { requestId?: unknown } } | undefined;
  if (msg?.method !== 'notifications/cancelled' || msg.id !== undefined) return false;
  const requestId = msg.params?.requestId;
  if (typeof requestId === 'string' || typeof requestId === 'number') {
    const e = await findActiveByMcpRequest(deps.db, mcpRequestKey(call, c.id, requestId));
    if (e) await cancelExecution(deps, e.id, { waitMs: 0 });
  }
  ctx.status = 202;
  ctx.body = null;
  return true;
}

/** Whether this 2025-era request is one of a 2025-11-25 client in `all` mode: the one served tasks. */
export function servesTasks2025(headers: Context['req']['headers'], body: unknown, mode: string): boolean {
  if (mode !== 'all') return false;
  const msg = body as { method?: unknown; params?: { protocolVersion?: unknown } } | undefined;
  if (msg?.method === 'initialize') return msg.params?.protocolVersion === '2025-11-25';
  return headers['mcp-protocol-version'] === '2025-11-25';
}

/** The server capability of 2025-11-25 tasks as served here: task-augmented tools/call, and cancel (no list). */
export const TASKS_CAPABILITY_2025 = { tasks: { cancel: {}, requests: { tools: { call: {} } } } };

const iso = (d: Date | null) => new Date(d ?? Date.now()).toISOString();

/** An execution as a 2025-11-25 task. */
export function taskOf(e: ExecutionRow, ttlMs: number): Task {
  const status: Task['status'] =
    e.status === 'queued' || e.status === 'running'
      ? 'working'
      : e.status === 'succeeded'
        ? 'completed'
        : e.error?.code === CANCELLED.code
          ? 'cancelled'
          : 'failed';
  return {
    taskId: e.id,
    status,
    ...(e.error ? { statusMessage: `${e.error.code}: ${e.error.message}` } : {}),
    createdAt: iso(e.created_at),
    lastUpdatedAt: iso(e.completed_at ?? e.started_at ?? e.created_at),
    ttl: ttlMs,
    pollInterval: TASK_POLL_INTERVAL_MS,
  };
}

/** The caller's own task (an execution this caller queued over MCP); any other id is not found, whoever holds it. */
async function ownTask(deps: AppDeps, call: Pick<CallContext, 'client'>, taskId: string): Promise<ExecutionRow> {
  const e = /^[0-9a-f-]{36}$/i.test(taskId) ? await findExecution(deps.db, taskId) : undefined;
  if (e?.origin !== 'mcp' || e.caller !== call.client) throw new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);
  return e;
}

/**
 * Serves 2025-11-25 tasks on a collection's 1.x server: `plainCall` and `plainList` are its tools/call and tools/list
 * handlers, wrapped here (a call without `task` is served by `plainCall` as before).
 */
export function serveTasks2025(
  server: Server,
  o: {
    call: Omit<CallContext, 'signal'>;
    collection: CollectionRow;
    tools: () => Promise<Map<string, ToolRow>>;
    plainCall: Parameters<Server['setRequestHandler']>[1];
    plainList: () => Promise<ListToolsResult>;
  },
): void {
  const { deps } = o.call;
  const ttlMs = deps.config.RETENTION_RESULTS_DAYS * 86_400_000;
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const listed = await o.plainList();
    return { ...listed, tools: listed.tools.map((t) => ({ ...t, execution: { ...t.execution, taskSupport: 'optional' as const } })) };
  });
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    if (!req.params.task) return (o.plainCall as (r: typeof req, x: typeof extra) => Promise<CallToolResult>)(req, extra);
    // Queued, not waited for: the task is the execution, created (durably) before the answer.
    let queued: ExecutionRow | undefined;
    const refused = await callCollectionTool(
      {
        ...o.call,
        signal: deps.shutdown,
        wait: false,
        onQueued: (e) => {
          queued = e;
        },
        mcpRequest: mcpRequestKey(o.call, o.collection.id, extra.requestId),
      },
      await o.tools(),
      req.params.name,
      req.params.arguments,
    );
    if (!queued) {
      // Refused before anything was queued (missing env, invalid params, a BROKEN tool): no task to give.
      const text = refused.content.map((b) => (b.type === 'text' ? b.text : '')).join(' ');
      throw new McpError(ErrorCode.InvalidParams, text || 'The call was refused');
    }
    return { task: taskOf(queued, ttlMs) };
  });
  server.setRequestHandler(GetTaskRequestSchema, async (req) => taskOf(await ownTask(deps, o.call, req.params.taskId), ttlMs));
  server.setRequestHandler(GetTaskPayloadRequestSchema, async (req, extra) => {
    let e = await ownTask(deps, o.call, req.params.taskId);
    // Waits for the end (tasks/result blocks until the task is terminal), woken by the execution's NOTIFY.
    while (!isFinalExecution(e) && !extra.signal.aborted && !deps.shutdown.aborted) {
      e = await waitForExecution(deps, e.id, deps.config.EXECUTION_TIMEOUT_MS + WAIT_SLACK_MS, extra.signal);
    }
    if (!isFinalExecution(e)) throw new McpError(ErrorCode.InvalidRequest, `Task ${e.id} is still working; ask again`);
    const tool = [...(await o.tools()).values()].find((t) => t.id === e.tool_id);
    const result = tool ? renderCollectionCall(e, tool) : renderMcp(e);
    return { ...result, _meta: { ...result._meta, 'io.modelcontextprotocol/related-task': { taskId: e.id } } };
  });
  server.setRequestHandler(CancelTaskRequestSchema, async (req) => {
    const e = await ownTask(deps, o.call, req.params.taskId);
    if (isFinalExecution(e)) throw new McpError(ErrorCode.InvalidParams, `Cannot cancel task in terminal status: ${taskOf(e, ttlMs).status}`);
    const outcome = await cancelExecution(deps, e.id);
    return taskOf(outcome?.execution ?? e, ttlMs);
  });
}

// ---- 2026-07-28: the io.modelcontextprotocol/tasks extension (SEP-2663) ----

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** A call not final within this long is answered as a task (to a client that declared the extension). */
export const TASK_AFTER_MS = 2000;

/** Whether the request's client capabilities (its `_meta` envelope) declare the tasks extension. */
export function asksForTasks2026(capabilities: unknown): boolean {
  const ext = (capabilities as { extensions?: Record<string, unknown> } | undefined)?.extensions;
  return !!ext && typeof ext === 'object' && Object.hasOwn(ext, TASKS_EXTENSION);
}

/** The 2026 `Task` of an execution (SEP-2663: ttlSeconds, pollIntervalMilliseconds). */
function task2026(e: ExecutionRow, ttlSeconds: number) {
  const status = !isFinalExecution(e) ? 'working' : e.error?.code === CANCELLED.code ? 'cancelled' : 'completed';
  return {
    taskId: e.id,
    status,
    ...(status === 'cancelled' ? { statusMessage: e.error!.message } : {}),
    createdAt: iso(e.created_at),
    lastUpdatedAt: iso(e.completed_at ?? e.started_at ?? e.created_at),
    ttlSeconds,
    pollIntervalMilliseconds: TASK_POLL_INTERVAL_MS,
  } as const;
}

/**
 * A 2026 tools/call from a client that declared the extension: queued, waited for TASK_AFTER_MS, and answered with its
 * result when it is final by then (or was refused), else with `resultType: "task"` (the task is the execution).
 */
export async function callOrTask2026(
  call: CallContext,
  tools: Map<string, ToolRow>,
  name: string,
  args: Record<string, unknown> | undefined,
): Promise<CallToolResult | ({ resultType: 'task' } & ReturnType<typeof task2026>)> {
  let queued: ExecutionRow | undefined;
  const early = await callCollectionTool(
    {
      ...call,
      wait: false,
      onQueued: (e) => {
        queued = e;
      },
    },
    tools,
    name,
    args,
  );
  if (!queued) return early;
  const e = await waitForExecution(call.deps, queued.id, TASK_AFTER_MS, call.signal);
  // Gone within the grace: no task reaches anyone, and a closed stream is the cancel in this era.
  await cancelIfGone(call, e);
  const tool = tools.get(name)!;
  if (isFinalExecution(e)) return renderCollectionCall(e, tool);
  return { resultType: 'task', ...task2026(e, call.deps.config.RETENTION_RESULTS_DAYS * 86_400) };
}

/** What a 2026 server needs to answer tasks/get and tasks/cancel (registered with explicit schemas, as the SDK asks). */
export interface Tasks2026 {
  call: Omit<CallContext, 'signal'>;
  tools: () => Promise<Map<string, ToolRow>>;
}

/**
 * `tasks/get`: the caller's own task, with its result inline once final (a tool's error too, `isError`: SEP-2663's
 * `completed`); anyone else's or an unknown id is -32602. `tasks/cancel`: an empty acknowledgement whatever the id
 * (as SEP-2663 says); the caller's own working task is cancelled.
 */
export function tasks2026Handlers(t: Tasks2026) {
  const { deps } = t.call;
  const ttlSeconds = deps.config.RETENTION_RESULTS_DAYS * 86_400;
  const own = async (taskId: unknown): Promise<ExecutionRow | undefined> => {
    if (typeof taskId !== 'string' || !/^[0-9a-f-]{36}$/i.test(taskId)) return undefined;
    const e = await findExecution(deps.db, taskId);
    return e?.origin === 'mcp' && e.caller === t.call.client ? e : undefined;
  };
  return {
    async get(taskId: unknown) {
      const e = await own(taskId);
      if (!e) return undefined;
      const task = task2026(e, ttlSeconds);
      if (task.status !== 'completed') return task;
      const tool = [...(await t.tools()).values()].find((x) => x.id === e.tool_id);
      return { ...task, result: tool ? renderCollectionCall(e, tool) : renderMcp(e) };
    },
    async cancel(taskId: unknown) {
      const e = await own(taskId);
      if (e && !isFinalExecution(e)) await cancelExecution(deps, e.id, { waitMs: 0 });
      return {};
    },
  };
}
