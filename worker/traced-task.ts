/**
 * Every job runs under the request that queued it: its log lines carry that request's id (reqId) and, when the worker
 * traces, the job is a span (`job <task>`) of the request's trace — both travel in the payload's `trace`
 * (core/infra/tracing.ts). A debug line when the job starts and one when it ends tie the job's other lines to it.
 */
import type { Task } from 'graphile-worker';
import type { TaskName } from '../core/infra/jobs.js';
import { continueJobTrace } from '../core/infra/tracing.js';
import type { WorkerDeps } from './deps.js';

export function tracedTask(deps: WorkerDeps, task: TaskName, run: Task): Task {
  return (payload, helpers) => {
    const p = (payload ?? {}) as { trace?: unknown; executionId?: unknown; runId?: unknown };
    const job = {
      task,
      jobId: String(helpers.job.id),
      attempt: helpers.job.attempts,
      ...(typeof p.executionId === 'string' ? { executionId: p.executionId } : {}),
      ...(typeof p.runId === 'string' ? { runId: p.runId } : {}),
    };
    const attributes = {
      'toolshed.job.task': task,
      'toolshed.job.id': job.jobId,
      'toolshed.job.attempt': job.attempt,
      'toolshed.job.max_attempts': helpers.job.max_attempts,
      ...(job.executionId ? { 'toolshed.execution.id': job.executionId } : {}),
      ...(job.runId ? { 'toolshed.scenario_run.id': job.runId } : {}),
    };
    return continueJobTrace(p.trace, `job ${task}`, attributes, async () => {
      const started = performance.now();
      deps.logger.debug(job, 'job started');
      try {
        await run(payload, helpers);
        deps.logger.debug({ ...job, ms: Math.round(performance.now() - started) }, 'job finished');
      } catch (err) {
        deps.logger.debug({ ...job, ms: Math.round(performance.now() - started) }, 'job failed (Graphile retries it or fails it)');
        throw err;
      }
    });
  };
}
