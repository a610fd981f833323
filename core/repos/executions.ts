/** executions: one row per tool call; the worker moves it queued → running → final and NOTIFYs each step. */
import type { Db } from '../db.js';
import type { ExecutionStatus } from '../types.js';

export interface ExecutionRow {
  id: string;
  tool_id: string;
  user_id: string | null;
  api_key_id: string | null;
  origin: string;
  status: ExecutionStatus;
  params: unknown;
  result: unknown;
  error: { code: string; message: string } | null;
  execution_time_ms: number | null;
  attempts: number;
  job_id: string | null;
  worker_id: string | null;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
}

export const FINAL_STATUSES: ExecutionStatus[] = ['succeeded', 'failed', 'timed_out'];

export function isFinalExecution(e: Pick<ExecutionRow, 'status'>): boolean {
  return FINAL_STATUSES.includes(e.status);
}

export async function insertExecution(
  db: Db,
  e: { toolId: string; userId?: string | null; apiKeyId?: string | null; origin: string; params: unknown },
): Promise<ExecutionRow> {
  const [row] = await db('executions')
    .insert({ tool_id: e.toolId, user_id: e.userId ?? null, api_key_id: e.apiKeyId ?? null, origin: e.origin, params: JSON.stringify(e.params) })
    .returning('*');
  return row;
}

export async function setExecutionJob(db: Db, id: string, jobId: string): Promise<void> {
  await db('executions').where({ id }).update({ job_id: jobId });
}

export async function findExecution(db: Db, id: string): Promise<ExecutionRow | undefined> {
  return db('executions').where({ id }).first();
}

export async function notifyExecution(db: Db, id: string, status: ExecutionStatus): Promise<void> {
  await db.raw('select pg_notify(?, ?)', ['toolshed_jobs', JSON.stringify({ kind: 'execution', id, status })]);
}

/** Claims the execution for a worker (queued, or running on a dead worker); undefined when already final. */
export async function markExecutionRunning(db: Db, id: string, workerId: string): Promise<ExecutionRow | undefined> {
  const [row] = await db('executions')
    .where({ id })
    .whereIn('status', ['queued', 'running'])
    .update({ status: 'running', worker_id: workerId, started_at: db.fn.now(), attempts: db.raw('attempts + 1'), heartbeat_at: db.fn.now() })
    .returning('*');
  if (row) await notifyExecution(db, id, 'running');
  return row;
}

export async function requeueExecution(db: Db, id: string): Promise<void> {
  await db('executions').where({ id }).update({ status: 'queued', worker_id: null });
}

export async function finishExecution(
  db: Db,
  id: string,
  f: { status: ExecutionStatus; result?: unknown; error?: { code: string; message: string } | null; executionTimeMs: number | null },
): Promise<boolean> {
  const n = await db('executions')
    .where({ id })
    .whereNotIn('status', FINAL_STATUSES)
    .update({
      status: f.status,
      result: f.result === undefined ? null : JSON.stringify(f.result),
      error: f.error ? JSON.stringify(f.error) : null,
      execution_time_ms: f.executionTimeMs,
      completed_at: db.fn.now(),
    });
  if (n > 0) await notifyExecution(db, id, f.status);
  return n > 0;
}
