/**
 * What a finished execution's `error` can say: the closed set of codes the worker, the sandbox's outcome mapping
 * (worker/outcomes.ts) and the reaper write into executions.error. Each transport (REST execute, MCP tools/call, the
 * agent stream) renders these; a new code added here makes the exhaustive switches that render them fail to compile
 * until they decide what it means for their callers.
 */

export const EXECUTION_ERROR_CODES = [
  /** The tool threw (its own message): the caller's problem, answered 200 with `success: false`. */
  'TOOL_ERROR',
  /** The tool outlived its time limit (status `timed_out`). */
  'EXECUTION_TIMEOUT',
  /** The tool exceeded its memory limit. */
  'OUT_OF_MEMORY',
  /** The tool's output is over 1 MiB. */
  'PAYLOAD_TOO_LARGE',
  /** The sandbox failed (ours, not the tool's), on every attempt. */
  'SANDBOX_ERROR',
  /** The worker running it died (no heartbeat) and no attempt was left. */
  'WORKER_LOST',
  /** The worker running it shut down mid-execution. */
  'WORKER_SHUTDOWN',
  /** The tool was deleted between queueing and running. */
  'NOT_FOUND',
  /**
   * Its caller cancelled it (POST /api/executions/:id/cancel, MCP notifications/cancelled or tasks/cancel): status
   * `failed`, since the contract's status set is closed. Neither the tool's failure nor the platform's.
   */
  'CANCELLED',
  /** Anything else (an unrecognised code read back from an older row). */
  'INTERNAL',
] as const;

export type ExecutionErrorCode = (typeof EXECUTION_ERROR_CODES)[number];

export interface ExecutionError {
  code: ExecutionErrorCode;
  message: string;
}

const KNOWN = new Set<string>(EXECUTION_ERROR_CODES);

/** An error as read back from the database: a code outside the union (written by an older version) is INTERNAL. */
export function executionError(e: { code: string; message: string }): ExecutionError {
  return KNOWN.has(e.code) ? (e as ExecutionError) : { code: 'INTERNAL', message: e.message };
}
