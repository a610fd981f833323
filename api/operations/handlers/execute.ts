/**
 * `tools.execute`: one path, two forms told apart by the body. `params` runs the tool once and answers JSON
 * (synchronously, waiting on NOTIFY, or queued with `?wait=false`); `prompt` streams an agent that fills the tool's
 * parameters from the prompt (explicit `parameters` win), runs it and answers. Everything refusable before work
 * starts is a normal 4xx: unknown tool 404 (before the body is looked at), bad body 400, BROKEN tool or missing env
 * 422. This is the REST renderer of an execution's outcome; MCP (api/mcp-call.ts) and the agent stream
 * (api/agent-stream.ts) render theirs for their own callers.
 */
import type { Context } from 'koa';
import { z } from 'zod';
import type { AppDeps } from '../../deps.js';
import { HANDLED, reply, type Reply, type WithStatus } from '../define.js';
import { envSchema, loadTool } from '../shared.js';
import { validate } from '../../validate.js';
import { callerOf } from '../../middleware/auth.js';
import { callerIdentity } from '../../middleware/identity.js';
import { streamAgent } from '../../agent-stream.js';
import { AppError, errors } from '../../../core/errors.js';
import { checkExecutable, enqueueExecution, waitForExecution } from '../../../core/executions.js';
import { executionError, type ExecutionError } from '../../../core/execution-errors.js';
import { isFinalExecution, type ExecutionRow } from '../../../core/repos/executions.js';
import { declaringPackages, envForTool } from '../../../core/tool-env.js';

export const paramsBody = z.object({ params: z.record(z.string(), z.unknown()), env: envSchema.optional() }).strict();
export const promptBody = z
  .object({
    prompt: z.string().trim().min(1, 'must not be empty').max(8000),
    parameters: z.record(z.string(), z.unknown()).optional().meta({ description: 'Parameters the agent must use as given' }),
    env: envSchema.optional(),
  })
  .strict();

/** How long a synchronous call waits beyond the execution's own time limit (queueing, sandbox start). */
const WAIT_SLACK_MS = 15_000;

/** The prompt form rather than the params form: the body has a `prompt`. */
function isPromptBody(body: unknown): boolean {
  return typeof body === 'object' && body !== null && !Array.isArray(body) && 'prompt' in body;
}

const never = (x: never): never => {
  throw new Error(`unhandled execution error code ${String(x)}`);
};

/**
 * A final (or still running) execution as the answer of a synchronous execute: the result, or the tool's own failure
 * as 200 `success: false`; our failures and the limits as errors that name the execution to poll.
 */
export function renderExecuteResult(e: ExecutionRow) {
  if (!isFinalExecution(e)) throw errors.executionTimeout(e.id);
  if (e.status === 'succeeded') return { success: true as const, executionId: e.id, result: e.result, executionTimeMs: e.execution_time_ms ?? 0 };
  const error: ExecutionError =
    e.status === 'timed_out'
      ? { code: 'EXECUTION_TIMEOUT', message: e.error?.message ?? 'The execution timed out' }
      : executionError(e.error ?? { code: 'INTERNAL', message: 'The execution failed' });
  const withId = { executionId: e.id };
  switch (error.code) {
    case 'TOOL_ERROR':
    case 'OUT_OF_MEMORY':
    case 'NOT_FOUND':
      // The call ran (or its tool is gone): an answer about the tool, not a failure of the request.
      return { success: false as const, executionId: e.id, error, executionTimeMs: e.execution_time_ms };
    case 'EXECUTION_TIMEOUT':
      throw new AppError('EXECUTION_TIMEOUT', 504, error.message, undefined, withId);
    case 'PAYLOAD_TOO_LARGE':
      throw new AppError('PAYLOAD_TOO_LARGE', 413, error.message, undefined, withId);
    case 'SANDBOX_ERROR':
    case 'WORKER_LOST':
    case 'WORKER_SHUTDOWN':
    case 'INTERNAL':
      throw new AppError('INTERNAL', 500, error.message, undefined, withId);
    default:
      return never(error.code);
  }
}

export async function execute(ctx: Context, deps: AppDeps, ref: string, wait: boolean): Promise<Reply | WithStatus | typeof HANDLED> {
  const tool = await loadTool(deps, ref);
  const caller = callerOf(ctx);
  if (isPromptBody(ctx.request.body)) {
    const body = validate(promptBody, ctx.request.body, 'body');
    const env = body.env ?? {};
    try {
      // Health and required env are known now; params are not (the agent fills them), so their errors come later.
      checkExecutable(tool, {}, env);
    } catch (err) {
      if (err instanceof AppError && err.code === 'TOOL_UNAVAILABLE') throw err;
    }
    await streamAgent(ctx, deps, { tools: [tool], prompt: body.prompt, explicitParameters: body.parameters, env: { unscoped: env, scoped: {} }, caller });
    return HANDLED;
  }
  const body = validate(paramsBody, ctx.request.body, 'body');
  const limit = { client: callerIdentity(ctx), maxActive: deps.config.MAX_ACTIVE_EXECUTIONS };
  // The call names its package, so `env` is for it; only the variables the tool may read reach it.
  const env = envForTool(tool, { unscoped: body.env ?? {}, scoped: {} }, declaringPackages([tool])).env;
  const execution = await enqueueExecution(deps.db, deps.config.SECRETS_KEY!, { tool, params: body.params, env, caller, origin: 'api', limit });
  if (!wait) return reply(202, { success: true, data: { executionId: execution.id, status: 'queued' } });
  return renderExecuteResult(await waitForExecution(deps, execution.id, deps.config.EXECUTION_TIMEOUT_MS + WAIT_SLACK_MS, deps.shutdown));
}
