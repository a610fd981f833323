/**
 * The agent execution stream, shared by prompt execution (`tools.execute` with a prompt) and agent chat (`agents.chat`): an agent (the configured provider, or
 * the offline one) gets a set of tools; every tool call it makes goes through the same path as `tools.execute` —
 * runTool in core/executions/tool-calls.ts (health, env, params against the JSON Schema, the queue and the sandbox) — and the stream says
 * so as it happens: `tools.discovered`, `tool.started`, `tool.completed`, `message.delta` as text arrives, then
 * `done` { usage }; on failure `error` { code, message } then `done`. No event carries an env value.
 */
import { anySignal } from 'any-signal';
import type { Context } from 'koa';
import type { AppDeps } from '../deps.js';
import { openSse } from './sse.js';
import { agentToolSet, type AgentToolSet } from '../../core/agents/agent-tools.js';
import { AppError } from '../../core/infra/errors.js';
import { redactSecrets } from '../../core/executions/executions.js';
import { callResultOf, runTool } from '../../core/executions/tool-calls.js';
import { callerIdentity } from '../middleware/identity.js';
import { LlmError, llmLogFields } from '../../core/llm/index.js';
import type { ChatTurn, ToolCallResult } from '../../core/llm/provider.js';
import type { ToolRow } from '../../core/repos/tools.js';
import type { Caller } from '../../core/types.js';
import { allEnvValues, declaringPackages, envForTool, type GivenEnv } from '../../core/tools/tool-env.js';

/** Model steps an agent may take per request (as a scenario run). */
export const AGENT_MAX_STEPS = 10;

export interface AgentStreamRequest {
  tools: ToolRow[];
  prompt: string;
  /** Earlier turns of the conversation (agent chat), oldest first. */
  history?: ChatTurn[];
  system?: string;
  model?: string;
  explicitParameters?: Record<string, unknown>;
  /**
   * Env for the calls, scoped per package (core/tools/tool-env.ts): a tool gets the values scoped to its package, and
   * unscoped ones only for names no other package of `tools` declares.
   */
  env: GivenEnv;
  caller?: Caller;
}

type Send = (event: string, data: unknown) => void;

async function callTool(
  deps: AppDeps,
  send: Send,
  signal: AbortSignal,
  set: AgentToolSet & { declarers: Map<string, string[]> },
  req: AgentStreamRequest,
  limit: { client: string; maxActive: number },
  name: string,
  input: unknown,
): Promise<ToolCallResult> {
  const tool = set.byName.get(name);
  const toolId = tool?.id ?? null;
  const refuse = (code: string, message: string) => {
    const result = { error: { code, message }, executionTimeMs: 0 };
    send('tool.started', { executionId: null, toolId, name, params: input });
    send('tool.completed', { executionId: null, toolId, name, error: result.error, executionTimeMs: 0 });
    return result;
  };
  if (!tool) return refuse('UNKNOWN_TOOL', `No tool named '${name}' is offered`);
  // Once the server is stopping (or the client gone), no new call starts: it would run with nobody to answer.
  if (signal.aborted) return refuse('SERVICE_UNAVAILABLE', 'The server is shutting down; no new tool call starts');
  let queued = false;
  let result: ToolCallResult;
  try {
    const execution = await runTool(
      deps,
      {
        tool,
        params: input ?? {},
        env: envForTool(tool, req.env, set.declarers).env,
        caller: req.caller,
        origin: 'agent',
        // The caller's cap on queued work and its fair share count agent calls like any other.
        limit,
      },
      {
        signal,
        onQueued: (e) => {
          queued = true;
          send('tool.started', { executionId: e.id, toolId, name, params: input });
        },
      },
    );
    result = callResultOf(execution);
  } catch (err) {
    if (!queued && err instanceof AppError && err.status < 500) return refuse(err.code, err.message);
    throw err;
  }
  const { executionId, executionTimeMs, ...outcome } = result;
  send('tool.completed', { executionId, toolId, name, ...outcome, executionTimeMs });
  return result;
}

/** The `error` event: an LlmError's message is the short one meant for users (its vendor detail is logged only). */
function failure(err: unknown): { code: string; message: string } {
  if (err instanceof LlmError) return { code: err.code, message: err.message };
  if (err instanceof AppError) return { code: err.code, message: err.message };
  return { code: 'INTERNAL', message: 'The agent failed' };
}

/** Opens the stream and runs the agent on it; resolves when the stream has ended. */
export async function streamAgent(ctx: Context, deps: AppDeps, req: AgentStreamRequest): Promise<void> {
  const set = { ...agentToolSet(req.tools), declarers: declaringPackages(req.tools) };
  const secrets = allEnvValues(req.env);
  const sse = openSse(ctx, deps.config);
  // The client going away or the server stopping ends the agent: no further model step or tool call.
  // any-signal, not AbortSignal.any: Node 20's keeps a reference on the shutdown signal for every stream, for good.
  const signal = anySignal([sse.signal, deps.shutdown]);
  const limit = { client: callerIdentity(ctx), maxActive: deps.config.MAX_ACTIVE_EXECUTIONS };
  // Every event passes through the redaction of the request's env values, whatever a model or tool put in it.
  const send: Send = (event, data) => sse.send(event, redactSecrets(data, secrets));
  send('tools.discovered', { tools: set.specs.map((s) => ({ toolId: set.byName.get(s.name)!.id, name: s.name })) });
  try {
    const result = await deps.llm.runAgent({
      system: req.system,
      prompt: req.prompt,
      ...(req.history?.length ? { history: req.history } : {}),
      tools: set.specs,
      maxSteps: AGENT_MAX_STEPS,
      explicitParameters: req.explicitParameters,
      model: req.model,
      signal,
      onEvent: (e) => {
        if (e.type === 'message.delta') send('message.delta', { text: e.text });
      },
      callTool: (name, input) => callTool(deps, send, signal, set, req, limit, name, input),
    });
    send('done', { usage: result.usage, provider: result.provider, model: result.model });
  } catch (err) {
    if (!sse.closed) {
      if (err instanceof LlmError) deps.logger.warn({ ...llmLogFields(err), reqId: ctx.state.requestId }, 'agent stream: LLM provider failed');
      else deps.logger.error({ err, reqId: ctx.state.requestId }, 'agent stream failed');
      send('error', failure(err));
      send('done', { usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 } });
    }
  } finally {
    signal.clear();
    sse.close();
  }
}
