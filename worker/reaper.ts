/**
 * The reaper: jobs whose worker process stopped heart-beating (killed, machine lost) run again within a minute.
 * Graphile Worker would keep such a job locked for hours; we unlock the dead process's jobs with Graphile's public
 * force_unlock_workers(), and they run again on a live worker — executions and scenario runs alike (their tasks
 * re-claim a `running` row). Every worker runs the reaper; it is idempotent.
 */
import type { Knex } from 'knex';
import type { Logger } from '../core/logger.js';
import { finishExecution } from '../core/repos/executions.js';

export const STALE_AFTER_SECONDS = 20;

export async function reapOnce(db: Knex, logger: Logger): Promise<number> {
  // Locked by a Graphile worker that no live process of ours announced (a job locked in the last 20 s may belong
  // to a process that has not announced its ids yet, so those wait).
  const { rows: dead } = await db.raw(
    `select distinct j.locked_by
       from graphile_worker.jobs j
      where j.locked_by is not null
        and j.locked_at < now() - make_interval(secs => ?)
        and not exists (select 1 from workers w
                         where w.last_seen_at > now() - make_interval(secs => ?) and j.locked_by = any(w.graphile_ids))`,
    [STALE_AFTER_SECONDS, STALE_AFTER_SECONDS],
  );
  const ids = (dead as { locked_by: string }[]).map((r) => r.locked_by);
  if (ids.length > 0) {
    await db.raw(
      `update executions set status = 'queued', worker_id = null
        where status = 'running' and job_id in (select id from graphile_worker.jobs where locked_by = any(?::text[]))`,
      [ids],
    );
    await db.raw('select graphile_worker.force_unlock_workers(?::text[])', [ids]);
    logger.warn({ graphileWorkers: ids }, 'unlocked the jobs of dead workers; they run again');
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
  return ids.length + orphans.length;
}

/** Marks this worker's executions that are still running after a shutdown as failed (never left `running`). */
export async function failOwnRunning(db: Knex, workerId: string): Promise<void> {
  const rows: { id: string }[] = await db('executions').where({ worker_id: workerId, status: 'running' }).select('id');
  for (const r of rows) {
    await finishExecution(db, r.id, { status: 'failed', error: { code: 'WORKER_SHUTDOWN', message: 'The worker shut down during this execution' }, executionTimeMs: null });
  }
}
