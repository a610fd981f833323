/**
 * What the service is doing right now, for the operator's page (GET /api/admin/operations): worker processes with the
 * jobs they lease, the Graphile queue by task, imports in progress, the last hour's failures and a per-minute count of
 * finished executions and scenario runs. Reads only; every query is bounded (the queue by its size, the rest by the
 * last hour, through indexes).
 */
import type { Db } from '../infra/db.js';
import { WORKER_ALIVE } from './workers.js';

export interface WorkerState {
  id: string;
  hostname: string;
  pid: number;
  leaseSeconds: number;
  lastSeenAt: Date;
  alive: boolean;
  jobs: { id: string; task: string; lockedAt: string; attempts: number }[];
}

export interface QueueState {
  task: string;
  /** Due and not taken. */
  waiting: number;
  /** Due later (retries after their back-off, scheduled polls). */
  scheduled: number;
  /** Taken by a worker. */
  running: number;
  /** Out of attempts: kept by Graphile until removed (the reaper drops ours). */
  failed: number;
  /** How long the oldest due job has waited, in seconds; null when none waits. */
  oldestWaitingSeconds: number | null;
}

export interface RecentFailure {
  kind: 'execution' | 'scenario_run' | 'import';
  id: string;
  /** The tool's name (execution), the scenario's prompt is not shown (scenario_run: null), the source (import). */
  subject: string | null;
  code: string | null;
  at: Date;
}

export interface MinuteCount {
  minute: Date;
  executionsSucceeded: number;
  executionsFailed: number;
  scenarioRuns: number;
}

export async function workerStates(db: Db, windowSeconds: number): Promise<WorkerState[]> {
  const { rows } = await db.raw(
    `select w.id, w.hostname, w.pid, w.lease_seconds, w.last_seen_at, (${WORKER_ALIVE}) as alive,
            coalesce((select json_agg(json_build_object('id', j.id::text, 'task', t.identifier, 'lockedAt', j.locked_at, 'attempts', j.attempts)
                                      order by j.locked_at)
                        from graphile_worker._private_jobs j
                        join graphile_worker._private_tasks t on t.id = j.task_id
                       where j.id = any(w.job_ids)), '[]'::json) as jobs
       from workers w
      order by w.last_seen_at desc
      limit 100`,
    [windowSeconds],
  );
  return rows.map((r: any) => ({
    id: r.id,
    hostname: r.hostname,
    pid: r.pid,
    leaseSeconds: r.lease_seconds,
    lastSeenAt: r.last_seen_at,
    alive: r.alive,
    jobs: r.jobs,
  }));
}

/**
 * The oldest open transaction in this database (another connection's; an idle `BEGIN` counts from its start), in
 * seconds, 0 when none is open: while one stays open, vacuum cannot remove the rows deleted since it began, and the
 * queue's SKIP LOCKED dequeue slows as dead job rows pile up (README, Performance: the queue under a long transaction).
 */
export async function oldestTransactionSeconds(db: Db): Promise<number> {
  const { rows } = await db.raw(
    `select coalesce(extract(epoch from now() - min(xact_start)), 0)::float8 as seconds
       from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid() and xact_start is not null and backend_type = 'client backend'`,
  );
  return Math.max(0, Math.round(rows[0].seconds * 10) / 10);
}

/**
 * The queue by task: every task Graphile knows, with zeros when it has no job (so that a metric falls to 0 rather than
 * vanishing). The operator's page and the `toolshed_jobs_*` gauges (core/infra/metrics.ts) both read this.
 */
export async function queueStates(db: Db): Promise<QueueState[]> {
  const { rows } = await db.raw(
    `select t.identifier as task,
            count(j.id) filter (where j.locked_at is null and j.attempts < j.max_attempts and j.run_at <= now())::int as waiting,
            count(j.id) filter (where j.locked_at is null and j.attempts < j.max_attempts and j.run_at > now())::int as scheduled,
            count(j.id) filter (where j.locked_at is not null)::int as running,
            count(j.id) filter (where j.locked_at is null and j.attempts >= j.max_attempts)::int as failed,
            extract(epoch from now() - min(j.run_at) filter (where j.locked_at is null and j.attempts < j.max_attempts and j.run_at <= now()))::float8
              as oldest_waiting_seconds
       from graphile_worker._private_tasks t
       left join graphile_worker._private_jobs j on j.task_id = t.id
      group by t.identifier
      order by t.identifier`,
  );
  return rows.map((r: any) => ({
    task: r.task,
    waiting: r.waiting,
    scheduled: r.scheduled,
    running: r.running,
    failed: r.failed,
    oldestWaitingSeconds: r.oldest_waiting_seconds === null ? null : Math.round(r.oldest_waiting_seconds * 10) / 10,
  }));
}

export async function importsInProgress(db: Db): Promise<{ id: string; source: string; status: string; createdAt: Date }[]> {
  const rows = await db('package_imports')
    .whereIn('status', ['queued', 'running'])
    .orderBy('created_at')
    .limit(50)
    .select('id', 'source', 'status', 'created_at');
  return rows.map((r) => ({ id: r.id, source: r.source, status: r.status, createdAt: r.created_at }));
}

/** The last hour's failures, newest first (at most `limit`): what failed, with its error code, never its message. */
export async function recentFailures(db: Db, limit: number): Promise<RecentFailure[]> {
  const { rows } = await db.raw(
    `(select 'execution' as kind, e.id::text as id, t.name as subject, e.error->>'code' as code, e.completed_at as at
        from executions e join tools t on t.id = e.tool_id
       where e.completed_at > now() - interval '1 hour' and e.status in ('failed', 'timed_out')
       order by e.completed_at desc limit ?)
     union all
     (select 'scenario_run', r.id::text, null, coalesce(r.error->>'code', 'FAILED'), r.completed_at
        from scenario_runs r
       where r.completed_at > now() - interval '1 hour' and r.status = 'failed'
       order by r.completed_at desc limit ?)
     union all
     (select 'import', i.id::text, i.source, i.error->>'code', i.completed_at
        from package_imports i
       where i.completed_at > now() - interval '1 hour' and i.status = 'failed'
       order by i.completed_at desc limit ?)
     order by at desc
     limit ?`,
    [limit, limit, limit, limit],
  );
  return rows.map((r: any) => ({ kind: r.kind, id: r.id, subject: r.subject, code: r.code, at: r.at }));
}

/** Finished executions (succeeded / not) and scenario runs per minute over the last hour: 60 minutes, oldest first. */
export async function lastHourByMinute(db: Db): Promise<MinuteCount[]> {
  const { rows } = await db.raw(
    `with minutes as (
       select generate_series(date_trunc('minute', now()) - interval '59 minutes', date_trunc('minute', now()), interval '1 minute') as minute),
     e as (
       select date_trunc('minute', completed_at) as minute,
              count(*) filter (where status = 'succeeded')::int as ok,
              count(*) filter (where status <> 'succeeded')::int as failed
         from executions
        where completed_at >= date_trunc('minute', now()) - interval '59 minutes'
        group by 1),
     r as (
       select date_trunc('minute', completed_at) as minute, count(*)::int as n
         from scenario_runs
        where completed_at >= date_trunc('minute', now()) - interval '59 minutes'
        group by 1)
     select m.minute, coalesce(e.ok, 0) as ok, coalesce(e.failed, 0) as failed, coalesce(r.n, 0) as runs
       from minutes m left join e using (minute) left join r using (minute)
      order by m.minute`,
  );
  return rows.map((r: any) => ({ minute: r.minute, executionsSucceeded: r.ok, executionsFailed: r.failed, scenarioRuns: r.runs }));
}
