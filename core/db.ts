/**
 * Database access: one knex instance per process, and withTransaction for units of work.
 */
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';

export type Db = Knex | Knex.Transaction;
export type { Knex };

// Timestamps come back as Date objects; bigint counts (count(*)) as numbers, which fit our sizes.
pg.types.setTypeParser(20, (v) => Number(v));

export function createDb(connectionString: string, pool: { min?: number; max?: number } = {}): Knex {
  return knexFactory({
    client: 'pg',
    connection: { connectionString },
    pool: { min: pool.min ?? 0, max: pool.max ?? 10 },
    migrations: { directory: migrationsDir(), loadExtensions: ['.ts', '.js'], tableName: 'knex_migrations' },
  });
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
