import test from 'ava';
import path from 'node:path';
import { FIXTURES_DIR, startService, type Service } from './helpers/service.js';
import { killAll, serviceEnv, spawnProcess, stopProcess, until, type Child } from './helpers/processes.js';

// Worker processes as operators run them (`node worker/main.ts`), sharing one Postgres with the API.
let svc: Service;

test.before(async () => {
  svc = await startService({ worker: false });
  // Imports need a worker: run one for the import, then stop it.
  const importer = startWorkerProcess();
  const res = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'packages', 'echo-tools')}`);
  if (res.status !== 201) throw new Error(res.text);
  await stop(importer, 'SIGTERM');
});
test.after.always(async () => {
  await killAll();
  await svc?.close();
});

const startWorkerProcess = (): Child =>
  spawnProcess('worker/main.ts', serviceEnv(svc.config, svc.databaseUrl, { LOG_LEVEL: 'warn', WORKER_LEASE_SECONDS: '8' }));
const stop = stopProcess;

const queueSleepy = async (ms: number) => {
  const res = await svc.request('POST', '/api/tools/execute/@fixtures/echo-tools/sleepy?wait=false', {
    body: { params: { ms }, env: { ECHO_SECRET: 'x-secret' } },
  });
  if (res.status !== 202) throw new Error(res.text);
  return res.body.data.executionId as string;
};
const execution = (id: string) => svc.api.deps.db('executions').where({ id }).first();

test.serial('two worker processes share the queue and both take jobs', async (t) => {
  const a = startWorkerProcess();
  const b = startWorkerProcess();
  try {
    const ids = await Promise.all(Array.from({ length: 8 }, () => queueSleepy(700)));
    await until(
      async () => {
        const rows = await svc.api.deps.db('executions').whereIn('id', ids).select('status');
        return rows.every((r) => r.status === 'succeeded') || undefined;
      },
      90_000,
      'all executions to succeed',
    );
    const workers = await svc.api.deps.db('executions').whereIn('id', ids).distinct('worker_id');
    t.is(workers.length, 2, 'both workers ran executions');
  } finally {
    await Promise.all([stop(a, 'SIGTERM'), stop(b, 'SIGTERM')]);
  }
});

test.serial('a graceful shutdown lets the running execution finish; nothing is left running', async (t) => {
  const w = startWorkerProcess();
  const id = await queueSleepy(1500);
  await until(async () => ((await execution(id))?.status === 'running' ? true : undefined), 60_000, 'the execution to start');
  const code = await stop(w, 'SIGTERM');
  t.is(code, 0);
  const row = await execution(id);
  t.not(row.status, 'running');
  t.true(['succeeded', 'failed'].includes(row.status));
});

test.serial('an execution whose worker is killed (kill -9) is re-run by another worker within a minute', async (t) => {
  const doomed = startWorkerProcess();
  const id = await queueSleepy(3000);
  const first = await until(
    async () => {
      const row = await execution(id);
      return row?.status === 'running' ? row : undefined;
    },
    60_000,
    'the execution to start',
  );
  await stop(doomed, 'SIGKILL');
  const killedAt = Date.now();
  const rescuer = startWorkerProcess();
  try {
    const done = await until(
      async () => {
        const row = await execution(id);
        return row?.status === 'succeeded' ? row : undefined;
      },
      75_000,
      'the execution to be re-run',
    );
    t.not(done.worker_id, first.worker_id, 'another worker finished it');
    t.true(Date.now() - killedAt < 60_000 + 5_000, 'within a minute (plus its own run time)');
    t.true(done.attempts >= 2);
  } finally {
    await stop(rescuer, 'SIGTERM');
  }
});
