/**
 * `tools.execute`: one path, two forms told apart by the body. `params` runs the tool once and answers JSON
 * (synchronously, waiting on NOTIFY, or queued with `?wait=false`); `prompt` streams an agent that fills the tool's
 * parameters from the prompt (explicit `parameters` win), runs it and answers. Everything refusable before work
 * starts is a normal 4xx: unknown tool 404 (before the body is looked at), bad body 400, BROKEN tool or missing env
 * 422. The call is run and rendered by core/executions/tool-calls.ts, the one path every caller of a tool takes.
 */
import type { Context } from 'koa';
import { z } from 'zod';
import type { AppDeps } from '../../deps.js';
import { HANDLED, reply, type Reply, type WithStatus } from '../define.js';
import { envSchema, loadTool } from '../shared.js';
import { validate } from '../../validate.js';
import { callerOf } from '../../middleware/auth.js';
import { callerIdentity } from '../../middleware/identity.js';
import { streamAgent } from '../../streams/agent-stream.js';
import { AppError } from '../../../core/infra/errors.js';
import { checkExecutable } from '../../../core/executions/executions.js';
import { renderRest, runTool } from '../../../core/executions/tool-calls.js';
import { declaringPackages, envForTool } from '../../../core/tools/tool-env.js';

export const paramsBody = z.object({ params: z.record(z.string(), z.unknown()), env: envSchema.optional() }).strict();
export const promptBody = z
  .object({
    prompt: z.string().trim().min(1, 'must not be empty').max(8000),
    parameters: z.record(z.string(), z.unknown()).optional().meta({ description: 'Parameters the agent must use as given' }),
    env: envSchema.optional(),
  })
  .strict();

/** The prompt form rather than the params form: the body has a `prompt`. */
function isPromptBody(body: unknown): boolean {
  return typeof body === 'object' && body !== null && !Array.isArray(body) && 'prompt' in body;
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
  const execution = await runTool(deps, { tool, params: body.params, env, caller, origin: 'api', limit }, { wait, signal: deps.shutdown });
  await deps.learning.use(caller?.userId, tool.id);
  if (!wait) return reply(202, { success: true, data: { executionId: execution.id, status: 'queued' } });
  return renderRest(execution);
}
