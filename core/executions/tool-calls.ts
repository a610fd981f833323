/**
 * The one way the API runs a tool: enqueue (core/executions/executions.ts: health, env, params, then the row and its job in one
 * transaction), wait for the execution to be final (LISTEN/NOTIFY), and render it for the caller. Every caller goes
 * through `runTool` — REST `tools.execute`, MCP `tools/call`, the agent stream — and picks one of the renderers below;
 * the worker's inline path (scenario runs) renders its finished calls with `callResultOf` as the agent stream does.
 * The worker side of the same path (sandbox, outcome, finish) is worker/run-execution.ts.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Knex } from 'knex';
import type { BootedConfig } from '../infra/config.js';
import { AppError, errors } from '../infra/errors.js';
import { executionError, type ExecutionError } from './execution-errors.js';
import { enqueueExecution, waitForExecution, type ExecutionRequest } from './executions.js';
import type { ToolCallResult } from '../llm/provider.js';
import type { Notifier } from '../infra/notify.js';
import { isFinalExecution, type ExecutionRow } from '../repos/executions.js';
import { isPlainObject } from '../text/plain-object.js';

/** How long a synchronous call waits beyond the execution's own time limit (queueing, sandbox start). */
export const WAIT_SLACK_MS = 15_000;

export interface ToolCallDeps {
  db: Knex;
  notifier: Notifier;
  config: Pick<BootedConfig, 'SECRETS_KEY' | 'EXECUTION_TIMEOUT_MS'>;
}

export interface ToolCallOptions {
  /** Return the queued execution at once instead of waiting for it (`?wait=false`). */
  wait?: boolean;
  /** Ends the wait early (client gone, server stopping): the execution is returned as it stands. */
  signal?: AbortSignal;
  /** Called once the execution is queued, before the wait. */
  onQueued?: (e: ExecutionRow) => void;
}

/** Enqueues the call and waits for it: the execution once final, or as it stands when the wait ends. */
export async function runTool(deps: ToolCallDeps, req: ExecutionRequest, o: ToolCallOptions = {}): Promise<ExecutionRow> {
  const queued = await enqueueExecution(deps.db, deps.config.SECRETS_KEY, req);
  o.onQueued?.(queued);
  if (o.wait === false) return queued;
  return waitForExecution(deps, queued.id, deps.config.EXECUTION_TIMEOUT_MS + WAIT_SLACK_MS, o.signal);
}

type Settled = Pick<ExecutionRow, 'id' | 'status' | 'result' | 'error' | 'execution_time_ms'>;

const never = (x: never): never => {
  throw new Error(`unhandled execution error code ${String(x)}`);
};

/**
 * REST: the result, or the tool's own failure as 200 `success: false`; our failures and the limits as errors that
 * name the execution to poll.
 */
export function renderRest(e: Settled) {
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
    case 'CANCELLED':
      // The call ran (or its tool is gone, or its caller cancelled it): an answer about the call, not a failure of the request.
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

/** An MCP tool result with `isError`, so that an agent reads what went wrong. */
export function mcpErrorResult(text: string, executionId?: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }], ...(executionId ? { _meta: { 'toolshed/executionId': executionId } } : {}) };
}

/** MCP `tools/call`: every outcome as a tool result. */
export function renderMcp(e: Settled): CallToolResult {
  if (!isFinalExecution(e)) {
    return mcpErrorResult(`The execution did not finish in time; poll GET /api/executions/${e.id} for its result`, e.id);
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
  if (error.code === 'TOOL_ERROR') return mcpErrorResult(error.message, e.id);
  return mcpErrorResult(`${error.code}: ${error.message}`, e.id);
}

/** An agent's tool call (the agent stream, and scenario runs' inline calls): output or error. */
export function callResultOf(e: Settled): ToolCallResult {
  const base = { executionId: e.id, executionTimeMs: e.execution_time_ms ?? 0 };
  if (!isFinalExecution(e))
    return { ...base, error: { code: 'EXECUTION_TIMEOUT', message: `The execution did not finish in time; poll GET /api/executions/${e.id}` } };
  if (e.status === 'succeeded') return { ...base, output: e.result ?? null };
  return { ...base, error: e.error ?? { code: 'INTERNAL', message: 'The execution failed' } };
}
