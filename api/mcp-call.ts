/**
 * MCP `tools/call`: the same path as `tools.execute` — enqueueExecution (health, required env, params against the
 * JSON Schema, then queue and gVisor sandbox) and waitForExecution — with every outcome a user can act on turned into
 * a tool result with `isError`, so that an agent reads what went wrong. Env values never appear in a message.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { AppDeps } from './deps.js';
import { AppError } from '../core/errors.js';
import { enqueueExecution, waitForExecution } from '../core/executions.js';
import { isFinalExecution, type ExecutionRow } from '../core/repos/executions.js';
import type { ToolRow } from '../core/repos/tools.js';
import type { Caller } from '../core/types.js';
import { envHeaderFor, envHeaderName, givenEnvFromHeaders } from './mcp-tools.js';
import { ambiguityMessage, declaringPackages, envForTool, toolEnv } from '../core/tool-env.js';

/** As `tools.execute`: the execution's own time limit plus queueing and sandbox start. */
const WAIT_SLACK_MS = 15_000;

export interface CallContext {
  deps: AppDeps;
  caller?: Caller;
  /** callerIdentity of the HTTP request: what its executions count against. */
  client: string;
  headers: IncomingHttpHeaders;
  signal: AbortSignal;
}

function errorResult(text: string, executionId?: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }], ...(executionId ? { _meta: { 'toolshed/executionId': executionId } } : {}) };
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A final (or still running) execution as a tool result. */
export function resultOf(e: ExecutionRow): CallToolResult {
  if (!isFinalExecution(e)) {
    return errorResult(`The execution did not finish in time; poll GET /api/executions/${e.id} for its result`, e.id);
  }
  if (e.status === 'succeeded') {
    const output = e.result ?? null;
    return {
      content: [{ type: 'text', text: JSON.stringify(output) }],
      ...(isPlainObject(output) ? { structuredContent: output } : {}),
      _meta: { 'toolshed/executionId': e.id, 'toolshed/executionTimeMs': e.execution_time_ms },
    };
  }
  const error = e.error ?? { code: 'INTERNAL', message: 'The execution failed' };
  if (error.code === 'TOOL_ERROR') return errorResult(error.message, e.id);
  return errorResult(`${error.code}: ${error.message}`, e.id);
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
  // Env is scoped per package of the collection (core/tool-env.ts): an unscoped header for a name that several
  // packages declare reaches none of them, and a call that would have used it is refused, naming the packages.
  const declarers = declaringPackages(tools.values());
  const { env, ambiguous } = envForTool(tool, givenEnvFromHeaders(c.headers, tools.values()), declarers);
  if (ambiguous.length > 0) return errorResult(ambiguityMessage(ambiguous, (pkg, name) => envHeaderName(name, pkg)));
  let execution: ExecutionRow;
  try {
    execution = await enqueueExecution(c.deps.db, c.deps.config.SECRETS_KEY!, {
      tool,
      params: args ?? {},
      env,
      caller: c.caller,
      origin: 'mcp',
      limit: { client: c.client, maxActive: c.deps.config.MAX_ACTIVE_EXECUTIONS },
    });
  } catch (err) {
    if (err instanceof AppError && err.status < 500) return refusal(err, tool, env, declarers);
    c.deps.logger.error({ err, toolId: tool.id }, 'mcp tools/call failed to enqueue');
    throw new McpError(ErrorCode.InternalError, 'Internal error');
  }
  const waitMs = c.deps.config.EXECUTION_TIMEOUT_MS + WAIT_SLACK_MS;
  return resultOf(await waitForExecution(c.deps, execution.id, waitMs, c.signal ? AbortSignal.any([c.signal, c.deps.shutdown]) : c.deps.shutdown));
}
