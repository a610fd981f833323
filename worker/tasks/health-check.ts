/** Job (also on the crontab): health-check one tool, or enqueue a check for every tool when no toolId is given. */
import type { Task } from 'graphile-worker';
import { enqueue, parsePayload } from '../../core/jobs.js';
import type { WorkerDeps } from '../deps.js';
import { checkTool } from '../health.js';
import { listAllToolIds } from '../../core/repos/tools.js';

export function healthCheckTask(deps: WorkerDeps): Task {
  return async (payload) => {
    const { toolId } = parsePayload('health_check', payload ?? {});
    if (toolId) return checkTool(deps, toolId);
    for (const id of await listAllToolIds(deps.db)) {
      await enqueue(deps.db, 'health_check', { toolId: id }, { maxAttempts: 1, queueName: 'health', jobKey: `health:${id}` });
    }
  };
}
