/**
 * trending_rebuild() (bench:scale's bulk load builds every trending rollup with it: migrations/20261207050001, in key
 * order since 20261208060001) writes the same rows as the tool_events trigger kept one event at a time: last seen,
 * hours, days, totals and period scores, for repeated callers, failures after successes, collection adds of one
 * user on several days, anonymous events and events written out of order.
 */
import test from 'ava';
import { createDb } from '../core/infra/db.js';
import { createTestDatabase } from './helpers/postgres.js';

/** Each rollup's columns compared, and which rows: the trigger leaves an hour whose weight moved on at 0, rebuild none. */
const TABLES: Record<string, [string, string]> = {
  // prev_hour is the trigger's memory of its last move (rebuild has no earlier hour to remember): not compared.
  trending_last_seen: ['tool_id, who, tier, last_hour', 'true'],
  trending_hourly: ['hour, tool_id, score', 'score <> 0'],
  trending_daily: ['day, tool_id, score', 'score <> 0'],
  trending_totals: ['tool_id, score', 'score <> 0'],
  trending_period_scores: ['period, tool_id, score', 'score <> 0'],
};

test('trending_rebuild() writes the rows the trigger kept', async (t) => {
  const database = await createTestDatabase();
  const db = createDb(database.url, { max: 1 });
  try {
    await db.raw('select trending_advance(now())');
    const [pkg] = await db('packages')
      .insert({ name: 'rebuild-pkg', version: '1.0.0', category: 'automation', description: 'x', source: 'seed', install_path: '/nowhere' })
      .returning('id');
    const tools = await db('tools')
      .insert([1, 2, 3].map((i) => ({ package_id: pkg.id, name: `tool${i}`, export_name: `tool${i}`, description: 'A tool' })))
      .returning('id');
    const users = await db('users')
      .insert([1, 2].map((i) => ({ username: `rebuild_user_${i}` })))
      .returning('id');
    // Hours ago (kept under 20, or over 40 days: no window's edge moves past one should the hour turn during the test).
    const events: [number, string, number, string | null, number | null, number][] = [
      // tool, kind, weight, caller, user, hours ago
      [0, 'execution_succeeded', 1, 'user:a', null, 3],
      [0, 'execution_succeeded', 1, 'user:a', null, 1],
      [0, 'execution_failed', 0.25, 'user:a', null, 5],
      [0, 'execution_failed', 0.25, 'user:b', null, 2],
      [1, 'execution_failed', 0.25, 'user:b', null, 1000],
      [1, 'execution_succeeded', 1, 'user:b', null, 2000],
      [1, 'execution_succeeded', 1, 'user:c', null, 4],
      [2, 'collection_add', 3, null, 0, 6],
      [2, 'collection_add', 3, null, 0, 30],
      [2, 'collection_add', 3, null, 1, 19],
      [2, 'rating', 2, null, 1, 7],
      [0, 'review', 1.5, null, null, 8],
      [1, 'execution_succeeded', 1, 'user:a', null, 1200],
    ];
    for (const [tool, kind, weight, caller, user, ago] of events) {
      await db.raw(`insert into tool_events (tool_id, kind, weight, caller, user_id, created_at) values (?, ?, ?, ?, ?, now() - make_interval(hours => ?))`, [
        tools[tool].id,
        kind,
        weight,
        caller,
        user === null ? null : users[user].id,
        ago,
      ]);
    }
    const snapshot = async () => {
      const out: Record<string, string[]> = {};
      for (const [table, [cols, where]] of Object.entries(TABLES)) {
        const { rows } = await db.raw(`select ${cols} from ${table} where ${where} order by ${cols}`);
        out[table] = rows.map((r: Record<string, unknown>) => JSON.stringify(r));
      }
      return out;
    };
    const kept = await snapshot();
    t.true(kept.trending_last_seen!.length >= 6, JSON.stringify(kept.trending_last_seen));
    t.true(kept.trending_period_scores!.length >= 6, JSON.stringify(kept.trending_period_scores));
    await db.raw('select trending_rebuild()');
    t.deepEqual(await snapshot(), kept);
  } finally {
    await db.destroy();
    await database.drop();
  }
});
