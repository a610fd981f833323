/**
 * The `worker` process: Graphile Worker with our tasks, running tools in sandboxes. Any number of these, on any
 * number of machines, can share one Postgres.
 */
import type { BootedConfig } from '../core/infra/config.js';
import { createDb } from '../core/infra/db.js';
import type { Logger } from '../core/infra/logger.js';
import { bootProcess, closeOnSignals, STOP_DEADLINE_MS } from '../core/infra/bootstrap.js';
import { startTracing } from '../core/infra/tracing.js';
import { createSandboxRunner } from '../sandbox/index.js';
import { createLlmProvider } from '../core/llm/index.js';
import type { WorkerDeps } from './deps.js';
import { startWorker, type WorkerHandle } from './runner.js';
import { createMetrics } from '../core/infra/metrics.js';
import { startMetricsServer } from '../core/infra/metrics-server.js';
import { createNotifier } from '../core/infra/notify.js';
import { createCancelWatch } from './cancel-watch.js';

/** Kept of the stop deadline for closing the database connections after the sandboxes. */
const STOP_MARGIN_MS = 1500;
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

export interface WorkerProcess {
  deps: WorkerDeps;
  worker: WorkerHandle;
  /** `http://…/metrics` when WORKER_METRICS_PORT is set. */
  metricsUrl?: string;
  close(): Promise<void>;
}

export async function startWorkerProcess(config: BootedConfig, databaseUrl: string, logger: Logger, opts: { cron?: boolean } = {}): Promise<WorkerProcess> {
  const db = createDb(databaseUrl, { max: Math.max(4, config.WORKER_CONCURRENCY + 2) });
  const sandbox = await createSandboxRunner(config, logger, { onBoot: (ms) => metrics.sandboxBooted(ms / 1000) });
  const metrics = createMetrics({ warmPool: () => sandbox.poolStats?.() });
  // One LISTEN connection per worker process, for cancels of the executions it runs.
  const notifier = createNotifier(databaseUrl, logger);
  const cancels = createCancelWatch(db, notifier, logger);
  const deps: WorkerDeps = { config, db, logger, sandbox, llm: createLlmProvider(config), metrics, cancels };
  const worker = await startWorker(deps, databaseUrl, opts);
  // Workers have no HTTP server: WORKER_METRICS_PORT gives each its own /metrics (a port per process on one host).
  const metricsServer =
    config.WORKER_METRICS_PORT > 0
      ? await startMetricsServer(metrics, { port: config.WORKER_METRICS_PORT, host: config.HOST, token: config.METRICS_TOKEN })
      : undefined;
  let closing: Promise<void> | undefined;
  return {
    deps,
    worker,
    metricsUrl: metricsServer?.url,
    close() {
      // Once: a second close (a bench's, a second signal) waits for the first instead of stopping again on a
      // destroyed pool ("could not release own jobs at stop: Unable to acquire a connection").
      closing ??= closeOnce();
      return closing;
    },
  };
  async function closeOnce() {
    // Each step is logged as it ends: a stop that misses its deadline (core/infra/bootstrap.ts) shows which step held it.
    const started = performance.now();
    const since = () => Math.round(performance.now() - started);
    await metricsServer?.close();
    await worker.stop();
    cancels.close();
    await notifier.close();
    logger.info({ ms: since() }, 'jobs stopped');
    // Sandboxes get what is left of the stop deadline. One still booting on a loaded machine may not be killable in
    // time: it is left to end by itself (its input closes when this process exits, and the guest exits on that; the
    // exit handler detaches its mounts), rather than the whole stop failing.
    const budget = Math.max(0, STOP_DEADLINE_MS - STOP_MARGIN_MS - since());
    const closed = await Promise.race([sandbox.close().then(() => true), delay(budget).then(() => false)]);
    if (closed) logger.info({ ms: since() }, 'sandboxes closed');
    else logger.warn({ ms: since() }, 'sandboxes still stopping at the stop deadline: they end by themselves once this process exits');
    await db.destroy();
  }
}

async function main() {
  const { config, logger, database } = await bootProcess(process.env);
  const tracing = await startTracing(config, 'toolshed-worker');
  const proc = await startWorkerProcess(config, database.url, logger);
  logger.info({ workerId: proc.worker.id, concurrency: config.WORKER_CONCURRENCY, sandbox: config.SANDBOX, tracing: tracing.on }, 'worker started');
  closeOnSignals(logger, database, () => proc.close(), tracing.close);
}

if (import.meta.url === `file://${process.argv[1]}`) void main();
