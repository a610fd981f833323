/**
 * Job: run one execution in a sandbox. Idempotent (a final execution is left alone), stoppable (the job's abort
 * signal reaches the sandbox), and it throws only to retry a sandbox failure. The env is opened here and goes
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
import { mapOutcome } from '../outcomes.js';

/** How long a finished execution waits for the database to come back before its outcome is given up. */
export const FINISH_RETRY_MS = 120_000;

export function executeToolTask(deps: WorkerDeps, workerId: () => string): Task {
  return async (payload, helpers) => {
    const { executionId, sealedEnv } = parsePayload('execute_tool', payload);
    const execution = await markExecutionRunning(deps.db, executionId, workerId());
    if (!execution) return; // already final
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
      pkg: { name: execution.package_name!, version: execution.package_version!, dir: execution.package_install_path! },
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
    const lastAttempt = helpers.job.attempts >= helpers.job.max_attempts;
    if (mapped.retry && !lastAttempt && !helpers.abortSignal.aborted) {
      await requeueExecution(deps.db, executionId, execution.attempts);
      deps.logger.warn({ executionId, attempt: helpers.job.attempts }, 'sandbox error; retrying');
      throw new Error('sandbox error; retrying');
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
  };
}
