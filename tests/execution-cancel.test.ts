import test from 'ava';
import path from 'node:path';
import { FIXTURES_DIR, startService, type Service } from './helpers/service.js';
import { waitUntil } from './helpers/wait.js';

/**
 * POST /api/executions/:id/cancel (beyond the contract): a queued execution is final at once, a running one is stopped
 * in its sandbox by the worker that holds it (told by NOTIFY); either ends `failed` with CANCELLED, is not counted as
 * the tool failing, and a final one is 409 with nothing changed. One worker slot, so that a second call stays queued.
 */
let svc: Service;
let alice: { key: string; id: string };
let bob: { key: string; id: string };
const SLEEPY = '@fixtures/echo-tools/sleepy';
const LONG = 60_000;

test.before(async () => {
  svc = await startService({ sandbox: 'process', env: { WORKER_CONCURRENCY: '1', EXECUTION_TIMEOUT_MS: '120000' } });
  const res = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'packages', 'echo-tools')}`);
  if (res.status !== 201) throw new Error(res.text);
  alice = await svc.createUser({ username: 'cancel_alice' });
  bob = await svc.createUser({ username: 'cancel_bob' });
});
test.after.always(() => svc?.close());

const admin = () => `${svc.config.ADMIN_TOKEN}`;

async function startSleepy(key: string, ms = LONG): Promise<string> {
  const res = await svc.request('POST', `/api/tools/execute/${SLEEPY}?wait=false`, { key, body: { params: { ms }, env: { ECHO_SECRET: 's3cret' } } });
  if (res.status !== 202) throw new Error(res.text);
  return res.body.data.executionId;
}
const read = async (id: string, key = alice.key) => (await svc.request('GET', `/api/executions/${id}`, { key })).body.data;
const untilStatus = (id: string, status: string) =>
  waitUntil(
    () => read(id),
    (e) => e.status === status,
    `execution ${id} ${status}`,
  );
const cancel = (id: string, key?: string) => svc.request('POST', `/api/executions/${id}/cancel`, { key });
const failedEvents = async (toolId: string) =>
  Number((await svc.api.deps.db('tool_events').where({ tool_id: toolId, kind: 'execution_failed' }).count('* as n').first())!.n);

test.serial(
  'a running execution is stopped in its sandbox and ends failed/CANCELLED; a queued one is final at once; neither counts as the tool failing',
  async (t) => {
    const running = await startSleepy(alice.key);
    await untilStatus(running, 'running');
    // The one worker slot is taken: this one stays queued.
    const queued = await startSleepy(alice.key);
    t.is((await read(queued)).status, 'queued');
    const toolId = (await read(running)).toolId;
    const failedBefore = await failedEvents(toolId);

    const q = await cancel(queued, alice.key);
    t.is(q.status, 200, q.text);
    t.like(q.body.data, { id: queued, status: 'failed', error: { code: 'CANCELLED' } });
    t.falsy(q.body.data.startedAt, 'it never ran');
    const job = await svc.api.deps
      .db('graphile_worker._private_jobs')
      .where({ id: (await svc.api.deps.db('executions').where({ id: queued }).first()).job_id });
    t.is(job.length, 0, 'its job (and the sealed env it holds) is gone');

    const r = await cancel(running, alice.key);
    t.true(r.status === 200 || r.status === 202, r.text);
    const final = await untilStatus(running, 'failed');
    t.is(
      final.error.code,
      'CANCELLED',
      JSON.stringify(final) +
        svc
          .logs()
          .split('\n')
          .filter((l) => /execution task failed|cancel/.test(l))
          .slice(-5)
          .join('\n'),
    );
    // Stopped, not waited out: the tool would have slept a minute.
    t.true(final.executionTimeMs < LONG, `ran ${final.executionTimeMs} ms`);

    // Not the tool's failure: no execution_failed event, nothing in its hourly statistics.
    t.is(await failedEvents(toolId), failedBefore);
    const stats = await svc.request('GET', `/api/tools/${SLEEPY}/stats`);
    t.is(stats.status, 200, stats.text);
    t.false(JSON.stringify(stats.body).includes('CANCELLED'), JSON.stringify(stats.body));
    const errorsRow = await svc.api.deps.db('tool_stats_errors').where({ tool_id: toolId, code: 'CANCELLED' });
    t.is(errorsRow.length, 0);

    // The worker slot is free again: the next call runs.
    const next = await svc.request('POST', `/api/tools/execute/${SLEEPY}`, { key: alice.key, body: { params: { ms: 1 }, env: { ECHO_SECRET: 's3cret' } } });
    t.is(next.status, 200, next.text);
    t.true(next.body.success);
  },
);

test.serial('cancelling a final execution is 409 CONFLICT and changes nothing', async (t) => {
  const done = await svc.request('POST', `/api/tools/execute/${SLEEPY}`, { key: alice.key, body: { params: { ms: 1 }, env: { ECHO_SECRET: 's3cret' } } });
  t.is(done.status, 200, done.text);
  const before = await read(done.body.executionId);
  const res = await cancel(done.body.executionId, alice.key);
  t.is(res.status, 409, res.text);
  t.is(res.body.error.code, 'CONFLICT');
  t.deepEqual(await read(done.body.executionId), before);
});

test.serial("another user's cancel is 404, as reading it would be; the admin may cancel it; unknown ids are 404", async (t) => {
  const id = await startSleepy(alice.key);
  const bobs = await cancel(id, bob.key);
  t.is(bobs.status, 404, bobs.text);
  t.is(bobs.body.error.code, 'NOT_FOUND');
  const anonymous = await cancel(id);
  t.is(anonymous.status, 404, anonymous.text);
  t.not((await read(id)).status, 'failed', 'nothing changed');
  const res = await svc.request('POST', `/api/executions/${id}/cancel`, { headers: { authorization: `Bearer ${admin()}` } });
  t.true(res.status === 200 || res.status === 202, res.text);
  t.is((await untilStatus(id, 'failed')).error.code, 'CANCELLED');
  const unknown = await cancel('00000000-0000-4000-8000-000000000000', alice.key);
  t.is(unknown.status, 404);
  const malformed = await cancel('not-an-id', alice.key);
  t.is(malformed.status, 400);
});
