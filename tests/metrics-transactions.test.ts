/**
 * The metric an operator watches for the queue under a long transaction (issue 45, README Performance):
 * toolshed_db_oldest_transaction_age_seconds on the API's /metrics is how long the oldest open transaction in the
 * database has been open — an idle `BEGIN; SELECT 1;` held by another client included — and falls back once it ends.
 */
import test from 'ava';
import crypto from 'node:crypto';
import { createDb } from '../core/infra/db.js';
import { until } from './helpers/processes.js';
import { startService, type Service } from './helpers/service.js';

const TOKEN = crypto.randomBytes(16).toString('hex');
let svc: Service;
test.before(async () => {
  svc = await startService({ sandbox: 'process', env: { METRICS_TOKEN: TOKEN } });
});
test.after.always(() => svc?.close());

async function oldestTransactionAge(): Promise<number | undefined> {
  const res = await fetch(`${svc.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`scrape: ${res.status} ${text}`);
  const m = /^toolshed_db_oldest_transaction_age_seconds (\S+)$/m.exec(text);
  return m ? Number(m[1]) : undefined;
}

test.serial('an idle transaction held open by another client shows as the age of the oldest transaction, and no longer once it ends', async (t) => {
  const other = createDb(svc.databaseUrl, { max: 1 });
  try {
    const trx = await other.transaction();
    await trx.raw('select 1');
    const { rows } = await trx.raw('select pg_backend_pid() as pid');
    const pid = rows[0].pid as number;
    // Held for 3 s or more: the metric reads at least that, and what pg_stat_activity says of that connection.
    const seen = await until(
      async () => {
        const v = await oldestTransactionAge();
        return v !== undefined && v >= 3 ? v : undefined;
      },
      30_000,
      'the held transaction in the metric',
    );
    const { rows: act } = await svc.api.deps.db.raw('select extract(epoch from now() - xact_start)::float8 as s from pg_stat_activity where pid = ?', [pid]);
    t.true(act[0].s + 0.5 >= seen, `the metric (${seen} s) is not older than the held transaction (${act[0].s} s)`);
    t.true(seen <= act[0].s + 60, 'nor much older');
    await trx.commit();
    const after = await until(
      async () => {
        const v = await oldestTransactionAge();
        return v !== undefined && v < 3 ? { v } : undefined;
      },
      30_000,
      'the metric falls once the transaction ends',
    );
    t.true(after.v < 3);
  } finally {
    await other.destroy();
  }
});
