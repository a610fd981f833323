/**
 * A Graphile Worker runner over our task list, with a heartbeat row in `workers` so that /health and the reaper
 * know which workers are alive.
 */
import os from 'node:os';
import crypto from 'node:crypto';
import { EventEmitter } from 'node:events';
import { run, parseCrontab, type Runner, type LogFunctionFactory, type WorkerEvents, Logger as GraphileLogger } from 'graphile-worker';
import type { WorkerDeps } from './deps.js';
import { CRONTAB, taskList } from './tasks/index.js';
import { failOwnRunning, reapOnce } from './reaper.js';

export interface WorkerHandle {
  id: string;
  runner: Runner;
  stop(): Promise<void>;
}

const HEARTBEAT_MS = 5_000;
const REAP_EVERY_MS = 15_000;

export async function startWorker(deps: WorkerDeps, connectionString: string, opts: { cron?: boolean } = {}): Promise<WorkerHandle> {
  const id = `${os.hostname()}:${process.pid}:${crypto.randomBytes(3).toString('hex')}`;
  // Graphile's own worker ids (what jobs.locked_by holds), announced with every heartbeat for the reaper.
  const graphileIds = new Set<string>();
  const events: WorkerEvents = new EventEmitter();
  events.on('worker:create', ({ worker }) => graphileIds.add(worker.workerId));
  const beat = () =>
    deps.db.raw(
      `insert into workers (id, hostname, pid, graphile_ids) values (?, ?, ?, ?)
       on conflict (id) do update set last_seen_at = now(), graphile_ids = excluded.graphile_ids`,
      [id, os.hostname(), process.pid, [...graphileIds]],
    );
  await beat();
  const timer = setInterval(() => void beat().catch((err) => deps.logger.warn({ err: err.message }, 'worker heartbeat failed')), HEARTBEAT_MS);
  timer.unref();
  const reaper = setInterval(() => void reapOnce(deps.db, deps.logger).catch((err) => deps.logger.warn({ err: err.message }, 'reaper failed')), REAP_EVERY_MS);
  reaper.unref();
  const logFactory: LogFunctionFactory = (scope) => (level, message, meta) => {
    const lvl = level === 'error' ? 'error' : level === 'warning' ? 'warn' : 'debug';
    deps.logger[lvl]({ scope: scope.label, taskIdentifier: scope.taskIdentifier, jobId: scope.jobId, ...(meta?.error ? { err: String(meta.error) } : {}) }, message);
  };
  const runner = await run({
    connectionString,
    concurrency: Math.max(1, deps.config.WORKER_CONCURRENCY),
    taskList: taskList(deps, id) as never,
    parsedCronItems: opts.cron === false ? [] : parseCrontab(CRONTAB),
    noHandleSignals: true,
    pollInterval: 1000,
    logger: new GraphileLogger(logFactory),
    events,
  });
  await beat();
  return {
    id,
    runner,
    async stop() {
      clearInterval(timer);
      clearInterval(reaper);
      await runner.stop();
      await failOwnRunning(deps.db, id);
      await deps.db('workers').where({ id }).delete().catch(() => undefined);
    },
  };
}
