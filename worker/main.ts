/**
 * The `worker` process: Graphile Worker with our tasks, running tools in sandboxes. Any number of these, on any
 * number of machines, can share one Postgres.
 */
import type { Config } from '../core/config.js';
import { createDb } from '../core/db.js';
import type { Logger } from '../core/logger.js';
import { bootProcess, closeOnSignals } from '../core/bootstrap.js';
import { createSandboxRunner } from '../sandbox/index.js';
import { createLlmProvider } from '../core/llm/index.js';
import type { WorkerDeps } from './deps.js';
import { startWorker, type WorkerHandle } from './runner.js';

export interface WorkerProcess {
  deps: WorkerDeps;
  worker: WorkerHandle;
  close(): Promise<void>;
}

export async function startWorkerProcess(config: Readonly<Config>, databaseUrl: string, logger: Logger, opts: { cron?: boolean } = {}): Promise<WorkerProcess> {
  const db = createDb(databaseUrl, { max: Math.max(4, config.WORKER_CONCURRENCY + 2) });
  const sandbox = await createSandboxRunner(config, logger);
  const deps: WorkerDeps = { config, db, logger, sandbox, llm: createLlmProvider(config) };
  const worker = await startWorker(deps, databaseUrl, opts);
  return {
    deps,
    worker,
    async close() {
      await worker.stop();
      await sandbox.close();
      await db.destroy();
    },
  };
}

async function main() {
  const { config, logger, database } = await bootProcess(process.env);
  const proc = await startWorkerProcess(config, database.url, logger);
  logger.info({ workerId: proc.worker.id, concurrency: config.WORKER_CONCURRENCY, sandbox: config.SANDBOX }, 'worker started');
  closeOnSignals(logger, database, () => proc.close());
}

if (import.meta.url === `file://${process.argv[1]}`) void main();
