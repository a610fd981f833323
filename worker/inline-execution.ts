/**
 * One tool call of a scenario run, run by the worker that runs the scenario: the same checks as execute
 * (checkExecutable: health, required env, params against the JSON Schema), an executions row (origin `scenario`)
 * for the record, then the sandbox, outcome and finish of the execute_tool job (worker/run-execution.ts), and the
 * result as the agent stream renders its calls (callResultOf, core/executions/tool-calls.ts). It does not go
 * through the queue: a run job waiting for execution jobs could take every worker slot and wait forever.
 */
import { AppError } from '../core/infra/errors.js';
import { checkExecutable } from '../core/executions/executions.js';
import type { ToolCallResult } from '../core/llm/provider.js';
import { finishExecution } from '../core/repos/executions.js';
import { insertRunningExecution } from '../core/repos/inline-executions.js';
import type { ToolRow } from '../core/repos/tools.js';
import { callResultOf } from '../core/executions/tool-calls.js';
import { secretValues, withDeclaredDefaults } from '../core/tools/tool-env.js';
import type { WorkerDeps } from './deps.js';
import { packageRefOf } from './health.js';
import { UNRUNNABLE } from './outcomes.js';
import { finishRun, runInSandbox, type SandboxResult } from './run-execution.js';

export interface InlineCall {
  tool: ToolRow;
  params: unknown;
  /** What this tool may read of the run's env (envForTool, core/tools/tool-env.ts); declared defaults are added here. */
  env: Record<string, string>;
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
    checkExecutable(call.tool, call.params, call.env);
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

/**
 * A scenario run's calls share sandboxes with the same user's other runs, per package version (reuse mode, see
 * sandbox/reuse.ts: each call in a fresh context with its own env and an empty /tmp and home). A batch of hundreds of
 * runs then boots a few sandboxes instead of one per call. Users never share one; SCENARIO_SANDBOX_REUSE=off boots
 * one per call. Not MCP servers: a reused server would keep its own state (a memory server's graph) from one run to
 * the next, and runs must not depend on each other; their calls take warm servers, one call each (mcp-warm.ts).
 */
function scenarioReuseKey(deps: WorkerDeps, call: InlineCall): string | undefined {
  if (deps.config.SCENARIO_SANDBOX_REUSE !== 'caller-package' || !call.userId || call.tool.package_mcp) return undefined;
  return `scenario|${call.userId}|${packageRefOf(call.tool).dir}`;
}

const SHUTDOWN = { code: 'WORKER_SHUTDOWN', message: 'The worker shut down during this execution' } as const;

async function runRow(deps: WorkerDeps, call: InlineCall, executionId: string): Promise<ToolCallResult> {
  const env = withDeclaredDefaults(call.tool, call.env);
  let outcome: SandboxResult;
  for (let attempt = 1; ; attempt++) {
    outcome = await runInSandbox(deps, {
      pkg: packageRefOf(call.tool),
      exportName: call.tool.export_name,
      params: call.params,
      env,
      permissions: call.tool.permissions,
      signal: call.signal,
      reuseKey: scenarioReuseKey(deps, call),
    });
    if (!outcome.mapped.retry || attempt >= ATTEMPTS || call.signal?.aborted) break;
    deps.logger.warn({ executionId, attempt }, 'sandbox error in a scenario run; retrying');
  }
  if (call.signal?.aborted && outcome.mapped.status !== 'succeeded') {
    // Stopped by a shutdown: not the tool's failure, and not counted as one (the run goes back to its queue).
    await finishExecution(deps.db, executionId, { status: 'failed', error: SHUTDOWN, executionTimeMs: outcome.durationMs });
    return { executionId, executionTimeMs: outcome.durationMs, error: SHUTDOWN };
  }
  // The stored result and error are redacted of the env, as an execution's are.
  return callResultOf(await finishRun(deps, executionId, outcome, { env: secretValues(call.tool.package_env, env) }));
}
