/**
 * The Graphile Worker queue as metrics see it (core/metrics.ts reads this at scrape time): per task, jobs due and not
 * taken, jobs taken by a worker, and how long the oldest due job has waited. Every task Graphile knows is listed, with
 * zeros when it has no job, so that a gauge falls to 0 rather than vanishing.
 */
import type { Db } from '../db.js';
import type { QueueRow } from '../metrics.js';

export async function queueByTask(db: Db): Promise<QueueRow[]> {
  const res = await db.raw<{ rows: { task: string; waiting: string; running: string; oldest: string | null }[] }>(
    `select t.identifier as task,
            count(j.id) filter (where j.locked_at is null and j.run_at <= now() and j.attempts < j.max_attempts) as waiting,
            count(j.id) filter (where j.locked_at is not null) as running,
            extract(epoch from now() - min(j.run_at) filter (where j.locked_at is null and j.run_at <= now() and j.attempts < j.max_attempts)) as oldest
       from graphile_worker._private_tasks t
       left join graphile_worker._private_jobs j on j.task_id = t.id
      group by t.identifier`,
  );
  return res.rows.map((r) => ({ task: r.task, waiting: Number(r.waiting), running: Number(r.running), oldestWaitingSeconds: Number(r.oldest ?? 0) }));
}
