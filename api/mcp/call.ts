/**
 * MCP `tools/call`: the same path as `tools.execute` — runTool in core/executions/tool-calls.ts (health, required env, params
 * against the JSON Schema, then queue, gVisor sandbox and wait) — with every outcome a user can act on turned into a
 * tool result with `isError` (renderMcp), so that an agent reads what went wrong. Env values never appear in a message.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { anySignal } from 'any-signal';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { AppDeps } from '../deps.js';
import { AppError, errors } from '../../core/infra/errors.js';
import { mcpErrorResult as errorResult, renderMcp, runTool, WAIT_SLACK_MS } from '../../core/executions/tool-calls.js';
import { isFinalExecution, type ExecutionRow } from '../../core/repos/executions.js';
import { cancelExecution } from '../../core/executions/cancel.js';
import type { ToolRow } from '../../core/repos/tools.js';
import type { Caller } from '../../core/types.js';
import { envHeaderFor, envHeaderName, givenEnvFromHeaders } from './tools.js';
import { validateAgainstSchema } from '../../core/tools/json-schema.js';
import { isPlainObject } from '../../core/text/plain-object.js';
import { ambiguityMessage, declaringPackages, envForTool, toolEnv } from '../../core/tools/tool-env.js';
import { checkExecutable, waitForExecution } from '../../core/executions/executions.js';
import { askForEnv, EnvDeclined, requiredEnvNames, type EnvElicitation } from './env-elicit.js';
import { withProgress, type ProgressSink } from './progress.js';

export interface CallContext {
  deps: AppDeps;
  caller?: Caller;
  /** callerIdentity of the HTTP request: what its executions count against. */
  client: string;
  headers: IncomingHttpHeaders;
  signal: AbortSignal;
  /** Set when the client can be asked for missing env the protocol's way (api/mcp/env-elicit.ts). */
  elicit?: EnvElicitation;
  /** Set when the client sent a progressToken: an MCP server's progress goes there (api/mcp/progress.ts). */
  progress?: ProgressSink;
  /** The digest of this tools/call's JSON-RPC id, kept on its execution for notifications/cancelled (api/mcp/tasks.ts). */
  mcpRequest?: string;
  /** A task-augmented call (api/mcp/tasks.ts): queued and not waited for, the queued execution handed to onQueued. */
  wait?: false;
  onQueued?: (e: ExecutionRow) => void;
  /**
   * 2026-07-28 over HTTP: closing the response stream is the cancellation (the specification's MUST), so a client that
   * goes away before the answer cancels the execution. Unset in the 2025 era, where a disconnect SHOULD NOT be taken
   * for a cancel and the execution runs on, pollable.
   */
  cancelOnDisconnect?: boolean;
}

/** The execution of a call whose client went away unanswered, cancelled when its era says so (cancelOnDisconnect). */
export async function cancelIfGone(c: CallContext, e: ExecutionRow): Promise<void> {
  if (!c.cancelOnDisconnect || !c.signal.aborted || c.deps.shutdown.aborted || isFinalExecution(e)) return;
  await cancelExecution(c.deps, e.id, { waitMs: 0 }).catch((err) => c.deps.logger.warn({ err, executionId: e.id }, 'cancel after disconnect failed'));
}

/** A refusal before anything was queued (400 invalid params, 422 BROKEN or missing env, 413) as a tool result. */
function refusal(err: AppError, tool: ToolRow, env: Record<string, string>, declarers: Map<string, string[]>): CallToolResult {
  if (err.code !== 'TOOL_UNAVAILABLE') return errorResult(err.message);
  const missing = toolEnv(tool)
    .filter((v) => v.required && v.default === undefined && !(v.name in env))
    .map((v) => envHeaderFor(v.name, tool.package_name, declarers));
  const hint = missing.length > 0 ? ` (send ${missing.length === 1 ? 'the header' : 'the headers'} ${missing.join(', ')} with the request)` : '';
  return errorResult(`${err.message}${hint}`);
}

export async function callCollectionTool(
  c: CallContext,
  tools: Map<string, ToolRow>,
  name: string,
  args: Record<string, unknown> | undefined,
): Promise<CallToolResult> {
  const tool = tools.get(name);
  if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool '${name}'; tools/list gives the tools of this collection`);
  // Env is scoped per package of the collection (core/tools/tool-env.ts): an unscoped header for a name that several
  // packages declare reaches none of them, and a call that would have used it is refused, naming the packages.
  const declarers = declaringPackages(tools.values());
  const { env, ambiguous } = envForTool(tool, givenEnvFromHeaders(c.headers, tools.values()), declarers);
  if (ambiguous.length > 0) return errorResult(ambiguityMessage(ambiguous, (pkg, name) => envHeaderName(name, pkg)));
  let execution: ExecutionRow;
  // any-signal, not AbortSignal.any: Node 20's keeps a reference on the shutdown signal for every call, for good.
  const signal = c.signal ? anySignal([c.signal, c.deps.shutdown]) : undefined;
  const missing = requiredEnvNames(toolEnv(tool)).filter((n) => !(n in env));
  try {
    if (missing.length > 0 && c.elicit && c.caller) {
      // Asked only for a call that would run once given the env (not BROKEN, params valid): else today's refusal.
      checkExecutable(tool, args ?? {}, { ...env, ...Object.fromEntries(missing.map((n) => [n, ''])) });
      const asked = await askForEnv(c.deps, c.elicit, {
        caller: c.caller,
        client: c.client,
        tool,
        mcpName: name,
        params: args ?? {},
        names: requiredEnvNames(toolEnv(tool)),
        headers: missing.map((n) => envHeaderFor(n, tool.package_name, declarers)),
      });
      // 2026-07-28's `input_required` result: era-2026.ts returns it as it is (the 2025 era's question is thrown).
      if ('inputRequired' in asked) return asked.inputRequired as unknown as CallToolResult;
      execution = await waitForExecution(c.deps, asked.executionId, c.deps.config.EXECUTION_TIMEOUT_MS + WAIT_SLACK_MS, signal ?? c.deps.shutdown);
    } else {
      execution = await withProgress(c.deps.notifier, c.progress, tool, (p) =>
        runTool(
          c.deps,
          {
            tool,
            params: args ?? {},
            env,
            caller: c.caller,
            origin: 'mcp',
            limit: { client: c.client, maxActive: c.deps.config.MAX_ACTIVE_EXECUTIONS },
            ...p.request,
            ...(c.mcpRequest ? { mcpRequest: c.mcpRequest } : {}),
          },
          {
            signal: signal ?? c.deps.shutdown,
            onQueued: (e) => {
              p.onQueued?.(e);
              c.onQueued?.(e);
            },
            ...(c.wait === false ? { wait: false } : {}),
          },
        ),
      );
    }
  } catch (err) {
    if (err instanceof EnvDeclined) return refusal(errors.toolUnavailable(`Missing required env: ${missing.join(', ')}`), tool, env, declarers);
    if (err instanceof McpError) throw err;
    if (err instanceof AppError && err.status < 500) return refusal(err, tool, env, declarers);
    c.deps.logger.error({ err, toolId: tool.id }, 'mcp tools/call failed');
    throw new McpError(ErrorCode.InternalError, 'Internal error');
  } finally {
    signal?.clear();
  }
  if (c.wait !== false) await cancelIfGone(c, execution);
  await c.deps.learning.use(c.caller?.userId, tool.id);
  return renderCollectionCall(execution, tool);
}

/** A collection tool's execution as its tools/call result (also a 2025-11-25 task's, api/mcp/tasks.ts). */
export function renderCollectionCall(execution: ExecutionRow, tool: ToolRow): CallToolResult {
  return tool.package_mcp ? asServerGaveIt(renderMcp(execution), execution, tool) : renderMcp(execution);
}

/** MCP content block types a server's result may hold (text, image, audio, resource_link, embedded resource). */
const CONTENT_TYPES = new Set(['text', 'image', 'audio', 'resource_link', 'resource']);
const isContentBlocks = (v: unknown): v is CallToolResult['content'] =>
  Array.isArray(v) && v.every((b) => isPlainObject(b) && typeof b.type === 'string' && CONTENT_TYPES.has(b.type));

/**
 * An imported MCP server's result as the server gave it (SPEC "Reach: MCP clients"). The execution's result is its
 * `structuredContent` when it sent one, else `{ content }` (worker side: sandbox/mcp-client.ts): content blocks go back
 * as they are (images, audio, resource links, embedded resources), with no `structuredContent`; a structured result is
 * served as `structuredContent` only when the tool declares an `outputSchema` and the result fits it, beside its JSON
 * text (the block servers send for clients that read only text). A result that does not fit the schema is an error.
 */
function asServerGaveIt(rendered: CallToolResult, e: Pick<ExecutionRow, 'status' | 'result'>, tool: ToolRow): CallToolResult {
  if (rendered.isError || e.status !== 'succeeded') return rendered;
  const { structuredContent: _, ...rest } = rendered;
  const output = e.result;
  if (tool.output_schema) {
    const wrong = validateAgainstSchema(tool.output_schema, output, 'structuredContent');
    if (wrong.length === 0 && isPlainObject(output)) return { ...rest, structuredContent: output };
    const why =
      wrong.length > 0
        ? wrong
            .slice(0, 3)
            .map((w) => `${w.path} ${w.message}`)
            .join('; ')
        : 'it is not an object';
    return errorResult(
      `The MCP server's result does not match the tool's output schema: ${why}`,
      (rendered._meta?.['toolshed/executionId'] as string) ?? undefined,
    );
  }
  if (isPlainObject(output) && Object.keys(output).length === 1 && isContentBlocks(output.content)) return { ...rest, content: output.content };
  return rest;
}
