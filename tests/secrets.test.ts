import test from 'ava';
import crypto from 'node:crypto';
import path from 'node:path';
import { EXAMPLES_DIR, FIXTURES_DIR, startService, type Service } from './helpers/service.js';
import { dumpDatabase } from './helpers/dump.js';
import { waitUntil } from './helpers/wait.js';

let svc: Service;
test.before(async () => {
  svc = await startService({ sandbox: 'process' });
  for (const source of [`path:${path.join(EXAMPLES_DIR, 'webhook-signer')}`, `path:${path.join(FIXTURES_DIR, 'packages', 'echo-tools')}`]) {
    const res = await svc.importPackage(source);
    if (res.status !== 201) throw new Error(res.text);
  }
});
test.after.always(() => svc?.close());

test('an execution env never reaches the database, the logs, or a response', async (t) => {
  const secret = `s3cr3t-${crypto.randomBytes(12).toString('hex')}`;
  const echoed = await svc.request('POST', '/api/tools/execute/@fixtures/echo-tools/echoSecret', {
    body: { params: { prefix: 'key' }, env: { ECHO_SECRET: secret } },
  });
  t.is(echoed.status, 200);
  t.deepEqual(echoed.body.result, { message: 'key:[redacted]' }, 'an output that contains the secret is redacted');

  const thrown = await svc.request('POST', '/api/tools/execute/@fixtures/echo-tools/failWithSecret', { body: { params: {}, env: { ECHO_SECRET: secret } } });
  t.is(thrown.body.error.code, 'TOOL_ERROR');
  t.is(thrown.body.error.message, 'could not authenticate with key [redacted]');

  const signed = await svc.request('POST', '/api/tools/execute/@toolshed-examples/webhook-signer/signPayload', {
    body: { params: { payload: 'x' }, env: { WEBHOOK_SECRET: secret } },
  });
  t.true(signed.body.success);
  const queued = await svc.request('POST', '/api/tools/execute/@fixtures/echo-tools/echoSecret?wait=false', {
    body: { params: { prefix: 'q' }, env: { ECHO_SECRET: secret } },
  });
  const id = queued.body.data.executionId;
  const stored = await waitUntil(
    () => svc.request('GET', `/api/executions/${id}`),
    (e) => !['queued', 'running'].includes(e.body.data.status),
    'the execution to end',
  );
  t.deepEqual(stored.body.data.result, { message: 'q:[redacted]' });

  const dump = await dumpDatabase(svc.databaseUrl);
  t.true(dump.includes('executions'), 'the dump covers the executions table');
  t.true(dump.includes('_private_jobs') || dump.includes('jobs'), 'and the job queue');
  t.false(dump.includes(secret), 'the database holds no trace of the secret');
  const jobs = await svc.api.deps.db.raw("select count(*)::int as n from graphile_worker.jobs where task_identifier = 'execute_tool'");
  t.is(jobs.rows[0].n, 0, 'finished execution jobs are gone');
  t.false(svc.logs().includes(secret), 'the log holds no trace of the secret');
  t.true(svc.logs().length > 1000, 'the log was captured at debug level');
});

test('an env name must be a variable name; values must be strings', async (t) => {
  const res = await svc.request('POST', '/api/tools/execute/@fixtures/echo-tools/echoSecret', {
    body: { params: { prefix: 'p' }, env: { 'bad name': 'x', ECHO_SECRET: 5 } },
  });
  t.is(res.status, 400);
  t.false(res.text.includes('"x"'));
});
