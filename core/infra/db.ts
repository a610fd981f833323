/**
 * Database access: one knex instance per process, and withTransaction for units of work.
 */
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export type Db = Knex | Knex.Transaction;
export type { Knex };

// Timestamps come back as Date objects; bigint counts (count(*)) as numbers, which fit our sizes.
pg.types.setTypeParser(20, (v) => Number(v));

export function createDb(connectionString: string, pool: { min?: number; max?: number } = {}): Knex {
  return knexFactory({
    client: 'pg',
    connection: { connectionString },
    pool: { min: pool.min ?? 0, max: pool.max ?? 10 },
    migrations: { migrationSource: new ExtensionFreeMigrations(migrationsDir()), tableName: 'knex_migrations' },
  });
}

/**
 * Migrations are recorded by name without extension, so the TypeScript sources (tsx) and the compiled JavaScript
 * (dist/) are the same migrations to knex.
 */
class ExtensionFreeMigrations {
  constructor(private readonly dir: string) {}
  async getMigrations(): Promise<string[]> {
    const files = await fs.readdir(this.dir);
    return files.filter((f) => /\.(ts|js)$/.test(f) && !f.endsWith('.d.ts')).sort();
  }
  getMigrationName(file: string): string {
    return file.replace(/\.(ts|js)$/, '');
  }
  async getMigration(file: string): Promise<Knex.Migration> {
    return import(pathToFileURL(path.join(this.dir, file)).href);
  }
}

export function migrationsDir(): string {
  return new URL('../../migrations', import.meta.url).pathname;
}

/** One round trip that answers when the database does (the health report's probe). */
export async function pingDatabase(db: Knex): Promise<void> {
  await db.raw('select 1');
}

export async function withTransaction<T>(db: Knex, fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return db.transaction(fn);
}

/**
 * Migrations renamed after they shipped, old name → new: a database that applied one under its old name has the row
 * renamed before knex compares its list with the files (knex refuses a recorded migration whose file is missing).
 * Two migrations once shared the timestamp 20261124000001; timestamps are unique now (tests/migrations.test.ts).
 */
export const RENAMED_MIGRATIONS: Readonly<Record<string, string>> = {
  '20261124000001_accounts_sessions': '20261124000000_accounts_sessions',
};

/** Applies pending migrations; returns the names of those it applied (empty when the schema was current). */
export async function migrateLatest(db: Knex): Promise<string[]> {
  if (await db.schema.hasTable('knex_migrations')) {
    for (const [from, to] of Object.entries(RENAMED_MIGRATIONS)) await db('knex_migrations').where({ name: from }).update({ name: to });
  }
  const [, applied] = (await db.migrate.latest()) as [number, string[]];
  return applied;
}

/** SQLSTATEs and socket errors that mean "the server went away or is restarting", not "the statement is wrong". */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', '57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006']);
const CONNECTION_MESSAGES =
  /Connection terminated|terminating connection|Client has encountered a connection error|timeout exceeded when trying to connect|the database system is (starting up|shutting down)|Knex: Timeout acquiring a connection/i;

export function isConnectionError(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown };
  return (typeof e?.code === 'string' && CONNECTION_CODES.has(e.code)) || (typeof e?.message === 'string' && CONNECTION_MESSAGES.test(e.message));
}

/**
 * Runs `fn`, and again while it fails because the database is unreachable (a restart, a failover), for up to `forMs`.
 * For the statements that record what already happened — a finished tool call — which must not be lost to a blip
 * (losing them would make the job run the tool again). Each retry must be safe to repeat (our finishes are CAS).
 */
export async function withDbRetry<T>(fn: () => Promise<T>, forMs: number, onRetry?: (err: Error) => void): Promise<T> {
  const deadline = Date.now() + forMs;
  for (let delay = 250; ; delay = Math.min(delay * 2, 5_000)) {
    try {
      return await fn();
    } catch (err) {
      if (!isConnectionError(err) || Date.now() + delay > deadline) throw err;
      onRetry?.(err as Error);
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}
