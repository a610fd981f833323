/**
 * The reaper: a job whose process stopped heart-beating (killed, machine lost) runs again within a minute. Graphile
 * Worker would keep such a job locked for hours; we free exactly the locked jobs that no live process leases
 * (core/repos/workers.ts), and they run again on a live worker — executions, scenario runs, imports and health checks
 * alike (their tasks re-claim a `running` row as a new attempt; the old attempt can no longer finish it). A live job,
 * however long, is never freed. Every worker runs the reaper; it is idempotent.
 */
import type { Knex } from 'knex';
import type { Logger } from '../core/logger.js';
import { finishExecution } from '../core/repos/executions.js';
import { findDeadJobs, releaseDeadJob } from '../core/repos/workers.js';

export const STALE_AFTER_SECONDS = 20;

export async function reapOnce(db: Knex, logger: Logger): Promise<number> {
  const dead = await findDeadJobs(db, STALE_AFTER_SECONDS);
  let released = 0;
  for (const job of dead) {
    if (await releaseDeadJob(db, job)) {
      released++;
      logger.warn({ jobId: job.id, task: job.task_identifier }, 'freed a job whose worker process died; it runs again');
    }
  }
  // An execution still `running` on a dead process without any job left to re-run it: failed, never left running.
  const { rows: orphans } = await db.raw(
    `select e.id from executions e
       left join workers w on w.id = e.worker_id
      where e.status = 'running'
        and (w.id is null or w.last_seen_at < now() - make_interval(secs => ?))
        and not exists (select 1 from graphile_worker.jobs j where j.id = e.job_id)`,
    [STALE_AFTER_SECONDS],
  );
  for (const r of orphans as { id: string }[]) {
    await finishExecution(db, r.id, { status: 'failed', error: { code: 'WORKER_LOST', message: 'The worker running this execution died' }, executionTimeMs: null });
  }
  return released + orphans.length;
}

/** Marks this worker's executions that are still running after a shutdown as failed (never left `running`). */
export async function failOwnRunning(db: Knex, workerId: string): Promise<void> {
  const rows: { id: string }[] = await db('executions').where({ worker_id: workerId, status: 'running' }).select('id');
  for (const r of rows) {
    await finishExecution(db, r.id, { status: 'failed', error: { code: 'WORKER_SHUTDOWN', message: 'The worker shut down during this execution' }, executionTimeMs: null });
  }
}
