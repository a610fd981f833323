/** SQL of tool health: one check recorded, and the tool's status moved by it (HEALTHY, or BROKEN past a threshold). */
import type { Db } from '../db.js';

/**
 * Records a check of a tool and updates the tool: a pass makes it HEALTHY; a failure counts, and makes it BROKEN
 * once `brokenAfter` consecutive checks have failed. Run inside the caller's transaction.
 */
export async function recordHealthCheck(db: Db, toolId: string, c: { error: string | null; durationMs: number; brokenAfter: number }): Promise<void> {
  await db('health_checks').insert({ tool_id: toolId, passed: c.error === null, error: c.error, duration_ms: Math.round(c.durationMs) });
  if (c.error === null) {
    await db('tools')
      .where({ id: toolId })
      .update({ health_status: 'HEALTHY', health_error: null, consecutive_health_failures: 0, last_health_check_at: db.fn.now() });
    return;
  }
  await db('tools')
    .where({ id: toolId })
    .update({
      consecutive_health_failures: db.raw('consecutive_health_failures + 1'),
      health_error: c.error,
      health_status: db.raw(`case when consecutive_health_failures + 1 >= ? then 'BROKEN' else health_status end`, [c.brokenAfter]),
      last_health_check_at: db.fn.now(),
    });
}
