/**
 * Job (also on the crontab): health-check one tool, or one MCP server (all of its tools from one start), or enqueue a
 * check for every tool of a package of tools and for every MCP server when neither is given.
 */
import type { Task } from 'graphile-worker';
import { enqueue, parsePayload } from '../../core/infra/jobs.js';
import type { WorkerDeps } from '../deps.js';
import { checkMcpServer, checkTool } from '../health.js';
import { listHealthTargets } from '../../core/repos/health-checks.js';

export function healthCheckTask(deps: WorkerDeps): Task {
  return async (payload, helpers) => {
    const { toolId, packageId } = parsePayload('health_check', payload ?? {});
    if (packageId) return checkMcpServer(deps, packageId, helpers.abortSignal);
    if (toolId) return checkTool(deps, toolId, helpers.abortSignal);
    const { toolIds, mcpPackageIds } = await listHealthTargets(deps.db);
    for (const id of toolIds) {
      await enqueue(deps.db, 'health_check', { toolId: id }, { maxAttempts: 1, queueName: 'health', jobKey: `health:${id}` });
    }
    for (const id of mcpPackageIds) {
      await enqueue(deps.db, 'health_check', { packageId: id }, { maxAttempts: 1, queueName: 'health', jobKey: `health:package:${id}` });
    }
  };
}
