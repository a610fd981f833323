/**
 * executions made by a worker for its own job (a scenario run's tool calls): inserted already `running` on that
 * worker, with no job of their own, in one statement. They finish like any other (finishExecution), and the reaper
 * fails them if their worker dies. They count against their user like the user's own calls (`caller`), so they take
 * part in the user's MAX_ACTIVE_EXECUTIONS cap and fair share.
 */
import type { Db } from '../infra/db.js';
import type { ExecutionRow } from './executions.js';
import { userCaller } from '../types.js';

export async function insertRunningExecution(
  db: Db,
  e: { toolId: string; packageVersion?: string | null; userId: string | null; origin: string; params: unknown; workerId: string },
): Promise<ExecutionRow> {
  const { rows } = await db.raw(
    `insert into executions (tool_id, package_version, user_id, origin, params, status, worker_id, started_at, heartbeat_at, attempts, caller)
     values (?, ?, ?, ?, ?::jsonb, 'running', ?, now(), now(), 1, ?)
     returning *`,
    [e.toolId, e.packageVersion ?? null, e.userId, e.origin, JSON.stringify(e.params), e.workerId, e.userId ? userCaller(e.userId) : null],
  );
  return rows[0];
}
