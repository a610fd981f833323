/**
 * The service as the benchmarks run it: embedded Postgres in a temporary directory, migrations, a Graphile Worker
 * with gVisor sandboxes and the API, all in this process (as `npm start` runs them), with rate limits set high
 * but on. The worker can be swapped for one with other settings (pool off, reuse mode).
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bootedConfig, loadConfig, type BootedConfig } from '../core/infra/config.js';
import { createDb } from '../core/infra/db.js';
import { createLogger } from '../core/infra/logger.js';
import { migrateAll } from '../core/infra/bootstrap.js';
import { startEmbeddedPostgres } from '../core/infra/embedded-postgres.js';
import { startApi, type ApiHandle } from '../api/server.js';
import { startWorkerProcess, type WorkerProcess } from '../worker/main.js';

export interface BenchService {
  dir: string;
  databaseUrl: string;
  config: BootedConfig;
  api: ApiHandle;
  worker: WorkerProcess;
  /** Replaces the worker with one whose configuration differs by `env`. */
  swapWorker(env: Record<string, string>): Promise<void>;
  close(): Promise<void>;
}

/** Rate limits no bench reaches: a bench measures the service, not its limits. */
export const BENCH_RATE_LIMITS = {
  RATE_LIMIT_FREE_MINUTE: '1000000',
  RATE_LIMIT_FREE_DAY: '100000000',
  RATE_LIMIT_PRO_MINUTE: '1000000000',
  RATE_LIMIT_PRO_DAY: '1000000000',
  RATE_LIMIT_ENTERPRISE_MINUTE: '1000000000',
  RATE_LIMIT_ENTERPRISE_DAY: '1000000000',
};

/**
 * A bench's own folder and Postgres: a throwaway server, durability off as every earlier run measured it (`npm start`'s
 * own writes durably), with the database `bench` migrated.
 */
export async function startBenchDatabase(): Promise<{ dir: string; databaseUrl: string; pg: { stop(): Promise<void> } }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolshed-bench-'));
  await fs.chmod(dir, 0o755);
  const pg = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), durability: 'none' });
  const admin = createDb(pg.url(), { max: 1 });
  await admin.raw('create database bench');
  await admin.destroy();
  const databaseUrl = pg.url('bench');
  await migrateAll(databaseUrl);
  return { dir, databaseUrl, pg };
}

export async function startBenchService(env: Record<string, string> = {}): Promise<BenchService> {
  const { dir, databaseUrl, pg } = await startBenchDatabase();
  const secrets = { SECRETS_KEY: crypto.randomBytes(24).toString('hex'), ADMIN_TOKEN: crypto.randomBytes(24).toString('hex') };
  const configFor = (extra: Record<string, string>) =>
    bootedConfig(
      loadConfig({
        DATA_DIR: dir,
        ...secrets,
        LOG_LEVEL: 'warn',
        SANDBOX: 'gvisor',
        SANDBOX_POOL_SIZE: '2',
        NPM_POLL_INTERVAL_MINUTES: '0',
        WORKER_CONCURRENCY: '8',
        ...BENCH_RATE_LIMITS,
        ...env,
        ...extra,
      }),
    );
  const config = configFor({});
  const logger = createLogger(config.LOG_LEVEL);
  const service: BenchService = {
    dir,
    databaseUrl,
    config,
    worker: await startWorkerProcess(config, databaseUrl, logger, { cron: false }),
    api: await startApi(config, databaseUrl, logger, 0),
    async swapWorker(extra) {
      await service.worker.close();
      service.worker = await startWorkerProcess(configFor(extra), databaseUrl, logger, { cron: false });
    },
    async close() {
      await service.api.close();
      await service.worker.close().catch(() => undefined);
      await pg.stop();
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
  return service;
}

/** POST with the admin token or a key; throws on a non-2xx answer. */
export async function post(base: string, p: string, body: unknown, token?: string): Promise<any> {
  const res = await fetch(base + p, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  const json = await res.json();
  if (res.status >= 300) throw new Error(`${p}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

export const TEXT_TOOLS_DIR = path.resolve(new URL('../examples/tools/text-tools', import.meta.url).pathname);
