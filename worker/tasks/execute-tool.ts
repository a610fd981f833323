/**
 * Job: run one execution in a sandbox. Idempotent (a final execution is left alone), stoppable (the job's abort
 * signal reaches the sandbox; a tool stopped by a shutdown runs again elsewhere and is not counted as failing), and it
 * throws only to run again: after a sandbox failure, at a shutdown, or when something unexpected escaped — and then
 * the record is back in the queue, or failed on the last attempt, never left `running`. The env is opened here and goes
 * nowhere but the sandbox; running and finishing are worker/run-execution.ts (every stored result or error is
 * redacted of the env there).
 */
import type { Task } from 'graphile-worker';
import { anySignal } from 'any-signal';
import { CANCELLED } from '../../core/executions/cancel.js';
import { openJson } from '../../core/infra/crypto.js';
import { parsePayload } from '../../core/infra/jobs.js';
import { progressPublisher, type Progress } from '../../core/executions/progress.js';
import { redactSecrets } from '../../core/executions/executions.js';
import { secretValues } from '../../core/tools/tool-env.js';
import { finishExecution, markExecutionRunning, requeueExecution } from '../../core/repos/executions.js';
import type { WorkerDeps } from '../deps.js';
import { UNRUNNABLE } from '../outcomes.js';
import { finishRun, runInSandbox } from '../run-execution.js';

/** Thrown to have Graphile run the job again, the record already put back in the queue. */
class RunAgain extends Error {}

const SHUTDOWN = { code: 'WORKER_SHUTDOWN', message: 'The worker shut down during this execution, on its last attempt' } as const;

export function executeToolTask(deps: WorkerDeps, workerId: () => string): Task {
  return async (payload, helpers) => {
    const { executionId, sealedEnv, op, progress } = parsePayload('execute_tool', payload);
    const execution = await markExecutionRunning(deps.db, executionId, workerId());
    if (!execution) return; // already final
    const lastAttempt = helpers.job.attempts >= helpers.job.max_attempts;
    /** Made final as cancelled by its caller: not counted as the tool's failure (no countAs; tool-stats leaves it out). */
    const finishCancelled = (executionTimeMs: number | null) =>
      finishExecution(deps.db, executionId, { status: 'failed', error: CANCELLED, executionTimeMs, attempt: execution.attempts });
    // A cancel (core/executions/cancel.ts) aborts this signal: the sandbox is stopped and the record finished CANCELLED.
    const cancel = await deps.cancels?.hold(executionId);
    try {
      await run(execution);
    } catch (err) {
      if (err instanceof RunAgain) throw err;
      // Anything else that escaped (an env this worker cannot open — another SECRETS_KEY —, a finish the database
      // refused): the record never stays `running`. Back in the queue for the next attempt, or failed on the last.
      deps.logger.error({ executionId, attempt: helpers.job.attempts, err: (err as Error).message }, 'the execution task failed');
      const settle = lastAttempt
        ? finishExecution(deps.db, executionId, { status: 'failed', error: UNRUNNABLE, executionTimeMs: null, attempt: execution.attempts })
        : requeueExecution(deps.db, executionId, execution.attempts);
      await settle.catch(() => undefined); // the reaper fails what is left (findStrandedExecutions)
      throw err;
    } finally {
      cancel?.release();
    }

    async function run(execution: NonNullable<Awaited<ReturnType<typeof markExecutionRunning>>>): Promise<void> {
      const env = sealedEnv ? openJson<Record<string, string>>(deps.config.SECRETS_KEY, sealedEnv) : {};
      // What is redacted from its progress and its stored result: every value but a setting's (DATA_DIR).
      const secrets = secretValues(execution.package_env, env);
      if (!execution.tool_export_name) {
        await finishExecution(deps.db, executionId, {
          status: 'failed',
          error: { code: 'NOT_FOUND', message: 'The tool no longer exists' },
          executionTimeMs: null,
          attempt: execution.attempts,
        });
        return;
      }
      if (execution.cancel_requested_at || cancel?.signal.aborted) {
        await finishCancelled(null);
        return;
      }
      // any-signal, not AbortSignal.any: Node 20's keeps a reference on the job's signal for good.
      const both = cancel ? anySignal([helpers.abortSignal, cancel.signal]) : undefined;
      const signal = both ?? helpers.abortSignal;
      // The MCP client asked for progress: the server's notifications go to the API, coalesced (core/executions/progress.ts).
      const progressed = progress && execution.package_mcp ? progressPublisher(deps.db, executionId, (s) => String(redactSecrets(s, secrets))) : undefined;
      const outcome = await runInSandbox(deps, {
        ...(op ? { mcpOp: op } : {}),
        ...(progressed ? { onProgress: (p: Progress) => progressed.push(p) } : {}),
        pkg: {
          name: execution.package_name!,
          version: execution.package_version!,
          dir: execution.package_install_path!,
          integrity: execution.package_integrity,
          ...(execution.package_mcp ? { mcp: execution.package_mcp } : {}),
        },
        exportName: execution.tool_export_name,
        params: execution.params,
        env,
        permissions: execution.tool_permissions,
        signal,
        reuseKey:
          deps.config.SANDBOX_REUSE === 'caller-package' && execution.api_key_id ? `${execution.api_key_id}|${execution.package_install_path}` : undefined,
      });
      both?.clear();
      await progressed?.flush();
      const { mapped } = outcome;
      if (cancel?.signal.aborted && mapped.status !== 'succeeded') {
        // Its caller cancelled it and the sandbox was stopped (a tool that finished first keeps its result).
        await finishCancelled(outcome.durationMs);
        return;
      }
      if (helpers.abortSignal.aborted && mapped.status !== 'succeeded') {
        // The worker is shutting down and stopped the tool: not the tool's failure, and not counted as one. It runs
        // again on a live worker (the job's next attempt), unless this was its last.
        if (!lastAttempt) {
          await requeueExecution(deps.db, executionId, execution.attempts);
          deps.logger.warn({ executionId, attempt: helpers.job.attempts }, 'worker shutting down; the execution runs again');
          throw new RunAgain('worker shutting down; the execution runs again');
        }
        await finishExecution(deps.db, executionId, {
          status: 'failed',
          error: SHUTDOWN,
          executionTimeMs: outcome.durationMs,
          attempt: execution.attempts,
        });
        return;
      }
      if (mapped.retry && !lastAttempt) {
        await requeueExecution(deps.db, executionId, execution.attempts);
        deps.logger.warn({ executionId, attempt: helpers.job.attempts }, 'sandbox error; retrying');
        throw new RunAgain('sandbox error; retrying');
      }
      await finishRun(deps, executionId, outcome, { env: secrets, attempt: execution.attempts, uncounted: op !== undefined });
    }
  };
}
