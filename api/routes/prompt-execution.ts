/**
 * Prompt execution (24): `POST /api/tools/execute/<package>/<tool>` with `{ prompt, parameters?, env? }` streams an
 * agent that fills the tool's parameters from the prompt (explicit `parameters` win), runs it and answers. The same
 * path as execute (25), told apart by the body (`prompt` here, `params` there). Everything that can be refused before
 * the stream starts is a normal 4xx (shape A): unknown tool 404, bad body 400, BROKEN tool or missing env 422.
 */
import type { Context } from 'koa';
import { z } from 'zod';
import type { AppDeps } from '../deps.js';
import { validate } from '../validate.js';
import { callerOf } from '../middleware/auth.js';
import { streamAgent } from '../agent-stream.js';
import { AppError } from '../../core/errors.js';
import { checkExecutable } from '../../core/executions.js';
import { envSchema } from './executions.js';
import { loadTool } from './tools.js';

// Built on first use: executions.ts (which owns envSchema) imports this module, so it is not initialised yet here.
let promptBody: ReturnType<typeof makePromptBody> | undefined;
function makePromptBody() {
  return z
    .object({
      prompt: z.string().trim().min(1, 'must not be empty').max(8000),
      parameters: z.record(z.string(), z.unknown()).optional(),
      env: envSchema.optional(),
    })
    .strict();
}

/** 24 rather than 25: the body has a `prompt`. */
export function isPromptBody(body: unknown): boolean {
  return typeof body === 'object' && body !== null && !Array.isArray(body) && 'prompt' in body;
}

export async function executePrompt(ctx: Context, deps: AppDeps): Promise<void> {
  const tool = await loadTool(deps, String(ctx.params.slug));
  const body = validate((promptBody ??= makePromptBody()), ctx.request.body, 'body');
  const env = body.env ?? {};
  try {
    // Health and required env are known now; params are not (the agent fills them), so their errors come later.
    checkExecutable(tool, {}, env);
  } catch (err) {
    if (err instanceof AppError && err.code === 'TOOL_UNAVAILABLE') throw err;
  }
  await streamAgent(ctx, deps, {
    tools: [tool],
    prompt: body.prompt,
    explicitParameters: body.parameters,
    env,
    envFor: (_tool, e) => e,
    caller: callerOf(ctx),
  });
}
