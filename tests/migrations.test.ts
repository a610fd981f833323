import test from 'ava';
import pg from 'pg';
import fs from 'node:fs';
import { createDb, migrateLatest, migrationsDir, RENAMED_MIGRATIONS } from '../core/infra/db.js';
import { createTestDatabase } from './helpers/postgres.js';
import { until } from './helpers/processes.js';

test('migrations run latest → rollback → latest, and rollback removes every app table', async (t) => {
  const database = await createTestDatabase();
  const db = createDb(database.url, { max: 2 });
  try {
    // The clone arrives migrated; take it all the way down first.
    await db.migrate.rollback(undefined, true);
    const tablesAfterRollback = await db.raw(`select table_name from information_schema.tables where table_schema = 'public' and table_name not like 'knex_%'`);
    t.deepEqual(tablesAfterRollback.rows, [], 'rollback leaves no app table behind');

    await db.migrate.latest();
    const tables = (await db.raw(`select table_name from information_schema.tables where table_schema = 'public'`)).rows.map(
      (r: { table_name: string }) => r.table_name,
    );
    for (const name of [
      'users',
      'api_keys',
      'packages',
      'tools',
      'tool_ratings',
      'tool_reviews',
      'tool_events',
      'collections',
      'collection_tools',
      'collection_likes',
      'scenarios',
      'scenario_runs',
      'scenario_batches',
      'executions',
      'agents',
      'agent_collections',
      'rate_limits',
      'scenario_quota',
      'health_checks',
      'package_imports',
      'workers',
    ]) {
      t.true(tables.includes(name), `table ${name} exists`);
    }
    await db.migrate.rollback(undefined, true);
    await db.migrate.latest();
    const [, pending] = await db.migrate.list();
    t.is(pending.length, 0);
  } finally {
    await db.destroy();
    await database.drop();
  }
});

test('the tools trigger notifies listeners of changes', async (t) => {
  const database = await createTestDatabase();
  const listener = new pg.Client({ connectionString: database.url });
  await listener.connect();
  const db = createDb(database.url, { max: 2 });
  try {
    const seen: string[] = [];
    listener.on('notification', (m) => seen.push(m.payload ?? ''));
    await listener.query('LISTEN toolshed_tools');
    const [pkg] = await db('packages').insert({ name: 'p', version: '1.0.0', category: 'automation', source: 'path:/x', install_path: '/x' }).returning('id');
    const [tool] = await db('tools').insert({ package_id: pkg.id, name: 'a', export_name: 'a' }).returning('id');
    await db('tools').where({ id: tool.id }).update({ health_status: 'BROKEN' });
    // Any other column: the row changed, not the list order nor the search index (`~`); an update that changes
    // nothing sends nothing; a served column of the package notifies each of its tools.
    await db('tools').where({ id: tool.id }).increment('execution_count', 1);
    await db('tools').where({ id: tool.id }).update({ last_health_check_at: db.fn.now(), health_error: 'x' });
    await db('tools').where({ id: tool.id }).update({ health_status: 'BROKEN' });
    await db('packages').where({ id: pkg.id }).update({ version: '1.0.1' });
    await db('packages').where({ id: pkg.id }).update({ import_error: null });
    await db('tools').where({ id: tool.id }).delete();
    // Sent in commit order: once the delete's has arrived, every earlier one has.
    await until(async () => seen.includes(`-${tool.id}`), 30_000, 'the notifications');
    t.deepEqual(seen, [tool.id, tool.id, `~${tool.id}`, `~${tool.id}`, tool.id, `-${tool.id}`]);
  } finally {
    await listener.end();
    await db.destroy();
    await database.drop();
  }
});

test('migration timestamps are unique, so their order never depends on the rest of a file name', (t) => {
  const stamps = fs.readdirSync(migrationsDir()).map((f) => f.slice(0, f.indexOf('_')));
  const seen = new Set<string>();
  const twice = stamps.filter((s) => seen.size === seen.add(s).size);
  t.deepEqual(twice, []);
  t.true(
    stamps.every((s) => /^\d{14}$/.test(s)),
    stamps.join(' '),
  );
});

test('a database that applied a renamed migration under its old name migrates on, with the row renamed', async (t) => {
  const database = await createTestDatabase();
  const db = createDb(database.url, { max: 2 });
  try {
    for (const [from, to] of Object.entries(RENAMED_MIGRATIONS)) await db('knex_migrations').where({ name: to }).update({ name: from });
    t.deepEqual(await migrateLatest(db), [], 'nothing applied twice, and knex does not call the directory corrupt');
    const names = (await db('knex_migrations').select('name')).map((r: { name: string }) => r.name);
    for (const [from, to] of Object.entries(RENAMED_MIGRATIONS)) {
      t.false(names.includes(from));
      t.true(names.includes(to));
    }
  } finally {
    await db.destroy();
    await database.drop();
  }
});
