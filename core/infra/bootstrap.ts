/**
 * Process start-up shared by the web, worker and all-in-one entries: the database (DATABASE_URL, or embedded
 * Postgres under DATA_DIR), migrations, and generated-once secrets for a single-machine install.
 */
import fs from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { randomBase62 } from './crypto.js';
import { bootedConfig, loadConfig, type BootedConfig, type Config } from './config.js';
import { createDb, migrateLatest } from './db.js';
import pg from 'pg';
import { embeddedUrl, readEmbeddedPassword, startEmbeddedPostgres, type EmbeddedServer } from './embedded-postgres.js';
import { migrateJobQueue } from './jobs.js';
import { createLogger, type Logger } from './logger.js';

export interface Database {
  url: string;
  embedded?: EmbeddedServer;
}

export async function resolveDatabase(config: Config, logger: Logger): Promise<Database> {
  if (config.DATABASE_URL) {
    logger.info({ database: describeUrl(config.DATABASE_URL) }, `database: ${describeUrl(config.DATABASE_URL)} (DATABASE_URL)`);
    return { url: config.DATABASE_URL };
  }
  const dataDir = path.join(config.DATA_DIR, 'pg');
  const portFile = path.join(config.DATA_DIR, 'pg-port');
  const savedPort = existsSync(portFile) ? Number(await fs.readFile(portFile, 'utf8')) : undefined;
  // Another process of this install (npm start, while the CLI runs) already serves this data directory.
  const password = await readEmbeddedPassword(dataDir);
  if (savedPort && password && existsSync(path.join(dataDir, 'postmaster.pid'))) {
    const running = embeddedUrl(savedPort, password, 'toolshed');
    if (await answers(running)) {
      logger.info({ dataDir, port: savedPort }, `database: embedded Postgres already running on port ${savedPort}, data in ${dataDir}`);
      return { url: running };
    }
  }
  logger.info({ dataDir }, `DATABASE_URL not set: starting embedded Postgres, data in ${dataDir}`);
  const embedded = await startEmbeddedPostgres({ dataDir, port: savedPort || undefined }).catch(async (err) => {
    if (!savedPort) throw err;
    return startEmbeddedPostgres({ dataDir }); // the saved port is taken: any free one will do
  });
  await fs.writeFile(portFile, String(embedded.port));
  const admin = createDb(embedded.url());
  const exists = await admin.raw(`select 1 from pg_database where datname = 'toolshed'`);
  if (exists.rows.length === 0) await admin.raw('create database toolshed');
  await admin.destroy();
  logger.info({ dataDir, port: embedded.port }, `database: embedded Postgres started on 127.0.0.1:${embedded.port}`);
  return { url: embedded.url('toolshed'), embedded };
}

/** host:port/database of a connection URL, without user or password. */
function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.host}${u.pathname}`;
  } catch {
    return 'an unparsable URL';
  }
}

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

/** Migrates our schema and the job queue's; returns how many of our migrations it applied. */
export async function migrateAll(url: string): Promise<number> {
  const db = createDb(url, { max: 1 });
  let applied: string[];
  try {
    applied = await migrateLatest(db);
  } finally {
    await db.destroy();
  }
  await migrateJobQueue(url);
  return applied.length;
}

/** Reads a secret from DATA_DIR, creating it (mode 600) on first use. Returns the value and whether it is new. */
async function secretFile(config: Config, name: string, length: number): Promise<{ value: string; file: string; created: boolean }> {
  const file = path.join(config.DATA_DIR, name);
  if (existsSync(file)) return { value: (await fs.readFile(file, 'utf8')).trim(), file, created: false };
  await fs.mkdir(config.DATA_DIR, { recursive: true });
  const value = randomBase62(length);
  await fs.writeFile(file, `${value}\n`, { mode: 0o600 });
  return { value, file, created: true };
}

/** Fills ADMIN_TOKEN and SECRETS_KEY from DATA_DIR when the environment does not set them (the path is logged, never the value). */
export async function withGeneratedSecrets(config: Config, logger: Logger): Promise<BootedConfig> {
  const out = { ...config };
  if (!out.ADMIN_TOKEN) {
    const t = await secretFile(config, 'admin-token', 40);
    out.ADMIN_TOKEN = t.value;
    const what = t.created ? 'generated into' : 'read from';
    logger.info({ file: t.file }, `ADMIN_TOKEN not set: admin token ${what} ${t.file} (never logged)`);
  }
  if (!out.SECRETS_KEY) {
    const s = await secretFile(config, 'secrets-key', 43);
    out.SECRETS_KEY = s.value;
  }
  return Object.freeze(bootedConfig(out));
}

export interface BootedProcess {
  config: BootedConfig;
  logger: Logger;
  database: Database;
}

/**
 * What every process entry does first: parse the environment (unless the entry already did), make the logger, reach
 * (or start) the database and migrate it, fill generated secrets.
 */
export async function bootProcess(env: Record<string, string | undefined>, parsed?: Readonly<Config>): Promise<BootedProcess> {
  const base = parsed ?? loadConfig(env);
  const logger = createLogger(base.LOG_LEVEL, undefined, base.LOG_FORMAT);
  const database = await resolveDatabase(base, logger);
  const applied = await migrateAll(database.url);
  logger.info({ applied }, applied ? `database migrated: ${applied} migrations applied` : 'database schema is up to date');
  const config = await withGeneratedSecrets(base, logger);
  return { config, logger, database };
}

/**
 * How long a stop may take before the process gives up on closing in order: supervisors wait about 10 s before
 * SIGKILL (docker stop, Kubernetes' default is 30 s), and a SIGKILL leaves the sandbox's mounts behind. Past it the
 * process stops an embedded database (at most EMBEDDED_STOP_MS more) and exits 1; its 'exit' handlers detach the
 * mounts (sandbox/package-view.ts). Executions it was running are run again by the reaper after their lease.
 */
export const STOP_DEADLINE_MS = 9000;
const EMBEDDED_STOP_MS = 1000;

/** On SIGINT/SIGTERM: close what the process runs (in order), stop an embedded database last, exit 0. */
export function closeOnSignals(logger: Logger, database: Database, ...closers: (() => Promise<void>)[]): void {
  let stopping = false;
  const stopDatabase = () =>
    Promise.race([database.embedded?.stop(), new Promise((resolve) => setTimeout(resolve, EMBEDDED_STOP_MS).unref())]).catch(() => undefined);
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    setTimeout(() => {
      logger.error({ deadlineMs: STOP_DEADLINE_MS }, 'shutdown took too long: stopping now');
      void stopDatabase().finally(() => process.exit(1));
    }, STOP_DEADLINE_MS).unref();
    for (const close of closers) await close().catch((err) => logger.error({ err }, 'shutdown step failed'));
    await database.embedded?.stop();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
}
