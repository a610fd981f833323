/**
 * Retention (issue 45): the scheduled sweep empties executions past RETENTION_RESULTS_DAYS (their poll then answers
 * 410 GONE, shape A, naming the retention) and deletes raw events past RETENTION_EVENTS_DAYS, while the tool's
 * counters, statistics, trending and detail answer as before; each statement touches at most RETENTION_BATCH_ROWS.
 */
import test from 'ava';
import path from 'node:path';
import { enqueue } from '../core/infra/jobs.js';
import { purgeExecutionsBatch, RETENTION_BATCH_ROWS } from '../core/repos/retention.js';
import { until } from './helpers/processes.js';
import { EXAMPLES_DIR, startService, type Service } from './helpers/service.js';

let svc: Service;
test.before(async () => {
  svc = await startService({ sandbox: 'process' });
  const res = await svc.importPackage(`path:${path.join(EXAMPLES_DIR, 'color-tools')}`);
  if (res.status !== 201) throw new Error(res.text);
});
test.after.always(() => svc?.close());

const COLOR = '@toolshed-examples/color-tools/convertColor';

async function execute(): Promise<string> {
  const res = await svc.request('POST', `/api/tools/execute/${COLOR}`, { body: { params: { color: '#ff0000' } } });
  if (typeof res.body?.executionId !== 'string') throw new Error(res.text);
  return res.body.executionId;
}

/** What a user can read of the tool that retention must not change. */
async function figures() {
  const trending: Record<string, unknown> = {};
  for (const period of ['day', 'week', 'month', 'all'])
    trending[period] = (await svc.request('GET', `/api/tools/trending?period=${period}&limit=100`)).body.data;
  const stats = (await svc.request('GET', `/api/tools/${COLOR}/stats`)).body.data;
  const detail = (await svc.request('GET', `/api/tools/${COLOR}`)).body.data;
  return { trending, stats, detail };
}

test.serial('past its retention an execution answers 410 GONE naming it; counts, statistics and trending are unchanged', async (t) => {
  const db = svc.api.deps.db;
  const [old, recent] = [await execute(), await execute()];
  t.is((await svc.request('GET', `/api/executions/${old}`)).status, 200);
  // The first execution (and an event of a caller seen only then) finished 40 days ago, past the 30-day default.
  await db('executions')
    .where({ id: old })
    .update({ completed_at: db.raw(`now() - interval '40 days'`) });
  const tool = await db('tools').where({ name: 'convertColor' }).first('id');
  await db('tool_events').insert({
    tool_id: tool.id,
    kind: 'execution_succeeded',
    weight: 1,
    caller: 'ip:10.0.0.1',
    created_at: db.raw(`now() - interval '40 days'`),
  });
  await db('health_checks').insert({ tool_id: tool.id, passed: true, duration_ms: 5, checked_at: db.raw(`now() - interval '40 days'`) });
  const before = await figures();

  await enqueue(db, 'sweep_retention', {});
  await until(async () => (await db('executions').where({ id: old }).first('purged_at')).purged_at !== null, 60_000, 'the sweep');
  await until(
    async () => Number((await db('tool_events').where('created_at', '<', db.raw(`now() - interval '35 days'`)).count('* as n'))[0].n) === 0,
    60_000,
    'the events',
  );

  // Health checks are the sweep's last kind: waited for too, not read while the sweep is still on trending rows.
  await until(
    async () => Number((await db('health_checks').where('checked_at', '<', db.raw(`now() - interval '35 days'`)).count('* as n'))[0].n) === 0,
    60_000,
    'old health checks',
  );
  t.pass('old health checks deleted');
  const gone = await svc.request('GET', `/api/executions/${old}`);
  t.is(gone.status, 410);
  t.is(gone.body.success, false);
  t.is(gone.body.error.code, 'GONE');
  t.regex(gone.body.error.message, /30 days.*RETENTION_RESULTS_DAYS/);
  t.is((await svc.request('GET', `/api/executions/${old}/events`)).status, 410);
  const row = await db('executions').where({ id: old }).first('params', 'result');
  t.deepEqual([row.params, row.result], [{}, null], 'params and result are deleted');
  t.is((await svc.request('GET', `/api/executions/${recent}`)).status, 200, 'a recent execution is kept');
  t.deepEqual(await figures(), before, 'trending (every period), statistics and the detail answer as before');
});

test.serial('a retention statement touches at most RETENTION_BATCH_ROWS rows, oldest first', async (t) => {
  const db = svc.api.deps.db;
  const extra = 5;
  await db.raw(
    `insert into executions (tool_id, origin, status, params, result, created_at, completed_at)
     select tool_id, origin, 'succeeded', params, result, now() - interval '50 days', now() - interval '50 days' - make_interval(secs => g)
       from executions, generate_series(1, ?) g where purged_at is null limit ?`,
    [RETENTION_BATCH_ROWS + extra, RETENTION_BATCH_ROWS + extra],
  );
  t.is(await purgeExecutionsBatch(db, 30), RETENTION_BATCH_ROWS);
  t.is(await purgeExecutionsBatch(db, 30), extra);
  t.is(await purgeExecutionsBatch(db, 30), 0);
});
