/**
 * The one way the worker runs an execution: the tool in a sandbox under its declared permissions (its secrets only,
 * egress only when it declares `network`), the outcome mapped (worker/outcomes.ts), and the record finished with
 * results and errors redacted of the env, its counters moved, through a database restart. Both the execute_tool job
 * and scenario runs' inline calls (worker/inline-execution.ts) go through here; the API side of the same path is
 * core/executions/tool-calls.ts.
 */
import { withDbRetry } from '../core/infra/db.js';
import { redactSecrets } from '../core/executions/executions.js';
import type { ToolPermissions } from '../core/packages/manifest.js';
import { finishExecution, type ExecutionRow } from '../core/repos/executions.js';
import { TRENDING_WEIGHTS } from '../core/tools/scoring.js';
import { verifyInstalled } from '../sandbox/packages.js';
import type { PackageRef } from '../sandbox/types.js';
import type { WorkerDeps } from './deps.js';
import { mapOutcome, type OutcomeMapping } from './outcomes.js';
import { inSpan, SpanStatusCode } from '../core/infra/tracing.js';
import type { McpServerOp } from '../core/packages/mcp-offer.js';
import type { Progress } from '../core/executions/progress.js';

/** How long a finished execution waits for the database to come back before its outcome is given up. */
export const FINISH_RETRY_MS = 120_000;

export interface SandboxRun {
  pkg: PackageRef;
  exportName: string;
  params: unknown;
  env: Record<string, string>;
  permissions: ToolPermissions | null;
  /** SANDBOX_REUSE=caller-package: the session a sandbox may be kept for. */
  reuseKey?: string;
  signal?: AbortSignal;
  /** An imported MCP server's resources/read or prompts/get instead of the tool's call. */
  mcpOp?: McpServerOp;
  /** The caller asked for progress: the server's notifications/progress (core/executions/progress.ts). */
  onProgress?: (p: Progress) => void;
}

export interface SandboxResult {
  mapped: OutcomeMapping;
  durationMs: number;
}

/**
 * One sandbox call: a `sandbox.execute` span (tool, package@version, outcome; never params, results or env) and a
 * debug line saying the same, both tied to the job's request and trace (core/infra/tracing.ts).
 */
export function runInSandbox(deps: WorkerDeps, r: SandboxRun): Promise<SandboxResult> {
  const pkg = `${r.pkg.name}@${r.pkg.version}`;
  const attributes = {
    'toolshed.tool.name': r.exportName,
    'toolshed.package': pkg,
    'toolshed.package.name': r.pkg.name,
    'toolshed.package.version': r.pkg.version,
  };
  return inSpan('toolshed-worker', 'sandbox.execute', { attributes }, async (span) => {
    const result = await callSandbox(deps, r);
    const outcome = { kind: result.kind, status: result.mapped.status, ...(result.mapped.error ? { code: result.mapped.error.code } : {}) };
    span?.setAttributes({ 'toolshed.sandbox.outcome': outcome.kind, 'toolshed.execution.status': outcome.status, 'toolshed.duration_ms': result.durationMs });
    if (outcome.status !== 'succeeded') span?.setStatus({ code: SpanStatusCode.ERROR, message: outcome.code ?? outcome.status });
    deps.logger.debug({ tool: r.exportName, package: pkg, outcome: outcome.kind, ms: result.durationMs }, 'sandbox call');
    return { mapped: result.mapped, durationMs: result.durationMs };
  });
}

/** A run of a recorded version checks that the install it mounts was made from that version's bytes. */
const NOT_RECORDED_BYTES = {
  code: 'SANDBOX_ERROR',
  message: 'The installed package is not the one recorded for this version (its install marker names other bytes); it was not run',
} as const;

async function callSandbox(deps: WorkerDeps, r: SandboxRun): Promise<SandboxResult & { kind: string }> {
  if (r.pkg.integrity && !(await verifyInstalled(r.pkg.dir, r.pkg.integrity))) {
    deps.logger.error({ package: `${r.pkg.name}@${r.pkg.version}` }, 'refused to run an install whose marker names other bytes than the recorded version');
    return { mapped: { status: 'failed', error: NOT_RECORDED_BYTES, retry: false }, durationMs: 0, kind: 'integrity' };
  }
  const timeoutMs = deps.config.EXECUTION_TIMEOUT_MS;
  const declared = r.permissions;
  const offline = declared?.network !== true ? (r.pkg.mcp ? 'undeclared-mcp' : 'undeclared') : deps.config.SANDBOX_NETWORK !== 'egress' ? 'service' : undefined;
  const outcome = await deps.sandbox.execute({
    pkg: r.pkg,
    exportName: r.exportName,
    params: r.params,
    // A tool that declares its secrets gets those only; egress only for a tool that declares `network`.
    env: declared?.secrets ? Object.fromEntries(Object.entries(r.env).filter(([name]) => declared.secrets!.includes(name))) : r.env,
    network: declared?.network === true,
    timeoutMs,
    signal: r.signal,
    reuseKey: r.reuseKey,
    ...(r.mcpOp ? { mcpOp: r.mcpOp } : {}),
    ...(r.onProgress ? { onProgress: r.onProgress } : {}),
  });
  deps.metrics?.sandboxExecution(outcome.kind);
  return { mapped: mapOutcome(outcome, timeoutMs, offline), durationMs: Math.round(outcome.durationMs), kind: outcome.kind };
}

/**
 * Finishes the record with the mapped outcome (only a `running` one, of this attempt when given) and answers it as
 * stored. The tool has run: its outcome must survive a database restart, or the job would run the tool again.
 */
export async function finishRun(
  deps: WorkerDeps,
  executionId: string,
  r: SandboxResult,
  o: { env: Record<string, string>; attempt?: number; uncounted?: boolean },
): Promise<Pick<ExecutionRow, 'id' | 'status' | 'result' | 'error' | 'execution_time_ms'>> {
  const { mapped } = r;
  const ok = mapped.status === 'succeeded';
  const result = redactSecrets(mapped.result, o.env);
  // The code is ours (a closed union), never the tool's text: only the message can carry a secret.
  const error = mapped.error && { ...mapped.error, message: redactSecrets(mapped.error.message, o.env) };
  const finish = () =>
    finishExecution(deps.db, executionId, {
      ...(o.attempt === undefined ? {} : { attempt: o.attempt }),
      status: mapped.status,
      result,
      error,
      executionTimeMs: r.durationMs,
      // A resources/read or prompts/get is not a call of the tool it ran under: not counted as one.
      ...(o.uncounted
        ? {}
        : {
            countAs: ok
              ? ({ kind: 'execution_succeeded', weight: TRENDING_WEIGHTS.executionSucceeded } as const)
              : ({ kind: 'execution_failed', weight: TRENDING_WEIGHTS.executionFailed } as const),
          }),
    });
  await withDbRetry(finish, FINISH_RETRY_MS, (err) => deps.logger.warn({ executionId, err: err.message }, 'database unreachable; retrying the finish'));
  deps.metrics?.executionFinished(mapped.status, error?.code);
  return { id: executionId, status: mapped.status, result, error, execution_time_ms: r.durationMs };
}
