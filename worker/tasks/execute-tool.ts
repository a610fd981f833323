/**
 * Job: run one execution in a sandbox. Idempotent (a final execution is left alone), stoppable (the job's abort
 * signal reaches the sandbox; a tool stopped by a shutdown runs again elsewhere and is not counted as failing), and it
 * throws only to run again: after a sandbox failure, at a shutdown, or when something unexpected escaped — and then
 * the record is back in the queue, or failed on the last attempt, never left `running`. The env is opened here and goes
 * nowhere but the sandbox; every stored result or error is redacted of it.
 */
import type { Task } from 'graphile-worker';
import { openJson } from '../../core/crypto.js';
import { redactSecrets } from '../../core/executions.js';
import { parsePayload } from '../../core/jobs.js';
import { withDbRetry } from '../../core/db.js';
import { finishExecution, markExecutionRunning, requeueExecution } from '../../core/repos/executions.js';
import { TRENDING_WEIGHTS } from '../../core/scoring.js';
import type { WorkerDeps } from '../deps.js';
import { mapOutcome, UNRUNNABLE } from '../outcomes.js';

/** How long a finished execution waits for the database to come back before its outcome is given up. */
export const FINISH_RETRY_MS = 120_000;

/** Thrown to have Graphile run the job again, the record already put back in the queue. */
class RunAgain extends Error {}

const SHUTDOWN = { code: 'WORKER_SHUTDOWN', message: 'The worker shut down during this execution, on its last attempt' } as const;

export function executeToolTask(deps: WorkerDeps, workerId: () => string): Task {
  return async (payload, helpers) => {
    const { executionId, sealedEnv } = parsePayload('execute_tool', payload);
    const execution = await markExecutionRunning(deps.db, executionId, workerId());
    if (!execution) return; // already final
    const lastAttempt = helpers.job.attempts >= helpers.job.max_attempts;
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
    }

    async function run(execution: NonNullable<Awaited<ReturnType<typeof markExecutionRunning>>>): Promise<void> {
      const env = sealedEnv ? openJson<Record<string, string>>(deps.config.SECRETS_KEY!, sealedEnv) : {};
      if (!execution.tool_export_name) {
        await finishExecution(deps.db, executionId, {
          status: 'failed',
          error: { code: 'NOT_FOUND', message: 'The tool no longer exists' },
          executionTimeMs: null,
          attempt: execution.attempts,
        });
        return;
      }
      const timeoutMs = deps.config.EXECUTION_TIMEOUT_MS;
      const declared = execution.tool_permissions;
      const outcome = await deps.sandbox.execute({
        pkg: {
          name: execution.package_name!,
          version: execution.package_version!,
          dir: execution.package_install_path!,
          ...(execution.package_mcp ? { mcp: execution.package_mcp } : {}),
        },
        exportName: execution.tool_export_name,
        params: execution.params,
        // A tool that declares its secrets gets those only; egress only for a tool that declares `network`.
        env: declared?.secrets ? Object.fromEntries(Object.entries(env).filter(([name]) => declared.secrets!.includes(name))) : env,
        network: declared?.network === true,
        timeoutMs,
        signal: helpers.abortSignal,
        reuseKey:
          deps.config.SANDBOX_REUSE === 'caller-package' && execution.api_key_id ? `${execution.api_key_id}|${execution.package_install_path}` : undefined,
      });
      const mapped = mapOutcome(outcome, timeoutMs);
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
          executionTimeMs: Math.round(outcome.durationMs),
          attempt: execution.attempts,
        });
        return;
      }
      if (mapped.retry && !lastAttempt) {
        await requeueExecution(deps.db, executionId, execution.attempts);
        deps.logger.warn({ executionId, attempt: helpers.job.attempts }, 'sandbox error; retrying');
        throw new RunAgain('sandbox error; retrying');
      }
      const ok = mapped.status === 'succeeded';
      // The tool has run: its outcome must survive a database restart, or the job would run the tool again.
      const finish = () =>
        finishExecution(deps.db, executionId, {
          attempt: execution.attempts,
          status: mapped.status,
          result: redactSecrets(mapped.result, env),
          // The code is ours (a closed union), never the tool's text: only the message can carry a secret.
          error: mapped.error && { ...mapped.error, message: redactSecrets(mapped.error.message, env) },
          executionTimeMs: Math.round(outcome.durationMs),
          countAs: ok
            ? { kind: 'execution_succeeded', weight: TRENDING_WEIGHTS.executionSucceeded }
            : { kind: 'execution_failed', weight: TRENDING_WEIGHTS.executionFailed },
        });
      await withDbRetry(finish, FINISH_RETRY_MS, (err) => deps.logger.warn({ executionId, err: err.message }, 'database unreachable; retrying the finish'));
    }
  };
}
