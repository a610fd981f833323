/**
 * Job (on the crontab, daily): deletes the hourly tool statistics older than the longest window (30 days) and a day
 * of margin. Nothing reads them (core/repos/tool-stats.ts); this only keeps the rollup from growing hour after hour.
 */
import type { Task } from 'graphile-worker';
import { parsePayload } from '../../core/infra/jobs.js';
import { deleteToolStatsBefore, STATS_KEPT_HOURS } from '../../core/repos/tool-stats.js';
import type { WorkerDeps } from '../deps.js';

export function sweepToolStatsTask(deps: WorkerDeps): Task {
  return async (payload) => {
    parsePayload('sweep_tool_stats', payload ?? {});
    const deleted = await deleteToolStatsBefore(deps.db, STATS_KEPT_HOURS);
    if (deleted > 0) deps.logger.info({ deleted }, 'old tool statistics deleted');
  };
}
