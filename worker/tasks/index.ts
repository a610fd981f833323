/** Every task the worker runs, in one place (payload schemas live in core/infra/jobs.ts). */
import type { Task, TaskList } from 'graphile-worker';
import type { TaskName } from '../../core/infra/jobs.js';
import type { WorkerDeps } from '../deps.js';
import { importPackageTask } from './import-package.js';
import { healthCheckTask } from './health-check.js';
import { executeToolTask } from './execute-tool.js';
import { scenarioRunTask } from './scenario-run.js';
import { sweepSessionsTask } from './sweep-sessions.js';
import { sweepToolStatsTask } from './sweep-tool-stats.js';
import { sweepRetentionTask } from './sweep-retention.js';
import { npmPollTask } from './npm-poll.js';
import { refreshDownloadsTask } from './refresh-downloads.js';
import { tracedTask } from '../traced-task.js';

export function taskList(deps: WorkerDeps, workerId: string): Partial<Record<TaskName, TaskList[string]>> {
  const tasks: Partial<Record<TaskName, Task>> = {
    import_package: importPackageTask(deps),
    health_check: healthCheckTask(deps),
    execute_tool: executeToolTask(deps, () => workerId),
    scenario_run: scenarioRunTask(deps, () => workerId),
    sweep_sessions: sweepSessionsTask(deps),
    sweep_tool_stats: sweepToolStatsTask(deps),
    sweep_retention: sweepRetentionTask(deps),
    npm_poll: npmPollTask(deps),
    refresh_downloads: refreshDownloadsTask(deps),
  };
  // Each job under the request that queued it: its request id in the log lines, its span in the trace.
  return Object.fromEntries(Object.entries(tasks).map(([name, task]) => [name, tracedTask(deps, name as TaskName, task)]));
}

/** Periodic jobs (Graphile crontab syntax). */
export const CRONTAB = [
  '0 */6 * * * health_check ?max=1 {}',
  '17 * * * * sweep_sessions ?max=1 {}',
  '41 3 * * * sweep_tool_stats ?max=1 {}',
  '23 * * * * sweep_retention ?max=1 {}',
  '7 5 * * * refresh_downloads ?max=1 {}',
].join('\n');
