/**
 * The operator's view (issue 26, item 4): GET /api/admin/operations answers the admin token only, and shows what the
 * service is doing — the live worker with the job it runs, the queue by task with its oldest waiting job, imports in
 * progress, the last hour's failures by code (never a message or an env value), finished executions per minute.
 * Real service, worker, gVisor sandboxes.
 */
import test from 'ava';
import crypto from 'node:crypto';
import path from 'node:path';
import { FIXTURES_DIR, startService, type Service } from './helpers/service.js';
import { until } from './helpers/processes.js';

let svc: Service;
test.before(async () => {
  svc = await startService({ sandbox: 'process' });
  const res = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'packages', 'echo-tools')}`);
  if (res.status !== 201) throw new Error(res.text);
});
test.after.always(() => svc?.close());

const operations = () => svc.request('GET', '/api/admin/operations', { headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` } });

test.serial('only the admin token opens it: anonymous callers and users get a 401 in shape A', async (t) => {
  const anonymous = await svc.request('GET', '/api/admin/operations');
  t.is(anonymous.status, 401, anonymous.text);
  t.like(anonymous.body, { success: false, error: { code: 'UNAUTHORIZED' } });
  const user = await svc.createUser();
  const byUser = await svc.request('GET', '/api/admin/operations', { key: user.key });
  t.is(byUser.status, 401, byUser.text);
  const wrong = await svc.request('GET', '/api/admin/operations', { headers: { authorization: `Bearer ${'x'.repeat(48)}` } });
  t.is(wrong.status, 401);
});

test.serial('shows the live worker, a waiting job with its age, a failure by code without its message or env, and the last hour', async (t) => {
  const secret = `op-${crypto.randomBytes(8).toString('hex')}`;
  const failed = await svc.request('POST', '/api/tools/execute/@fixtures/echo-tools/failWithSecret', { body: { params: {}, env: { ECHO_SECRET: secret } } });
  t.is(failed.status, 200, failed.text);
  t.like(failed.body, { success: false, error: { code: 'TOOL_ERROR' } });
  const ok = await svc.request('POST', '/api/tools/execute/@fixtures/echo-tools/sleepy', { body: { params: { ms: 1 }, env: { ECHO_SECRET: secret } } });
  t.like(ok.body, { success: true, result: { slept: 1 } }, ok.text);
  // A job no worker takes (no task of that name), due 90 s ago: it waits, and its age shows.
  await svc.api.deps.db.raw(`select graphile_worker.add_job('operator_probe', '{}'::json, run_at => now() - interval '90 seconds')`);
  // A running job: an execution that sleeps, seen in the worker's lease once its heartbeat lists it.
  const slow = await svc.request('POST', '/api/tools/execute/@fixtures/echo-tools/sleepy?wait=false', {
    body: { params: { ms: 20_000 }, env: { ECHO_SECRET: secret } },
  });
  t.is(slow.status, 202, slow.text);

  const snapshot = await until(
    async () => {
      const res = await operations();
      return res.body.data?.workers.some((w: any) => w.jobs.some((j: any) => j.task === 'execute_tool')) ? res : undefined;
    },
    60_000,
    "the worker's heartbeat to list the running execution",
  );
  t.is(snapshot.status, 200, snapshot.text);
  const d = snapshot.body.data;
  const worker = d.workers.find((w: any) => w.id === svc.worker!.worker.id);
  t.truthy(worker, 'the running worker is listed');
  t.true(worker.alive);
  t.like(worker.jobs[0], { task: 'execute_tool' });

  const probe = d.queue.find((q: any) => q.task === 'operator_probe');
  t.like(probe, { waiting: 1, running: 0 });
  t.true(probe.oldestWaitingSeconds >= 90, `oldest waiting ${probe.oldestWaitingSeconds} s`);
  t.like(
    d.queue.find((q: any) => q.task === 'execute_tool'),
    { running: 1 },
  );

  const failure = d.recentFailures.find((f: any) => f.id === failed.body.executionId);
  t.like(failure, { kind: 'execution', subject: 'failWithSecret', code: 'TOOL_ERROR' });
  t.is(d.lastHour.length, 60, 'one entry per minute of the last hour');
  const sum = (k: string) => d.lastHour.reduce((n: number, m: any) => n + m[k], 0);
  t.true(sum('executionsSucceeded') >= 1 && sum('executionsFailed') >= 1, JSON.stringify(d.lastHour.slice(-3)));
  t.false(snapshot.text.includes(secret), 'no env value');
  t.false(snapshot.text.includes('could not authenticate'), "no error message: those are the caller's");

  await svc.api.deps.db.raw(
    `delete from graphile_worker._private_jobs where task_id = (select id from graphile_worker._private_tasks where identifier = 'operator_probe')`,
  );
});

test.serial('an import in progress is listed, and one that failed shows with its source and code', async (t) => {
  const res = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'packages', 'bad-manifest')}`);
  t.is(res.status, 400, res.text);
  const d = (await operations()).body.data;
  const failure = d.recentFailures.find((f: any) => f.kind === 'import');
  t.truthy(failure, JSON.stringify(d.recentFailures));
  t.regex(failure.subject, /bad-manifest/);
  t.truthy(failure.code);
  // Queued, not yet taken: an import row the worker has not seen (no job), as a request just made would be.
  const [row] = await svc.api.deps.db('package_imports').insert({ source: 'npm:left-pad@1.3.0', official: false }).returning('*');
  const after = (await operations()).body.data;
  t.like(
    after.imports.find((i: any) => i.id === row.id),
    { source: 'npm:left-pad@1.3.0', status: 'queued' },
  );
  await svc.api.deps.db('package_imports').where({ id: row.id }).delete();
});
