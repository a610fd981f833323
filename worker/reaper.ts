/**
 * The reaper: an execution whose worker stopped heart-beating (killed, machine lost) is re-run within a minute.
 * Graphile Worker would keep such a job locked for hours; we unlock the dead worker's jobs with its public
 * force_unlock_workers(), and the job runs again on a live worker. Every worker runs the reaper; it is idempotent.
 */
import type { Knex } from 'knex';
import type { Logger } from '../core/logger.js';
import { finishExecution, requeueExecution } from '../core/repos/executions.js';

export const STALE_AFTER_SECONDS = 20;

export async function reapOnce(db: Knex, logger: Logger): Promise<number> {
  const { rows } = await db.raw(
    `select e.id, j.locked_by
       from executions e
       left join workers w on w.id = e.worker_id
       left join graphile_worker.jobs j on j.id = e.job_id
      where e.status = 'running'
        and (w.id is null or w.last_seen_at < now() - make_interval(secs => ?))`,
    [STALE_AFTER_SECONDS],
  );
  for (const r of rows as { id: string; locked_by: string | null }[]) {
    if (r.locked_by) {
      await requeueExecution(db, r.id);
      await db.raw('select graphile_worker.force_unlock_workers(array[?]::text[])', [r.locked_by]);
      logger.warn({ executionId: r.id }, 'worker died during an execution; re-running it');
    } else {
      await finishExecution(db, r.id, { status: 'failed', error: { code: 'WORKER_LOST', message: 'The worker running this execution died' }, executionTimeMs: null });
      logger.warn({ executionId: r.id }, 'worker died during an execution; marked failed');
    }
  }
  return rows.length;
}

/** Marks this worker's executions that are still running after a shutdown as failed (never left `running`). */
export async function failOwnRunning(db: Knex, workerId: string): Promise<void> {
  const rows: { id: string }[] = await db('executions').where({ worker_id: workerId, status: 'running' }).select('id');
  for (const r of rows) {
    await finishExecution(db, r.id, { status: 'failed', error: { code: 'WORKER_SHUTDOWN', message: 'The worker shut down during this execution' }, executionTimeMs: null });
  }
}
