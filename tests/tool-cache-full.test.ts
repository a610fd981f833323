/**
 * The tool cache (core/tools/tool-cache.ts) when it fills: a catalogue larger than the cache (bench:scale's 100,000
 * tools at the volumes) makes it start over, and a read that does so still answers every tool asked for,
 * those it held included — a collection, a list page or a search page never loses a tool to the cache.
 */
import test from 'ava';
import { createDb } from '../core/infra/db.js';
import { createNotifier } from '../core/infra/notify.js';
import { createToolCache } from '../core/tools/tool-cache.js';
import { createTestDatabase } from './helpers/postgres.js';

const MAX_ENTRIES = 20_000; // core/tools/tool-cache.ts

test('a read that makes the full cache start over still answers the tools it held', async (t) => {
  const database = await createTestDatabase();
  const db = createDb(database.url, { max: 2 });
  const notifier = createNotifier(database.url);
  try {
    const [pkg] = await db('packages')
      .insert({ name: 'many-tools', version: '1.0.0', category: 'automation', description: 'x', source: 'seed', install_path: '/nowhere' })
      .returning('id');
    await db.raw(
      `insert into tools (package_id, name, export_name, description)
       select ?, 'tool' || g, 'tool' || g, 'A tool' from generate_series(1, ?) g`,
      [pkg.id, MAX_ENTRIES + 1],
    );
    const ids: string[] = (await db('tools').select('id').orderBy('name')).map((r: { id: string }) => r.id);
    // Subscribed after the inserts: no notification of them drops what the reads below store.
    const cache = await createToolCache(db, notifier);
    try {
      t.is((await cache.getMany(ids.slice(0, MAX_ENTRIES))).length, MAX_ENTRIES);
      const page = [ids[0]!, ids[MAX_ENTRIES]!, ids[1]!];
      t.deepEqual(
        (await cache.getMany(page)).map((r) => r.id),
        page,
        'every tool asked for, the two held and the one read',
      );
      t.deepEqual(
        (await cache.getMany(page)).map((r) => r.id),
        page,
      );
    } finally {
      cache.stop();
    }
  } finally {
    await notifier.close();
    await db.destroy();
    await database.drop();
  }
});
