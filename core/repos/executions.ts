/**
 * executions: one row per tool call; the worker moves it queued → running → final and NOTIFYs each step.
 * Each step on the hot path is ONE statement (CTEs), so that a call costs few round trips: enqueue = insert + job,
 * claim = update + notify, finish = update + counters + trending event + hourly tool statistics + notify.
 */
import type { ToolPermissions } from '../packages/manifest.js';
import type { Db, Knex } from '../infra/db.js';
import { WORKER_ALIVE } from './workers.js';
import type { EnvVarSpec, ExecutionStatus } from '../types.js';
import { jsonbText } from '../infra/pg-json.js';
import type { ExecutionError } from '../executions/execution-errors.js';
import { TOOL_STATS_ROLLUP } from './tool-stats.js';

export interface ExecutionRow {
  id: string;
  tool_id: string;
  /** The version of the tool's package that runs (pinned by the reference, else the latest when it was queued). */
  package_version: string | null;
  user_id: string | null;
  api_key_id: string | null;
  origin: string;
  status: ExecutionStatus;
  params: unknown;
  result: unknown;
  error: ExecutionError | null;
  execution_time_ms: number | null;
  attempts: number;
  job_id: string | null;
  worker_id: string | null;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
  /** Set when retention emptied its params and result (core/repos/retention.ts): its poll answers 410. */
  purged_at?: Date | null;
  /** Who it counts against (`user:<id>` or `ip:<bucket>`), when queued under a limit (REST and MCP calls). */
  caller?: string | null;
  /** Set when a cancel reached it while running: the worker holding it stops it (core/executions/cancel.ts). */
  cancel_requested_at?: Date | null;
  /** The digest of the MCP tools/call that queued it, which a notifications/cancelled names (api/mcp/cancel.ts). */
  mcp_request?: string | null;
}

export const FINAL_STATUSES: ExecutionStatus[] = ['succeeded', 'failed', 'timed_out'];

export function isFinalExecution(e: Pick<ExecutionRow, 'status'>): boolean {
  return FINAL_STATUSES.includes(e.status);
}

const notifyPayload = (status: string) => `json_build_object('kind', 'execution', 'id', u.id, 'status', '${status}')::text`;

/**
 * Inserts the execution and adds its Graphile Worker job in one statement (atomic on its own, and inside the
 * caller's transaction when given one). `payload(id)` builds the job payload for the new execution id. `priority`
 * is the job's Graphile priority (lower runs first; see insertExecutionWithJobCapped).
 */
export async function insertExecutionWithJob(
  db: Db,
  e: {
    id: string;
    toolId: string;
    packageVersion?: string | null;
    userId?: string | null;
    apiKeyId?: string | null;
    origin: string;
    params: unknown;
    caller?: string;
    mcpRequest?: string;
  },
  payload: (executionId: string) => unknown,
  maxAttempts: number,
  priority = 0,
): Promise<ExecutionRow> {
  const id = e.id;
  const { rows } = await db.raw(
    `with j as (select (graphile_worker.add_job('execute_tool', ?::json, max_attempts => ?, priority => ?)).id as job_id)
     insert into executions (id, tool_id, package_version, user_id, api_key_id, origin, params, job_id, caller, mcp_request)
     select ?, ?, ?, ?, ?, ?, ?::jsonb, j.job_id, ?, ? from j
     returning *`,
    [
      JSON.stringify(payload(id)),
      maxAttempts,
      priority,
      id,
      e.toolId,
      e.packageVersion ?? null,
      e.userId ?? null,
      e.apiKeyId ?? null,
      e.origin,
      JSON.stringify(e.params),
      e.caller ?? null,
      e.mcpRequest ?? null,
    ],
  );
  return rows[0];
}

/**
 * As insertExecutionWithJob, unless the caller already has `max` executions queued or running (undefined then).
 * A transaction-scoped advisory lock on the caller serialises the count and the insert, so a burst of parallel
 * requests cannot each see room for one more.
 *
 * Fair share: the job's priority is the number of executions the caller already has queued or running, and workers
 * take the lowest priority first (then the oldest). So a caller's first call goes ahead of the backlog that another
 * caller has queued: one client filling the queue with slow calls delays everyone else by at most the time for one
 * worker slot to free, not by its whole backlog.
 */
export async function insertExecutionWithJobCapped(
  db: Knex,
  e: Parameters<typeof insertExecutionWithJob>[1] & { caller: string },
  payload: (executionId: string) => unknown,
  maxAttempts: number,
  max: number,
): Promise<ExecutionRow | undefined> {
  return db.transaction(async (trx) => {
    // Two statements: a statement's snapshot is taken when it starts, so a count in the locking statement would not
    // see what the previous lock holder inserted.
    await trx.raw(`select pg_advisory_xact_lock(hashtext('executions:' || ?))`, [e.caller]);
    const { rows } = await trx.raw(`select count(*)::int as active from executions where caller = ? and status in ('queued', 'running')`, [e.caller]);
    if (rows[0].active >= max) return undefined;
    return insertExecutionWithJob(trx, e, payload, maxAttempts, Math.min(rows[0].active, 32767));
  });
}

export async function findExecution(db: Db, id: string): Promise<ExecutionRow | undefined> {
  return db('executions').where({ id }).first();
}

/** What a worker needs to run a claimed execution: the row and where its tool lives (null when the tool is gone). */
export interface ClaimedExecution extends ExecutionRow {
  tool_export_name: string | null;
  package_name: string | null;
  package_version: string | null;
  package_install_path: string | null;
  /** The integrity of the bytes that version was recorded from (null: recorded before integrity was kept). */
  package_integrity: string | null;
  /** An MCP server's launch (packages.manifest.mcp), null for other packages. */
  package_mcp: { bin: string; args: string[] } | null;
  /** The tool's declared permissions (network, secrets…); null when undeclared. */
  tool_permissions: ToolPermissions | null;
  /** The variables its version declares (which are settings, not secrets: core/tools/tool-env.ts secretValues). */
  package_env: EnvVarSpec[] | null;
}

/** Claims the execution for a worker (queued, or running on a dead worker); undefined when already final. */
export async function markExecutionRunning(db: Db, id: string, workerId: string): Promise<ClaimedExecution | undefined> {
  const { rows } = await db.raw(
    `with u as (
       update executions set status = 'running', worker_id = ?, started_at = now(), attempts = attempts + 1, heartbeat_at = now()
        where id = ? and status in ('queued', 'running')
       returning *)
     select u.*, coalesce(vt.tool->>'exportName', t.export_name) as tool_export_name,
            coalesce(vt.tool->'permissions', t.permissions) as tool_permissions, p.name as package_name,
            coalesce(v.version, p.version) as package_version, coalesce(v.install_path, p.install_path) as package_install_path, v.integrity as package_integrity,
            coalesce(v.manifest, p.manifest)->'mcp' as package_mcp, coalesce(v.env, p.env) as package_env, pg_notify('toolshed_jobs', ${notifyPayload('running')}) as notified
       from u left join tools t on t.id = u.tool_id left join packages p on p.id = t.package_id
       -- The version the execution was queued for (a pinned reference's, or the latest then): its install and export.
       left join package_versions v on v.package_id = p.id and v.version = u.package_version
       left join lateral (select x as tool from jsonb_array_elements(v.tools) x where x->>'name' = t.name limit 1) vt on true`,
    [workerId, id],
  );
  return rows[0];
}

/** Puts a running execution back in the queue, if the given attempt still owns it. */
export async function requeueExecution(db: Db, id: string, attempt: number): Promise<void> {
  await db('executions').where({ id, status: 'running', attempts: attempt }).update({ status: 'queued', worker_id: null });
}

export interface ExecutionFinish {
  status: ExecutionStatus;
  result?: unknown;
  error?: ExecutionError | null;
  executionTimeMs: number | null;
  /**
   * The attempt finishing it (executions.attempts as claimed): only the attempt that owns the running row may make
   * it final, so a late or duplicate attempt changes nothing. Unset for the reaper's and shutdown's own verdicts.
   */
  attempt?: number;
  /**
   * When the tool ran: count it on the tool and as a trending event of this weight, from the execution's caller (its
   * user for calls with no caller of their own, such as a scenario run's; `anonymous` when it has neither).
   */
  countAs?: { kind: 'execution_succeeded' | 'execution_failed'; weight: number };
  /** The reaper's verdict on a record no job will run: it may be `queued` as well as `running`. */
  alsoQueued?: boolean;
  /** A cancel of a queued execution: only a `queued` record is made final (a running one is the worker's to stop). */
  queuedOnly?: boolean;
}

/**
 * Finalises a running execution — compare-and-set from `running` (by the owning attempt when given) — counts it, adds
 * it to its tool's hourly statistics (every final execution, whatever its origin or who decided it) and notifies
 * waiters, in one statement. False when it was not running (final already, or back in the queue).
 */
export async function finishExecution(db: Db, id: string, f: ExecutionFinish): Promise<boolean> {
  const counting = f.countAs
    ? `, c as (update tools set execution_count = execution_count + 1 where id = (select tool_id from u))
       , ev as (insert into tool_events (tool_id, kind, weight, caller)
                select tool_id, ?, ?, coalesce(caller, 'user:' || user_id::text, 'anonymous') from u)`
    : '';
  const { rows } = await db.raw(
    `with u as (
       update executions set status = ?, result = ?::json, error = ?::jsonb, execution_time_ms = ?, completed_at = clock_timestamp()
        where id = ? and status ${f.queuedOnly ? "= 'queued'" : f.alsoQueued ? "in ('running', 'queued')" : "= 'running'"}${f.attempt === undefined ? '' : ' and attempts = ?'}
       returning id, tool_id, caller, user_id, status, error, execution_time_ms, completed_at)${counting}
       ${TOOL_STATS_ROLLUP}
     select pg_notify('toolshed_jobs', ${notifyPayload(f.status)}) from u`,
    [
      f.status,
      f.result === undefined ? null : JSON.stringify(f.result),
      jsonbText(f.error),
      f.executionTimeMs,
      id,
      ...(f.attempt === undefined ? [] : [f.attempt]),
      ...(f.countAs ? [f.countAs.kind, f.countAs.weight] : []),
    ],
  );
  return rows.length > 0;
}

/**
 * Executions `running` on a process that is gone (no heartbeat within the lease) with no job left to run them again:
 * the reaper fails them rather than leave them running for ever.
 */
export async function findOrphanedExecutions(db: Db, leaseSeconds: number): Promise<string[]> {
  const { rows } = await db.raw(
    `select e.id from executions e
       left join workers w on w.id = e.worker_id
      where e.status = 'running'
        and (w.id is null or not (${WORKER_ALIVE}))
        and not exists (select 1 from graphile_worker._private_jobs j where j.id = e.job_id)`,
    [leaseSeconds],
  );
  return (rows as { id: string }[]).map((r) => r.id);
}

/**
 * Executions queued whose job is gone (deleted or completed by hand), older than the window so that nothing in the
 * middle of being queued is judged; the reaper fails them. (A job that failed for good is the reaper's findFailedJobs.)
 */
export async function findStrandedExecutions(db: Db, windowSeconds: number): Promise<string[]> {
  const { rows } = await db.raw(
    `select e.id from executions e
      where e.status = 'queued'
        and e.created_at < now() - make_interval(secs => ?)
        and e.job_id is not null
        and not exists (select 1 from graphile_worker._private_jobs j where j.id = e.job_id)`,
    [windowSeconds],
  );
  return (rows as { id: string }[]).map((r) => r.id);
}

/** The executions one worker process is still running (failed when it shuts down). */
export async function findRunningExecutionsOf(db: Db, workerId: string): Promise<string[]> {
  return (await db('executions').where({ worker_id: workerId, status: 'running' }).select('id')).map((r: { id: string }) => r.id);
}

/** The channel a cancel of a running execution is told on (payload: the execution id); the worker holding it listens. */
export const CANCEL_CHANNEL = 'toolshed_cancel';

/**
 * Flags a running execution as cancelled and tells the worker holding it (NOTIFY), in one statement; false when it
 * was not running. The flag stays, for a worker that missed the NOTIFY and for a later attempt of the same job.
 */
export async function requestRunningCancel(db: Db, id: string): Promise<boolean> {
  const { rows } = await db.raw(
    `with u as (update executions set cancel_requested_at = coalesce(cancel_requested_at, now()) where id = ? and status = 'running' returning id)
     select pg_notify('${CANCEL_CHANNEL}', u.id::text) from u`,
    [id],
  );
  return rows.length > 0;
}

/** The job of an execution made final before it ran: removed unless a worker holds it (which then finds it final). */
export async function dropUnlockedJob(db: Db, jobId: string): Promise<void> {
  await db.raw('select graphile_worker.complete_jobs(array[?::bigint])', [jobId]);
}

/** Of these executions, those a cancel has reached (the worker's recheck, for a NOTIFY it may have missed). */
export async function findCancelRequested(db: Db, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.raw('select id from executions where id = any(?::uuid[]) and cancel_requested_at is not null', [ids]);
  return (rows as { id: string }[]).map((r) => r.id);
}

/** The execution still queued or running that an MCP tools/call queued (its request digest), if any. */
export async function findActiveByMcpRequest(db: Db, mcpRequest: string): Promise<ExecutionRow | undefined> {
  return db('executions').where({ mcp_request: mcpRequest }).whereIn('status', ['queued', 'running']).orderBy('created_at', 'desc').first();
}
