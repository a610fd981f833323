/**
 * The one place where a sandbox outcome becomes an execution status, a client-facing error, and a retry decision.
 * Only sandbox_error (our failure, not the tool's) is retried.
 */
import type { ExecutionStatus } from '../core/types.js';
import type { ExecuteOutcome } from '../sandbox/types.js';
import type { ExecutionError } from '../core/executions/execution-errors.js';

export interface OutcomeMapping {
  status: ExecutionStatus;
  result?: unknown;
  error: ExecutionError | null;
  retry: boolean;
}

/** What an execution that escaped every outcome (a thrown error, not a sandbox outcome) is failed with. */
export const UNRUNNABLE = { code: 'INTERNAL', message: 'The worker could not run this execution' } as const;

export function mapOutcome(o: ExecuteOutcome, timeoutMs: number): OutcomeMapping {
  switch (o.kind) {
    case 'ok':
      return { status: 'succeeded', result: o.output ?? null, error: null, retry: false };
    case 'tool_error':
      return { status: 'failed', error: { code: 'TOOL_ERROR', message: o.message }, retry: false };
    case 'timeout':
      return { status: 'timed_out', error: { code: 'EXECUTION_TIMEOUT', message: `The tool did not finish within ${timeoutMs} ms` }, retry: false };
    case 'oom':
      return { status: 'failed', error: { code: 'OUT_OF_MEMORY', message: 'The tool exceeded its memory limit' }, retry: false };
    case 'output_too_large':
      return { status: 'failed', error: { code: 'PAYLOAD_TOO_LARGE', message: 'The tool output exceeds 1 MiB' }, retry: false };
    case 'sandbox_error':
      return { status: 'failed', error: { code: 'SANDBOX_ERROR', message: 'The sandbox failed to run the tool' }, retry: true };
  }
}
