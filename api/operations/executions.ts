/**
 * Executions: run a tool (`tools.execute`: JSON for a `params` body, an agent stream for a `prompt` body), read one
 * execution by id, and stream its status changes (replaying what already happened). Executions made with a key are
 * visible to that key's user only; anonymous ones to whoever holds the id.
 */
import type { Context } from 'koa';
import { z } from 'zod';
import type { AppDeps } from '../deps.js';
import { defineOperation, HANDLED, reply, type Operation } from './define.js';
import { ok, timestamp, uuid } from './envelope.js';
import { agentStreamEvents } from './agent-events.js';
import { execute, paramsBody, promptBody } from './handlers/execute.js';
import { callerOf } from '../middleware/auth.js';
import { streamDerived, type StreamEvent } from '../streams/run-events.js';
import { errors } from '../../core/infra/errors.js';
import { EXECUTION_ERROR_CODES, executionError } from '../../core/executions/execution-errors.js';
import { EXECUTION_STATUSES } from '../../core/types.js';
import { findExecution, isFinalExecution, type ExecutionRow } from '../../core/repos/executions.js';
import { cancelExecution } from '../../core/executions/cancel.js';

// ---- response schemas and mapper ----

const executionErrorSchema = z.object({ code: z.enum(EXECUTION_ERROR_CODES), message: z.string() });

const executionSchema = z.object({
  id: uuid,
  toolId: uuid,
  packageVersion: z.string().optional().meta({ description: "The version of the tool's package that ran (or will run)" }),
  status: z.enum(EXECUTION_STATUSES),
  result: z.unknown().optional().meta({ description: 'When succeeded: what the tool returned' }),
  error: executionErrorSchema.optional().meta({ description: 'When failed or timed out' }),
  executionTimeMs: z.number().int().optional(),
  createdAt: timestamp,
  startedAt: timestamp.optional(),
  completedAt: timestamp.optional(),
});

const iso = (d: Date) => new Date(d).toISOString();

export function toExecution(e: ExecutionRow): z.infer<typeof executionSchema> {
  return {
    id: e.id,
    toolId: e.tool_id,
    ...(e.package_version ? { packageVersion: e.package_version } : {}),
    status: e.status,
    ...(e.status === 'succeeded' ? { result: e.result } : {}),
    ...(e.error ? { error: executionError(e.error) } : {}),
    ...(e.execution_time_ms !== null ? { executionTimeMs: e.execution_time_ms } : {}),
    createdAt: iso(e.created_at),
    ...(e.started_at ? { startedAt: iso(e.started_at) } : {}),
    ...(e.completed_at ? { completedAt: iso(e.completed_at) } : {}),
  };
}

const executeResultSchema = z.union([
  z.object({
    success: z.literal(true),
    executionId: uuid,
    result: z.unknown().meta({ description: 'What the tool returned' }),
    executionTimeMs: z.number().int(),
  }),
  z.object({
    success: z.literal(false),
    executionId: uuid,
    error: executionErrorSchema.meta({ description: 'The tool threw (TOOL_ERROR), ran out of memory, or no longer exists' }),
    executionTimeMs: z.number().int().nullable(),
  }),
]);

const executionEvents = {
  status: z.union([z.object({ id: uuid, status: z.enum(['queued', 'running']), at: timestamp }), executionSchema]).meta({
    description: '`{ id, status, at }` when queued and when running; the whole execution once final',
  }),
  done: z.object({ status: z.enum(EXECUTION_STATUSES) }),
};

/** The events of an execution so far, derived from its row (so a replay or a reconnect sees the same ids). */
function eventsOf(e: ExecutionRow): StreamEvent[] {
  const events: StreamEvent[] = [{ event: 'status', data: { id: e.id, status: 'queued', at: iso(e.created_at) } }];
  if (e.started_at) events.push({ event: 'status', data: { id: e.id, status: 'running', at: iso(e.started_at) } });
  if (isFinalExecution(e)) events.push({ event: 'status', data: toExecution(e) }, { event: 'done', data: { status: e.status } });
  return events;
}

async function loadVisibleExecution(ctx: Context, deps: AppDeps, id: string): Promise<ExecutionRow> {
  const e = await findExecution(deps.db, id);
  if (!e || (e.user_id && e.user_id !== callerOf(ctx)?.userId)) throw errors.notFound('Execution', id);
  if (e.purged_at) {
    throw errors.gone(
      `Execution '${id}' finished more than ${deps.config.RETENTION_RESULTS_DAYS} days ago; its params and result were deleted (RETENTION_RESULTS_DAYS)`,
    );
  }
  return e;
}

/**
 * `executions.cancel` (beyond the contract): the caller who started it, or the admin; anyone else 404 as a read would
 * be (an anonymous execution, like its read, is open to whoever holds its id). 409 when it is final already.
 */
async function cancelVisibleExecution(ctx: Context, deps: AppDeps, id: string) {
  const e = await findExecution(deps.db, id);
  if (!e || (ctx.state.admin !== true && e.user_id && e.user_id !== callerOf(ctx)?.userId)) throw errors.notFound('Execution', id);
  const outcome = await cancelExecution(deps, id);
  if (!outcome) throw errors.notFound('Execution', id);
  if (outcome.kind === 'final') throw errors.conflict(`Execution '${id}' is already final (${outcome.execution.status}); nothing was cancelled`);
  // Final (cancelled) now: 200; still running after the wait, the cancel on its way to its worker: 202.
  return reply(isFinalExecution(outcome.execution) ? 200 : 202, { success: true, data: toExecution(outcome.execution) });
}

// ---- input schemas ----

const executeParams = z.object({
  slug: z.string().meta({ description: '`<package>/<tool>` (scoped: `@scope/pkg/tool`), `<package>::<tool>`, or the tool id' }),
});
const executeQuery = z.object({
  wait: z.enum(['true', 'false']).optional().meta({ description: '`false`: answer 202 at once with the execution to poll (params form)' }),
});
const idParams = z.object({ id: z.string().uuid('must be an execution id') });

/** Refused before any handler: a malformed URL or body (400); on methods that may carry a body, one over 1 MiB (413) or not JSON (415). */
const REQUEST = [400];
const BODY = [400, 413, 415];
const base = { errorShape: 'A', auth: 'public' } as const;

export const executionOperations: Operation[] = [
  defineOperation({
    ...base,
    id: 'tools.execute',
    tag: 'Tools',
    method: 'post',
    path: '/api/tools/execute/*slug',
    summary: 'Runs a tool: `params` → its result as JSON; `prompt` → an agent fills the parameters, as a stream',
    description:
      "The two forms are told apart by the body. `{ params, env? }`: params are validated against the tool's JSON Schema before anything is queued; the answer comes once the sandboxed call ends (a tool that throws: 200 with `success: false`). `{ prompt, parameters?, env? }`: `text/event-stream` of the agent's tool calls and answer. `env` values are never stored and never appear in a response.",
    params: executeParams,
    query: executeQuery,
    documentedBody: z.union([paramsBody, promptBody]),
    responses: {
      200: {
        json: executeResultSchema,
        stream: agentStreamEvents,
        description:
          '`params`: the result (`application/json`); `prompt`: `tools.discovered`, `tool.started` / `tool.completed`, `message.delta`, then `done`; on failure `error` then `done` (`text/event-stream`)',
      },
      202: ok(z.object({ executionId: uuid, status: z.literal('queued') })),
    },
    errors: [...BODY, 404, 422, 504],
    handler: async (ctx, deps, { params, query }) => execute(ctx, deps, params.slug, query.wait !== 'false'),
  }),
  defineOperation({
    ...base,
    id: 'executions.get',
    tag: 'Executions',
    method: 'get',
    path: '/api/executions/:id',
    summary: 'One execution: its status, and its result or error once final',
    params: idParams,
    responses: { 200: ok(executionSchema) },
    errors: [...REQUEST, 404, 410],
    handler: async (ctx, deps, { params }) => ({ success: true, data: toExecution(await loadVisibleExecution(ctx, deps, params.id)) }),
  }),
  defineOperation({
    ...base,
    id: 'executions.cancel',
    tag: 'Executions',
    method: 'post',
    path: '/api/executions/:id/cancel',
    summary: 'Cancels an execution: a queued one at once, a running one by stopping its sandbox (beyond the contract)',
    description:
      'The execution ends `failed` with `error.code` CANCELLED (the status set is closed). Only the caller who started it, or the admin; anyone else gets 404 as a read would. A final execution: 409 CONFLICT and nothing changes. A cancel is not counted as the tool failing (no failure in its statistics or trending).',
    params: idParams,
    responses: {
      200: ok(executionSchema).meta({ description: 'Cancelled: the execution, final' }),
      202: ok(executionSchema).meta({ description: 'Still running: its worker has been told and stops it' }),
    },
    errors: [...REQUEST, 404, 409],
    handler: async (ctx, deps, { params }) => cancelVisibleExecution(ctx, deps, params.id),
  }),
  defineOperation({
    ...base,
    id: 'executions.events',
    tag: 'Executions',
    method: 'get',
    path: '/api/executions/:id/events',
    summary: "An execution's status changes as server-sent events, replaying what already happened",
    params: idParams,
    responses: { 200: { stream: executionEvents, description: '`status` when queued, running and final, then `done`' } },
    errors: [...REQUEST, 404, 410],
    handler: async (ctx, deps, { params }) => {
      await loadVisibleExecution(ctx, deps, params.id);
      await streamDerived(ctx, deps, params.id, async () => eventsOf((await findExecution(deps.db, params.id))!));
      return HANDLED;
    },
  }),
];
