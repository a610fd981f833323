/**
 * The process's LISTEN connection (core/infra/notify.ts) against real Postgres: a notifier closed while a subscribe
 * is still connecting holds no connection afterwards. Before, the connection finished after close() and stayed open
 * as an idle `LISTEN`, which a test's database drop then terminated ('terminating connection due to administrator
 * command').
 */
import test from 'ava';
import pg from 'pg';
import { createNotifier } from '../core/infra/notify.js';
import { createTestDatabase } from './helpers/postgres.js';
import { settle } from './helpers/wait.js';

/** LISTEN connections of the notifier in this database; a backend that is still exiting is given up to 10 s to go. */
const settled = (url: string, n: number) =>
  settle(
    () => listeners(url),
    (v) => v === n,
    { ms: 10_000 },
  );

async function listeners(url: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query(
      `select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = 'toolshed-notify'`,
    );
    return rows[0].n as number;
  } finally {
    await c.end();
  }
}

test('a notifier closed while subscribing leaves no connection open, and refuses later subscribes', async (t) => {
  const database = await createTestDatabase();
  try {
    const notifier = createNotifier(database.url);
    const subscribing = notifier.subscribe('toolshed_jobs', () => undefined);
    await notifier.close();
    await t.throwsAsync(subscribing, { message: /closed/ });
    t.is(await settled(database.url, 0), 0);
    await t.throwsAsync(
      notifier.subscribe('toolshed_jobs', () => undefined),
      { message: /closed/ },
    );
    t.is(await settled(database.url, 0), 0);
  } finally {
    await database.drop();
  }
});

test('an open notifier delivers a NOTIFY, and close ends its connection', async (t) => {
  const database = await createTestDatabase();
  try {
    const notifier = createNotifier(database.url);
    const waiter = await notifier.waiter('toolshed_jobs', (p) => p === 'hello');
    t.is(await settled(database.url, 1), 1);
    const c = new pg.Client({ connectionString: database.url });
    await c.connect();
    await c.query(`select pg_notify('toolshed_jobs', 'hello')`);
    await c.end();
    t.is(await waiter.wait(30_000), 'hello');
    await notifier.close();
    t.is(await settled(database.url, 0), 0);
  } finally {
    await database.drop();
  }
});

test('every subscriber of a new channel is listening once its subscribe resolves, the second as the first', async (t) => {
  const database = await createTestDatabase();
  const sender = new pg.Client({ connectionString: database.url });
  await sender.connect();
  const notifier = createNotifier(database.url);
  try {
    await notifier.subscribe('toolshed_tools', () => undefined);
    for (let round = 0; round < 20; round++) {
      const channel = `toolshed_round_${round}`;
      let heard = false;
      const first = notifier.subscribe(channel, () => undefined);
      await notifier.subscribe(channel, () => {
        heard = true;
      });
      await sender.query(`select pg_notify('${channel}', 'now')`);
      await first;
      // The NOTIFY was sent after the second subscribe resolved: it is delivered (a sentinel on a channel listened to
      // long before marks that everything sent so far has arrived).
      const sentinel = await notifier.waiter('toolshed_tools', (p) => p === `sentinel ${round}`);
      await sender.query(`select pg_notify('toolshed_tools', 'sentinel ${round}')`);
      await sentinel.wait(30_000);
      t.true(heard, `round ${round}: the second subscriber missed a NOTIFY sent after its subscribe resolved`);
    }
  } finally {
    await notifier.close();
    await sender.end();
    await database.drop();
  }
});
