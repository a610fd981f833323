/**
 * A Graphile Worker runner over our task list. The process heart-beats a row in `workers` listing the Graphile jobs
 * it is running at that moment (its lease on them); the reaper frees the locked jobs that no live process lists.
 * Liveness thus never depends on which id Graphile locks a job with (a pool's id, shared by all of its jobs, or a
 * worker's). Right after a database outage the reaper waits a full window, so that live processes have renewed their
 * leases before anything is judged dead (and the reaper's query waits two windows after the database itself started).
 */
import os from 'node:os';
import crypto from 'node:crypto';
import { run, parseCrontab, type Runner, type LogFunctionFactory, type Task, type TaskList, Logger as GraphileLogger } from 'graphile-worker';
import type { WorkerDeps } from './deps.js';
import { CRONTAB, taskList } from './tasks/index.js';
import { scheduleNpmPoll } from './tasks/npm-poll.js';
import { failOwnRunning, reapOnce } from './reaper.js';
import { beatWorker, releaseOwnJobs, removeWorker } from '../core/repos/workers.js';

const SHUTDOWN_ABORT_MS = 5000;

export interface WorkerHandle {
  id: string;
  /** Graphile's runner now (a new one replaces a pool that ended by itself). */
  readonly runner: Runner;
  stop(): Promise<void>;
}

export async function startWorker(deps: WorkerDeps, connectionString: string, opts: { cron?: boolean } = {}): Promise<WorkerHandle> {
  const id = `${os.hostname()}:${process.pid}:${crypto.randomBytes(3).toString('hex')}`;
  const leaseSeconds = deps.config.WORKER_LEASE_SECONDS;
  const heartbeatMs = (leaseSeconds * 1000) / 4;
  // The Graphile jobs this process is running now, each with its number of holders (an attempt running, or one that
  // ended less than a window ago): what every heartbeat renews. A count, not a set: a retry of the same job may start
  // here while the previous attempt's hold lingers, and the linger's end must not drop the live attempt's lease.
  const leased = new Map<string, number>();
  const hold = (jobId: string) => leased.set(jobId, (leased.get(jobId) ?? 0) + 1);
  const release = (jobId: string) => {
    const n = (leased.get(jobId) ?? 1) - 1;
    if (n > 0) leased.set(jobId, n);
    else leased.delete(jobId);
  };
  // A fresh process may judge at once (a database that just restarted is caught by the reaper's own query); after
  // our own heartbeat failed, we wait a whole window of healthy ones first.
  let healthySince = 0;
  let lastBeatFailed = false;
  const beat = async () => {
    try {
      await beatWorker(deps.db, { id, hostname: os.hostname(), pid: process.pid, jobIds: [...leased.keys()], leaseSeconds });
      if (lastBeatFailed) healthySince = Date.now();
      lastBeatFailed = false;
    } catch (err) {
      lastBeatFailed = true;
      deps.logger.warn({ err: (err as Error).message }, 'worker heartbeat failed');
    }
  };
  await beat();
  const timer = setInterval(() => void beat(), heartbeatMs);
  timer.unref();
  const reaper = setInterval(() => {
    // Judge others only after our own heartbeat has been healthy for a whole window (see the header).
    if (lastBeatFailed || Date.now() - healthySince < leaseSeconds * 1000 + heartbeatMs) return;
    void reapOnce(deps.db, deps.logger, leaseSeconds, (task) => deps.metrics?.jobRerun(task)).catch((err) =>
      deps.logger.warn({ err: err.message }, 'reaper failed'),
    );
  }, leaseSeconds * 750);
  reaper.unref();
  const leasing =
    (task: Task): Task =>
    async (payload, helpers) => {
      const jobId = String(helpers.job.id);
      hold(jobId);
      const { task_identifier: name, run_at: runAt, attempts, max_attempts: maxAttempts } = helpers.job;
      const started = performance.now();
      deps.metrics?.jobStarted(name, (Date.now() - new Date(runAt).getTime()) / 1000);
      let outcome: 'succeeded' | 'failed' | 'retried' = 'failed';
      try {
        const result = await task(payload, helpers);
        outcome = 'succeeded';
        return result;
      } catch (err) {
        // Graphile counts this attempt already: one with attempts left is retried, the last fails for good.
        outcome = attempts < maxAttempts ? 'retried' : 'failed';
        throw err;
      } finally {
        deps.metrics?.jobEnded(name, outcome, (performance.now() - started) / 1000);
        // Graphile completes (or fails) the job in the database after the task returns, without our waiting; until it
        // has, the job is still locked. Keep leasing it for one more window so that the reaper never takes a job
        // whose completion is merely in flight for dead.
        const linger = setTimeout(() => release(jobId), leaseSeconds * 1000);
        linger.unref();
      }
    };
  const tasks: TaskList = Object.fromEntries(Object.entries(taskList(deps, id)).map(([name, task]) => [name, leasing(task as Task)]));
  const logFactory: LogFunctionFactory = (scope) => (level, message, meta) => {
    const lvl = level === 'error' ? 'error' : level === 'warning' ? 'warn' : 'debug';
    deps.logger[lvl](
      { scope: scope.label, taskIdentifier: scope.taskIdentifier, jobId: scope.jobId, ...(meta?.error ? { err: String(meta.error) } : {}) },
      message,
    );
  };
  const startRunner = () =>
    run({
      connectionString,
      concurrency: Math.max(1, deps.config.WORKER_CONCURRENCY),
      taskList: tasks,
      parsedCronItems: opts.cron === false ? [] : parseCrontab(CRONTAB),
      noHandleSignals: true,
      // A stop waits this long for running jobs, then aborts them (helpers.abortSignal: tool runs, health checks and the
      // npm poll end promptly), well within the process's own stop deadline (STOP_DEADLINE_MS).
      gracefulShutdownAbortTimeout: SHUTDOWN_ABORT_MS,
      // Unbatched, Graphile writes a job's completion (or failure) without waiting for it, and a stop does not wait
      // for that write either: a job that finished just before a stop stayed in the queue and ran again. Batched
      // (with no delay), the stop flushes them before it returns.
      preset: { worker: { completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
      pollInterval: 1000,
      logger: new GraphileLogger(logFactory),
    });
  let runner = await startRunner();
  let stopping = false;
  let restartTimer: NodeJS.Timeout | undefined;
  // Graphile ends its pool by itself when it cannot write a job's completion or failure (the database went away at
  // that moment): "queue is in an inconsistent state; aborting". The process would keep beating as alive and never
  // take a job again, so a pool that ends while we are not stopping is replaced, retrying while the database is away.
  // The job whose completion was lost stays locked until its lease lapses; the reaper then frees it, as after a killed
  // worker (its task finds its work already recorded).
  const watch = (r: Runner) => {
    void r.promise.then(
      () => replace(r, undefined),
      (err: Error) => replace(r, err),
    );
  };
  const replace = (ended: Runner, err: Error | undefined, attempt = 0): void => {
    if (stopping || ended !== runner) return;
    if (attempt === 0) deps.logger.error({ err: err?.message }, 'the job runner stopped by itself; starting a new one');
    restartTimer = setTimeout(
      () => {
        if (stopping) return;
        startRunner().then(
          (next) => {
            if (stopping) return void next.stop().catch(() => undefined);
            runner = next;
            watch(next);
            deps.logger.info('a new job runner started');
          },
          (startErr: Error) => {
            deps.logger.warn({ err: startErr.message }, 'starting a new job runner failed; trying again');
            replace(ended, startErr, attempt + 1);
          },
        );
      },
      Math.min(30_000, 500 * 2 ** Math.min(attempt, 6)),
    );
  };
  watch(runner);
  await beat();
  // The npm poller (NPM_POLL_INTERVAL_MINUTES; off at 0) reschedules itself; a starting worker makes sure it is scheduled.
  await scheduleNpmPoll(deps, 'preserve_run_at');
  return {
    id,
    get runner() {
      return runner;
    },
    async stop() {
      stopping = true;
      clearTimeout(restartTimer);
      clearInterval(timer);
      clearInterval(reaper);
      await runner.stop().catch((err: Error) => deps.logger.warn({ err: err.message }, 'the job runner had already stopped'));
      // Every task has returned: what is still locked in our name had its completion or failure lost with the stop.
      await releaseOwnJobs(deps.db, [...leased.keys()]).catch((err) => deps.logger.warn({ err: err.message }, 'could not release own jobs at stop'));
      await failOwnRunning(deps.db, id);
      await removeWorker(deps.db, id).catch(() => undefined);
    },
  };
}
