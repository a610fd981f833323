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
import { openSse } from '../sse.js';
import { AppError, errors } from '../../core/errors.js';
import { CHANNELS } from '../../core/notify.js';
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

const STATUS_RANK: Record<string, number> = { queued: 1, running: 2, succeeded: 3, failed: 3, timed_out: 3 };

export function executionRoutes(router: Router, deps: AppDeps) {
  router.post('/api/tools/execute/*slug', async (ctx: Context) => {
    if (isPromptBody(ctx.request.body)) return executePrompt(ctx, deps); // 24: the agent stream
    const q = validate(executeQuery, ctx.query, 'query');
    const tool = await loadTool(deps, String(ctx.params.slug));
    const body = validate(executeBody, ctx.request.body, 'body');
    const caller = callerOf(ctx);
    const env = body.env ?? {};
    const execution = await enqueueExecution(deps.db, deps.config.SECRETS_KEY!, { tool, params: body.params, env, caller, origin: 'api' });
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
    const sse = openSse(ctx);
    let sent = 0;
    const emit = async () => {
      const e = (await findExecution(deps.db, id))!;
      const rank = STATUS_RANK[e.status];
      if (rank >= 1 && sent < 1) sse.send('status', { id: e.id, status: 'queued', at: map.iso(e.created_at) }, 1);
      if (rank >= 2 && sent < 2 && e.started_at) sse.send('status', { id: e.id, status: 'running', at: map.iso(e.started_at) }, 2);
      if (rank === 3 && sent < 3) {
        sse.send('status', executionView(e), 3);
        sse.send('done', { status: e.status }, 4);
        sse.close();
      }
      sent = Math.max(sent, rank);
    };
    try {
      const unsubscribe = await deps.notifier.subscribe(CHANNELS.jobs, (p) => {
        if (p.includes(id)) void emit().catch(() => sse.close());
      });
      await emit();
      await sse.done;
      unsubscribe();
    } catch (err) {
      deps.logger.error({ err, executionId: id }, 'execution stream failed');
      sse.send('error', { code: 'INTERNAL', message: 'The stream failed' });
      sse.close();
    }
  });
}
