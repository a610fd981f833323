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
  return new URL('../migrations', import.meta.url).pathname;
}

export async function withTransaction<T>(db: Knex, fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return db.transaction(fn);
}

export async function migrateLatest(db: Knex): Promise<void> {
  await db.migrate.latest();
}
