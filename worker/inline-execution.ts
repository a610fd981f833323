/**
 * One tool call of a scenario run, run by the worker that runs the scenario: the same checks as execute
 * (checkExecutable: health, required env, params against the JSON Schema), an executions row (origin `scenario`)
 * for the record, the sandbox, and the same outcome mapping and counters as the execute_tool job. It does not go
 * through the queue: a run job waiting for execution jobs could take every worker slot and wait forever.
 */
import { AppError } from '../core/errors.js';
import { checkExecutable } from '../core/executions.js';
import type { ToolCallResult } from '../core/llm/provider.js';
import { finishExecution } from '../core/repos/executions.js';
import { insertRunningExecution } from '../core/repos/inline-executions.js';
import type { ToolRow } from '../core/repos/tools.js';
import { TRENDING_WEIGHTS } from '../core/scoring.js';
import type { WorkerDeps } from './deps.js';
import { packageRefOf } from './health.js';
import { mapOutcome, UNRUNNABLE } from './outcomes.js';

export interface InlineCall {
  tool: ToolRow;
  params: unknown;
  userId: string | null;
  workerId: string;
  signal?: AbortSignal;
  /** Called once the executions row exists, before the sandbox starts (null: refused before any row). */
  onStarted?: (executionId: string | null) => void;
}

/** Sandbox errors (ours, not the tool's) are tried this many times in all, as the execute_tool job does. */
const ATTEMPTS = 3;

export async function runToolInline(deps: WorkerDeps, call: InlineCall): Promise<ToolCallResult> {
  try {
    checkExecutable(call.tool, call.params, {});
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    call.onStarted?.(null);
    return { error: { code: err.code, message: err.message }, executionTimeMs: 0 };
  }
  const row = await insertRunningExecution(deps.db, {
    toolId: call.tool.id,
    packageVersion: call.tool.package_version,
    userId: call.userId,
    origin: 'scenario',
    params: call.params,
    workerId: call.workerId,
  });
  call.onStarted?.(row.id);
  try {
    return await runRow(deps, call, row.id);
  } catch (err) {
    // Whatever escaped, the row does not stay `running` (the run itself fails or is retried by its own job).
    await finishExecution(deps.db, row.id, { status: 'failed', error: UNRUNNABLE, executionTimeMs: null }).catch(() => undefined);
    throw err;
  }
}

const SHUTDOWN = { code: 'WORKER_SHUTDOWN', message: 'The worker shut down during this execution' } as const;

async function runRow(deps: WorkerDeps, call: InlineCall, executionId: string): Promise<ToolCallResult> {
  const timeoutMs = deps.config.EXECUTION_TIMEOUT_MS;
  let mapped: ReturnType<typeof mapOutcome>;
  let durationMs = 0;
  for (let attempt = 1; ; attempt++) {
    const outcome = await deps.sandbox.execute({
      pkg: packageRefOf(call.tool),
      exportName: call.tool.export_name,
      params: call.params,
      env: {},
      timeoutMs,
      signal: call.signal,
    });
    mapped = mapOutcome(outcome, timeoutMs);
    durationMs = Math.round(outcome.durationMs);
    if (!mapped.retry || attempt >= ATTEMPTS || call.signal?.aborted) break;
    deps.logger.warn({ executionId, attempt }, 'sandbox error in a scenario run; retrying');
  }
  if (call.signal?.aborted && mapped.status !== 'succeeded') {
    // Stopped by a shutdown: not the tool's failure, and not counted as one (the run goes back to its queue).
    await finishExecution(deps.db, executionId, { status: 'failed', error: SHUTDOWN, executionTimeMs: durationMs });
    return { executionId, executionTimeMs: durationMs, error: SHUTDOWN };
  }
  const ok = mapped.status === 'succeeded';
  await finishExecution(deps.db, executionId, {
    status: mapped.status,
    result: mapped.result,
    error: mapped.error,
    executionTimeMs: durationMs,
    countAs: ok
      ? { kind: 'execution_succeeded', weight: TRENDING_WEIGHTS.executionSucceeded }
      : { kind: 'execution_failed', weight: TRENDING_WEIGHTS.executionFailed },
  });
  return {
    executionId,
    executionTimeMs: durationMs,
    ...(mapped.status === 'succeeded' ? { output: mapped.result ?? null } : { error: mapped.error ?? { code: 'INTERNAL', message: 'The execution failed' } }),
  };
}
