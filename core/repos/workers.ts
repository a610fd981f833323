/**
 * workers: one row per live worker process, renewed by its heartbeat with the ids of the Graphile jobs it is running.
 * A job is dead exactly when it is locked and no process that heart-beat within the window lists it: whatever id
 * Graphile locked it with (its pool's or a worker's), the lease is the process's own list. The reaper frees such
 * jobs one by one (Graphile's public force_unlock_workers() can only free every job of a lock id, and a pool's id
 * is shared by all of its live jobs), guarded by the lock time it saw, so a job locked again meanwhile is left alone.
 */
import type { Db, Knex } from '../infra/db.js';

/** Renews the process's lease on the jobs it runs; `leaseSeconds` is its own window, by which others judge it. */
export async function beatWorker(db: Db, w: { id: string; hostname: string; pid: number; jobIds: string[]; leaseSeconds: number }): Promise<void> {
  await db.raw(
    `insert into workers (id, hostname, pid, job_ids, lease_seconds) values (?, ?, ?, ?::bigint[], ?)
     on conflict (id) do update set last_seen_at = now(), job_ids = excluded.job_ids, lease_seconds = excluded.lease_seconds`,
    [w.id, w.hostname, w.pid, w.jobIds, w.leaseSeconds],
  );
}

/**
 * The SQL condition "worker `w` is alive": it heart-beat within its own window or the judge's, whichever is longer
 * (a process with a longer lease beats less often). One parameter: the judge's window in seconds.
 */
export const WORKER_ALIVE = `w.last_seen_at > now() - make_interval(secs => greatest(?, w.lease_seconds))`;

/** Forgets processes that have not heart-beat for a day (killed ones never remove their own row). */
export async function forgetLongDeadWorkers(db: Db): Promise<number> {
  return db('workers').where('last_seen_at', '<', db.raw(`now() - interval '1 day'`)).delete();
}

/**
 * Workers that heart-beat within the last `seconds`, or within their own lease window if longer (a worker with a
 * 200 s lease beats every 50 s: the health report's worker count).
 */
export async function countLiveWorkers(db: Db, seconds: number): Promise<number> {
  const row = await db('workers as w').whereRaw(WORKER_ALIVE, [seconds]).count('* as n').first();
  return Number(row?.n ?? 0);
}

export async function removeWorker(db: Db, id: string): Promise<void> {
  await db('workers').where({ id }).delete();
}

/** Locked jobs that no live process leases, locked for longer than the window. */
export interface DeadJob {
  id: string;
  /** As text: a JS Date would drop its microseconds, and the release compares it exactly. */
  locked_at: string;
  task_identifier: string;
  payload: Record<string, unknown>;
  /** Attempts used (Graphile counts one when it locks a job) and allowed. */
  attempts: number;
  max_attempts: number;
}

export async function findDeadJobs(db: Db, windowSeconds: number): Promise<DeadJob[]> {
  const { rows } = await db.raw(
    `with win as (
       -- the longest window of any live process: one with a longer lease may not have listed a job it just took yet
       -- (a dead one's window is no reason to wait)
       select make_interval(secs => greatest(?, coalesce(max(lease_seconds), 0))) as s from workers w where ${WORKER_ALIVE})
     select j.id::text, j.locked_at::text, t.identifier as task_identifier, j.payload, j.attempts, j.max_attempts
       from graphile_worker._private_jobs j
       join graphile_worker._private_tasks t on t.id = j.task_id
       cross join win
      where j.locked_at is not null
        and j.locked_at < now() - win.s
        and not exists (select 1 from workers w where ${WORKER_ALIVE} and j.id = any(w.job_ids))
        -- right after the database itself (re)started, live processes have not renewed their leases yet
        and pg_postmaster_start_time() < now() - 2 * win.s`,
    [windowSeconds, windowSeconds, windowSeconds],
  );
  return rows;
}

/**
 * Jobs that failed for good (unlocked, every attempt used) for longer than the window: Graphile never runs them
 * again, so their records (a run, an import, an execution) would wait for ever. The reaper fails those and drops them.
 */
export async function findFailedJobs(db: Db, windowSeconds: number): Promise<DeadJob[]> {
  const { rows } = await db.raw(
    `select j.id::text, j.locked_at::text, t.identifier as task_identifier, j.payload, j.attempts, j.max_attempts
       from graphile_worker._private_jobs j
       join graphile_worker._private_tasks t on t.id = j.task_id
      where j.locked_at is null and j.attempts >= j.max_attempts
        and j.updated_at < now() - make_interval(secs => ?)`,
    [windowSeconds],
  );
  return rows;
}

/**
 * Removes a dead job that has no attempt left (Graphile would never run it again, and our record would wait for it
 * for ever); the caller then fails its record. False when it was completed or locked again since it was seen.
 */
export async function dropDeadJob(db: Db, job: Pick<DeadJob, 'id' | 'locked_at'>): Promise<boolean> {
  const { rows } = await db.raw(
    `with j as (
       delete from graphile_worker._private_jobs where id = ?::bigint and locked_at = ?::timestamptz
       returning id, job_queue_id)
     , q as (
       update graphile_worker._private_job_queues set locked_at = null, locked_by = null
        where id in (select job_queue_id from j where job_queue_id is not null))
     select id from j`,
    [job.id, job.locked_at],
  );
  return rows.length > 0;
}

/**
 * Unlocks the jobs that `where` selects (and their queues' locks) and puts their executions still `running` back in the
 * queue, in one statement; the ids it freed.
 */
async function unlockJobs(db: Db, where: string, bindings: Knex.RawBinding[]): Promise<string[]> {
  const { rows } = await db.raw(
    `with j as (
       update graphile_worker._private_jobs set locked_at = null, locked_by = null
        where ${where}
       returning id, job_queue_id),
     q as (
       update graphile_worker._private_job_queues set locked_at = null, locked_by = null
        where id in (select job_queue_id from j where job_queue_id is not null))
     , e as (
       update executions set status = 'queued', worker_id = null
        where status = 'running' and job_id in (select id from j))
     select id::text from j`,
    bindings,
  );
  return rows.map((r: { id: string }) => r.id);
}

/**
 * Frees one dead job so that a live worker takes it again, and puts its execution (if any) back in the queue, in
 * one transaction. False when the job was completed or locked again since it was seen.
 */
export async function releaseDeadJob(db: Db, job: Pick<DeadJob, 'id' | 'locked_at'>): Promise<boolean> {
  return (await unlockJobs(db, 'id = ?::bigint and locked_at = ?::timestamptz', [job.id, job.locked_at])).length > 0;
}

/** Deletes a job that failed for good (unlocked, no attempt left), if it still is one: it holds the sealed env. */
export async function dropFailedJob(db: Db, jobId: string): Promise<void> {
  await db.raw(
    `delete from graphile_worker._private_jobs
      where id = ?::bigint and locked_at is null and attempts >= max_attempts`,
    [jobId],
  );
}

/**
 * A stopping process lets go of the jobs it still holds locked once its tasks have returned: Graphile 0.17 writes a
 * job's completion or failure without waiting for it, and a process that exits right after `runner.stop()` may
 * never write it, leaving the job locked until the reaper judged it dead (a window later, sealed env and all). Freed
 * here, such a job runs again at once (a finished one as a no-op); an execution still `running` goes back to `queued`.
 */
export async function releaseOwnJobs(db: Db, jobIds: string[]): Promise<number> {
  if (jobIds.length === 0) return 0;
  return (await unlockJobs(db, 'id = any(?::bigint[]) and locked_at is not null', [jobIds])).length;
}
