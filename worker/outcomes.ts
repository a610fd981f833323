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

/**
 * What a request that finds no network says: Node (undici's fetch, the resolver's and socket's error codes), Go (a
 * server shipped as a binary, @digitalocean/mcp: `dial tcp: lookup api.digitalocean.com on [::1]:53: … connection
 * refused`), and the C library's resolver (`Temporary failure in name resolution`).
 */
export const NETWORK_FAILURE =
  /\bfetch failed\b|\b(ENOTFOUND|EAI_AGAIN|ENETUNREACH|EHOSTUNREACH|ECONNREFUSED)\b|getaddrinfo|\bdial tcp: lookup\b|\bno such host\b|Temporary failure in name resolution|Name or service not known/;

/**
 * Why a tool ran without network, when it did: its package does not declare `network`, or the service gives egress
 * to no sandbox (SANDBOX_NETWORK=none). Undefined when it had egress.
 */
export type Offline = 'undeclared' | 'undeclared-mcp' | 'service' | undefined;

const OFFLINE_HINT: Record<Exclude<Offline, undefined>, string> = {
  undeclared:
    ' (the tool ran without network: its package does not declare `network` in its toolshed permissions, so its sandbox has none; see docs/tool-packages.md)',
  'undeclared-mcp': ' (the tool ran without network: its MCP server was imported without `network: true`, so its sandbox has none; see docs/tool-packages.md)',
  service: ' (the tool ran without network: this service gives no sandbox network, SANDBOX_NETWORK=none)',
};

export function mapOutcome(o: ExecuteOutcome, timeoutMs: number, offline?: Offline): OutcomeMapping {
  switch (o.kind) {
    case 'ok':
      return { status: 'succeeded', result: o.output ?? null, error: null, retry: false };
    case 'tool_error': {
      // A request that failed for want of network says so: "fetch failed" alone leaves the caller guessing.
      const hint = offline && NETWORK_FAILURE.test(o.message) ? OFFLINE_HINT[offline] : '';
      return { status: 'failed', error: { code: 'TOOL_ERROR', message: `${o.message}${hint}` }, retry: false };
    }
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
