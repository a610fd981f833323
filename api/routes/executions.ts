/**
 * Executions: run a tool (25) synchronously (waiting on NOTIFY), or queued (`?wait=false`, 202); read one by id;
 * stream its status changes (SSE, replaying what already happened).
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { AppDeps } from '../deps.js';
import { validate } from '../validate.js';
import { callerOf } from '../middleware/auth.js';
import { callerIdentity } from '../middleware/identity.js';
import { streamDerived, type StreamEvent } from '../run-events.js';
import { AppError, errors } from '../../core/errors.js';
import { enqueueExecution, waitForExecution } from '../../core/executions.js';
import { findExecution, isFinalExecution, type ExecutionRow } from '../../core/repos/executions.js';
import { loadTool } from './tools.js';
import { executePrompt, isPromptBody } from './prompt-execution.js';
import * as map from '../mappers.js';

export const envSchema = z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'), z.string().max(8192));
const executeBody = z.object({ params: z.record(z.string(), z.unknown()), env: envSchema.optional() }).strict();
const executeQuery = z.object({ wait: z.enum(['true', 'false']).optional() });
const idParams = z.object({ id: z.string().uuid('must be an execution id') });

/** How long a synchronous call waits beyond the execution's own time limit (queueing, sandbox start). */
const WAIT_SLACK_MS = 15_000;

export function executionView(e: ExecutionRow) {
  return {
    id: e.id,
    toolId: e.tool_id,
    status: e.status,
    ...(e.status === 'succeeded' ? { result: e.result } : {}),
    ...(e.error ? { error: e.error } : {}),
    ...(e.execution_time_ms !== null ? { executionTimeMs: e.execution_time_ms } : {}),
    createdAt: map.iso(e.created_at),
    ...(e.started_at ? { startedAt: map.iso(e.started_at) } : {}),
    ...(e.completed_at ? { completedAt: map.iso(e.completed_at) } : {}),
  };
}

/** The response of a synchronous execute (25) for a final (or still running) execution. */
export function renderExecuteResult(ctx: Context, e: ExecutionRow): void {
  if (!isFinalExecution(e)) throw errors.executionTimeout(e.id);
  if (e.status === 'succeeded') {
    ctx.body = { success: true, executionId: e.id, result: e.result, executionTimeMs: e.execution_time_ms };
    return;
  }
  const code = e.error?.code ?? 'INTERNAL';
  if (e.status === 'timed_out') throw new AppError('EXECUTION_TIMEOUT', 504, e.error?.message ?? 'The execution timed out', undefined, { executionId: e.id });
  if (code === 'PAYLOAD_TOO_LARGE') throw new AppError('PAYLOAD_TOO_LARGE', 413, e.error!.message, undefined, { executionId: e.id });
  if (code === 'SANDBOX_ERROR' || code.startsWith('WORKER_')) {
    throw new AppError('INTERNAL', 500, e.error?.message ?? 'The execution failed', undefined, { executionId: e.id });
  }
  ctx.body = { success: false, executionId: e.id, error: e.error, executionTimeMs: e.execution_time_ms };
}

/** Executions made with a key are visible to that key's user only; anonymous ones to whoever holds the id. */
async function loadVisibleExecution(ctx: Context, deps: AppDeps, id: string): Promise<ExecutionRow> {
  const e = await findExecution(deps.db, id);
  if (!e || (e.user_id && e.user_id !== callerOf(ctx)?.userId)) throw errors.notFound('Execution', id);
  return e;
}

/** The events of an execution so far, derived from its row (so a replay or a reconnect sees the same ids). */
function executionEvents(e: ExecutionRow): StreamEvent[] {
  const events: StreamEvent[] = [{ event: 'status', data: { id: e.id, status: 'queued', at: map.iso(e.created_at) } }];
  if (e.started_at) events.push({ event: 'status', data: { id: e.id, status: 'running', at: map.iso(e.started_at) } });
  if (isFinalExecution(e)) events.push({ event: 'status', data: executionView(e) }, { event: 'done', data: { status: e.status } });
  return events;
}

export function executionRoutes(router: Router, deps: AppDeps) {
  router.post('/api/tools/execute/*slug', async (ctx: Context) => {
    if (isPromptBody(ctx.request.body)) return executePrompt(ctx, deps); // 24: the agent stream
    const q = validate(executeQuery, ctx.query, 'query');
    const tool = await loadTool(deps, String(ctx.params.slug));
    const body = validate(executeBody, ctx.request.body, 'body');
    const caller = callerOf(ctx);
    const env = body.env ?? {};
    const limit = { client: callerIdentity(ctx), maxActive: deps.config.MAX_ACTIVE_EXECUTIONS };
    const execution = await enqueueExecution(deps.db, deps.config.SECRETS_KEY!, { tool, params: body.params, env, caller, origin: 'api', limit });
    if (q.wait === 'false') {
      ctx.status = 202;
      ctx.body = { success: true, data: { executionId: execution.id, status: 'queued' } };
      return;
    }
    const waitMs = deps.config.EXECUTION_TIMEOUT_MS + WAIT_SLACK_MS;
    renderExecuteResult(ctx, await waitForExecution(deps, execution.id, waitMs));
  });

  router.get('/api/executions/:id', async (ctx) => {
    const { id } = validate(idParams, ctx.params, 'params');
    ctx.body = { success: true, data: executionView(await loadVisibleExecution(ctx, deps, id)) };
  });

  router.get('/api/executions/:id/events', async (ctx) => {
    const { id } = validate(idParams, ctx.params, 'params');
    await loadVisibleExecution(ctx, deps, id);
    await streamDerived(ctx, deps, id, async () => executionEvents((await findExecution(deps.db, id))!));
  });
}
