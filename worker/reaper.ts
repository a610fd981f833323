/**
 * The reaper: a job whose process stopped heart-beating (killed, machine lost) runs again within a minute. Graphile
 * Worker would keep such a job locked for hours; we free exactly the locked jobs that no live process leases
 * (core/repos/workers.ts), and they run again on a live worker — executions, scenario runs, imports and health checks
 * alike (their tasks re-claim a `running` row as a new attempt; the old attempt can no longer finish it). A live job,
 * however long, is never freed. Every worker runs the reaper; it is idempotent.
 */
import type { Knex } from 'knex';
import type { Logger } from '../core/infra/logger.js';
import { findOrphanedExecutions, findRunningExecutionsOf, findStrandedExecutions, finishExecution } from '../core/repos/executions.js';
import { dropDeadJob, dropFailedJob, findDeadJobs, findFailedJobs, forgetLongDeadWorkers, releaseDeadJob, type DeadJob } from '../core/repos/workers.js';
import { failRunningRun } from '../core/repos/scenario-runs.js';
import { finishImport } from '../core/repos/package-imports.js';

/** `onRerun` is told the task of each job freed to run again (the worker's metrics count them). */
export async function reapOnce(db: Knex, logger: Logger, leaseSeconds: number, onRerun?: (task: string) => void): Promise<number> {
  const dead = await findDeadJobs(db, leaseSeconds);
  let released = 0;
  for (const job of dead) {
    if (job.attempts < job.max_attempts) {
      if (await releaseDeadJob(db, job)) {
        released++;
        onRerun?.(job.task_identifier);
        logger.warn({ jobId: job.id, task: job.task_identifier, attempt: job.attempts }, 'freed a job whose worker process died; it runs again');
      }
    } else if (await dropDeadJob(db, job)) {
      released++;
      await failRecordOf(db, job, WORKER_LOST);
      logger.warn({ jobId: job.id, task: job.task_identifier }, 'a job died on every attempt; its record is failed');
    }
  }
  // An execution still `running` on a dead process without any job left to re-run it: failed, never left running.
  const orphans = await findOrphanedExecutions(db, leaseSeconds);
  for (const id of orphans) {
    await finishExecution(db, id, {
      status: 'failed',
      error: { code: 'WORKER_LOST', message: 'The worker running this execution died' },
      executionTimeMs: null,
    });
  }
  // A queued execution whose job is gone (deleted or completed by hand): failed, never left queued.
  const stranded = await findStrandedExecutions(db, leaseSeconds);
  for (const id of stranded) {
    if (await finishExecution(db, id, { status: 'failed', error: JOB_REMOVED, executionTimeMs: null, alsoQueued: true })) {
      logger.warn({ executionId: id }, 'a queued execution whose job was removed is failed');
    }
  }
  // A job that failed for good (an execution, a scenario run or an import whose every attempt threw or was stopped),
  // while its process may live on: its record is failed and the job dropped (it holds the sealed env).
  const failedJobs = await findFailedJobs(db, leaseSeconds);
  for (const job of failedJobs) {
    await failRecordOf(db, job, FAILED_FOR_GOOD);
    await dropFailedJob(db, job.id);
    logger.warn({ jobId: job.id, task: job.task_identifier }, 'a job failed on every attempt; its record is failed');
  }
  await forgetLongDeadWorkers(db);
  return released + orphans.length + stranded.length + failedJobs.length;
}

const JOB_REMOVED = { code: 'WORKER_LOST', message: 'No worker can run this execution: its job was removed' } as const;
const FAILED_FOR_GOOD = { code: 'WORKER_LOST', message: 'No worker could run this: it failed on every attempt' } as const;

/** Marks this worker's executions that are still running after a shutdown as failed (never left `running`). */
export async function failOwnRunning(db: Knex, workerId: string): Promise<void> {
  for (const id of await findRunningExecutionsOf(db, workerId)) {
    await finishExecution(db, id, {
      status: 'failed',
      error: { code: 'WORKER_SHUTDOWN', message: 'The worker shut down during this execution' },
      executionTimeMs: null,
    });
  }
}

const WORKER_LOST = { code: 'WORKER_LOST', message: 'The worker running this died on every attempt' } as const;

/** The record of a job that will not run again: failed, never left `running` (or `queued`) for ever. */
async function failRecordOf(db: Knex, job: DeadJob, error: { code: 'WORKER_LOST'; message: string }): Promise<void> {
  const id = (key: string) => String(job.payload[key] ?? '');
  switch (job.task_identifier) {
    case 'execute_tool':
      await finishExecution(db, id('executionId'), { status: 'failed', error, executionTimeMs: null, alsoQueued: true });
      return;
    case 'scenario_run':
      await failRunningRun(db, id('runId'), error);
      return;
    case 'import_package':
      await finishImport(db, id('importId'), { error });
      return;
    default:
      return; // health checks: the next one comes with the schedule
  }
}
