import test from 'ava';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { FIXTURES_DIR, startService, type Service } from './helpers/service.js';
import { dumpDatabase } from './helpers/dump.js';
import { freePort, killAll, serviceEnv, spawnProcess, stopProcess, until, type Child } from './helpers/processes.js';

// Worker processes as operators run them (`node worker/main.ts`), sharing one Postgres with the API.
let svc: Service;

test.before(async () => {
  svc = await startService({ worker: false });
  // Imports need a worker: run one for the import, then stop it.
  const importer = startWorkerProcess();
  for (const dir of [path.join(FIXTURES_DIR, 'packages', 'echo-tools'), path.join(FIXTURES_DIR, 'security', 'nul-tools')]) {
    const res = await svc.importPackage(`path:${dir}`);
    if (res.status !== 201) throw new Error(res.text);
  }
  await stop(importer, 'SIGTERM');
});
test.after.always(async () => {
  await killAll();
  await svc?.close();
});

const startWorkerProcess = (extra: Record<string, string> = {}): Child =>
  spawnProcess('worker/main.ts', serviceEnv(svc.config, svc.databaseUrl, { LOG_LEVEL: 'warn', WORKER_LEASE_SECONDS: '8', ...extra }));
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
  // Its job was completed before the process exited: it is not left in the queue to run again.
  const left = await svc.api.deps.db.raw(`select id from graphile_worker._private_jobs where payload->>'executionId' = ?`, [id]);
  t.deepEqual(left.rows, [], 'the finished job is not left in the queue');
  const row = await execution(id);
  t.not(row.status, 'running');
  t.true(['succeeded', 'failed'].includes(row.status));
});

test.serial('an execution whose worker is killed (kill -9) is re-run by another worker within a minute', async (t) => {
  // A process with a 90 s lease that died long ago must not make the living wait 90 s before they judge.
  await svc.api.deps.db.raw(
    `insert into workers (id, hostname, pid, job_ids, lease_seconds, last_seen_at) values ('long-dead', 'gone', 1, '{}', 90, now() - interval '10 minutes')`,
  );
  t.teardown(() => svc.api.deps.db('workers').where({ id: 'long-dead' }).delete());
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
  const metricsToken = 'm'.repeat(32);
  const metricsPort = await freePort();
  const rescuer = startWorkerProcess({ WORKER_METRICS_PORT: String(metricsPort), METRICS_TOKEN: metricsToken, HOST: '127.0.0.1' });
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
    // The rescuer's reaper freed the job: its metrics count one re-run after a lost lease.
    const scraped = await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } });
    t.regex(await scraped.text(), /^toolshed_jobs_rerun_total\{task="execute_tool"\} 1$/m);
  } finally {
    await stop(rescuer, 'SIGTERM');
  }
});

test.serial('a scenario run whose worker is killed (kill -9) is re-run by another worker, its sealed env intact and still secret', async (t) => {
  const owner = await svc.createUser({ tier: 'pro' });
  const c = await svc.createCollection(owner.key, { name: 'Killed run' }, ['@fixtures/echo-tools::sleepy']);
  const made = await svc.request('POST', '/api/scenarios', { key: owner.key, body: { collectionId: c.id, prompt: 'Run sleepy with ms 4000' } });
  t.is(made.status, 201, made.text);
  const secret = `killed-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  const doomed = startWorkerProcess();
  // sleepy requires ECHO_SECRET: without the sealed env its call would be refused (TOOL_UNAVAILABLE), not run.
  const started = await svc.request('POST', `/api/collections/${c.id}/scenarios/run-all`, { key: owner.key, body: { env: { ECHO_SECRET: secret } } });
  t.is(started.status, 202, started.text);
  const [runId] = started.body.data.runIds as string[];
  const run = () => svc.api.deps.db('scenario_runs').where({ id: runId }).first();
  const toolCall = () => svc.api.deps.db('executions').where({ origin: 'scenario', status: 'running' }).first();
  await until(async () => ((await run())?.status === 'running' && (await toolCall())) || undefined, 60_000, 'the run to be in its tool call');
  await stop(doomed, 'SIGKILL');
  const rescuer = startWorkerProcess();
  try {
    const final = await until(
      async () => {
        const row = await run();
        return ['queued', 'running'].includes(row?.status) ? undefined : row;
      },
      90_000,
      'the run to be re-run to the end',
    );
    const record = await svc.request('GET', `/api/scenario-runs/${runId}`, { key: owner.key });
    t.is(record.body.data.status, 'completed', record.text);
    t.like(record.body.data.steps.at(-1), { toolName: 'sleepy', output: { slept: 4000 } }, 'the re-run call got ECHO_SECRET from the sealed env');
    t.is(final.status, 'completed');
    await until(async () => ((await toolCall()) ? undefined : true), 60_000, "the killed attempt's call to be closed");
    const dump = await dumpDatabase(svc.databaseUrl);
    t.false(dump.includes(secret), 'the database holds no trace of the env value');
    t.false(doomed.output().includes(secret) || rescuer.output().includes(secret) || svc.logs().includes(secret), 'nor does any log');
  } finally {
    await stop(rescuer, 'SIGTERM');
  }
});

test.serial('a package import whose worker is killed (kill -9) mid-import is run again by another worker and completes once', async (t) => {
  // An MCP server whose tools/list takes 6 s: the import is still describing it when its worker dies.
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'killed-import-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  await fs.copyFile(path.join(FIXTURES_DIR, 'mcp-servers', 'server.cjs'), path.join(dir, 'server.cjs'));
  await fs.writeFile(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: '@fixtures/mcp-killed-import', version: '1.0.0', bin: { 'mcp-slow': 'server.cjs' } }),
  );
  const db = svc.api.deps.db;
  const doomed = startWorkerProcess();
  const answer = svc.request('POST', '/api/admin/packages', {
    headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` },
    body: { source: `path:${dir}`, args: ['slow-list'] },
  });
  const running = await until(
    async () =>
      (await db('package_imports')
        .where({ source: `path:${dir}`, status: 'running' })
        .first()) ?? undefined,
    60_000,
    'the import to be running',
  );
  await stop(doomed, 'SIGKILL');
  const rescuer = startWorkerProcess();
  try {
    const final = await until(
      async () => {
        const row = await db('package_imports').where({ id: running.id }).first();
        return ['queued', 'running'].includes(row?.status) ? undefined : row;
      },
      120_000,
      'the import to be run again to the end',
    );
    t.is(final.status, 'succeeded', JSON.stringify(final.error));
    const first = await answer;
    t.true([201, 202].includes(first.status), first.text);
    const packages = await db('packages').where({ name: '@fixtures/mcp-killed-import' });
    t.is(packages.length, 1, 'one package, not two');
    const tools = (await db('tools').where({ package_id: packages[0].id }).select('name')).map((r: { name: string }) => r.name).sort();
    t.deepEqual(tools, ['fail', 'misbehave', 'shout']);
    const call = await svc.request('POST', '/api/tools/execute/@fixtures/mcp-killed-import/shout', { body: { params: { text: 'back' } } });
    t.deepEqual(call.body.result, { text: 'BACK' }, call.text);
  } finally {
    await stop(rescuer, 'SIGTERM');
  }
});

const untilFinal = (id: string, ms: number) =>
  until(
    async () => {
      const row = await execution(id);
      return ['queued', 'running'].includes(row?.status) ? undefined : row;
    },
    ms,
    'the execution to finish',
  );
const toolCounters = async (slug: string) => {
  const tool = (await svc.request('GET', `/api/tools/${slug}`)).body.data;
  const db = svc.api.deps.db;
  const failed = Number((await db('tool_events').where({ tool_id: tool.id, kind: 'execution_failed' }).count('* as n'))[0].n);
  const count = Number((await db('tools').where({ id: tool.id }).first('execution_count')).execution_count);
  return { failed, count };
};

test.serial('a graceful shutdown in the middle of a long execution: it runs again on a live worker, and counts once, as a success', async (t) => {
  const a = startWorkerProcess();
  const before = await toolCounters('@fixtures/echo-tools/sleepy');
  // Twice the 5 s a stopping worker gives its jobs before it aborts them (worker/runner.ts): still running then.
  const id = await queueSleepy(10_000);
  await until(async () => ((await execution(id))?.status === 'running' ? true : undefined), 60_000, 'the execution to start');
  t.is(await stop(a, 'SIGTERM'), 0);
  t.is((await execution(id)).status, 'queued', 'back in the queue, not failed');
  const locked = await svc.api.deps.db.raw('select count(*)::int as n from graphile_worker._private_jobs where locked_at is not null');
  t.is(locked.rows[0].n, 0, 'the stopped worker holds no job locked: the next worker takes it at once');
  const b = startWorkerProcess();
  try {
    const done = await untilFinal(id, 90_000);
    t.is(done.status, 'succeeded', JSON.stringify(done.error));
    t.is(done.attempts, 2);
    const after = await toolCounters('@fixtures/echo-tools/sleepy');
    t.deepEqual(after, { failed: before.failed, count: before.count + 1 }, 'the stopped attempt is not a failure of the tool');
  } finally {
    await stop(b, 'SIGTERM');
  }
});

test.serial('workers with different lease windows: one with a short lease never frees a live job of one with a long lease', async (t) => {
  const long = startWorkerProcess({ WORKER_LEASE_SECONDS: '20' });
  const id = await queueSleepy(15_000);
  await until(async () => ((await execution(id))?.status === 'running' ? true : undefined), 60_000, 'the execution to start');
  const short = startWorkerProcess({ WORKER_LEASE_SECONDS: '4' });
  try {
    const done = await untilFinal(id, 60_000);
    t.is(done.status, 'succeeded');
    t.is(done.attempts, 1, 'it ran once');
    t.notRegex(short.output(), /freed a job/);
  } finally {
    await Promise.all([stop(long, 'SIGTERM'), stop(short, 'SIGTERM')]);
  }
});

test.serial('a retry after a sandbox failure is not freed by the lease of the attempt before it: the tool runs twice, not three times', async (t) => {
  // The first attempt meets a sandbox failure (its package folder is gone), the second runs 12 s: three lease
  // windows of this worker, which must not take its own live retry for dead when the first attempt's hold ends.
  const db = svc.api.deps.db;
  const pkg = await db('packages').where({ name: '@fixtures/echo-tools' }).first('install_path');
  const hidden = `${pkg.install_path}.hidden`;
  await fs.rename(pkg.install_path, hidden);
  let restored = false;
  const restore = async () => {
    if (!restored) await fs.rename(hidden, pkg.install_path);
    restored = true;
  };
  const w = startWorkerProcess({ WORKER_LEASE_SECONDS: '4', EXECUTION_TIMEOUT_MS: '30000' });
  try {
    const id = await queueSleepy(12_000);
    await until(
      async () => {
        const row = await execution(id);
        return row.attempts >= 1 && row.status === 'queued' ? row : undefined;
      },
      60_000,
      'the first attempt to fail in the sandbox and go back to the queue',
    );
    await restore();
    const done = await untilFinal(id, 90_000);
    t.is(done.status, 'succeeded', JSON.stringify(done.error));
    t.is(done.attempts, 2, 'the sandbox failure, then one run');
    t.notRegex(w.output(), /freed a job/);
  } finally {
    await restore();
    await stop(w, 'SIGTERM');
  }
});

test.serial('a worker that cannot open the env (another SECRETS_KEY) fails the execution after its attempts; never left running', async (t) => {
  const w = startWorkerProcess({ SECRETS_KEY: 'a-different-secrets-key-0123456789abcdef' });
  try {
    const id = await queueSleepy(100);
    const done = await untilFinal(id, 90_000);
    t.is(done.status, 'failed');
    t.is(done.error.code, 'INTERNAL');
    t.is(done.error.message, 'The worker could not run this execution');
    t.false(w.output().includes('x-secret'));
  } finally {
    await stop(w, 'SIGTERM');
  }
});

test.serial('the reaper fails a queued execution whose job was removed, and one whose job failed for good (dropping that job)', async (t) => {
  const { reapOnce } = await import('../worker/reaper.js');
  const db = svc.api.deps.db;
  const [gone, dead] = [await queueSleepy(100), await queueSleepy(100)];
  const jobOf = async (id: string) => String((await execution(id)).job_id);
  await db.raw('delete from graphile_worker._private_jobs where id = ?::bigint', [await jobOf(gone)]);
  const deadJob = await jobOf(dead);
  await db.raw(`select graphile_worker.permanently_fail_jobs(array[?::bigint], 'gave up')`, [deadJob]);
  await new Promise((r) => setTimeout(r, 1100));
  await reapOnce(db, svc.api.deps.logger, 1);
  for (const id of [gone, dead]) {
    const row = await execution(id);
    t.is(row.status, 'failed', id);
    t.is(row.error.code, 'WORKER_LOST');
  }
  t.is((await db.raw('select count(*)::int as n from graphile_worker._private_jobs where id = ?::bigint', [deadJob])).rows[0].n, 0, 'the failed job is gone');
  const polled = await svc.request('GET', `/api/executions/${gone}`);
  t.is(polled.body.data.status, 'failed');
});

test.serial('the reaper fails a scenario run whose job failed for good (every attempt stopped or threw), and drops the job', async (t) => {
  const { reapOnce } = await import('../worker/reaper.js');
  const db = svc.api.deps.db;
  const owner = await svc.createUser();
  const c = (await svc.request('POST', '/api/collections', { key: owner.key, body: { name: 'Reaped runs' } })).body.data;
  await svc.request('POST', `/api/collections/${c.uid}/tools`, { key: owner.key, body: { toolId: '@fixtures/echo-tools/sleepy' } });
  const s = await svc.request('POST', '/api/scenarios', { key: owner.key, body: { collectionId: c.id, prompt: 'Sleep for 10 ms with sleepy please' } });
  t.is(s.status, 201, s.text);
  const started = await svc.request('POST', `/api/scenarios/${s.body.data.id}/run?wait=false`, { key: owner.key });
  t.is(started.status, 202, started.text);
  const runId = started.body.data.id ?? started.body.data.runId;
  const { rows } = await db.raw(`select id::text from graphile_worker._private_jobs where payload->>'runId' = ?`, [runId]);
  t.is(rows.length, 1);
  await db.raw(`select graphile_worker.permanently_fail_jobs(array[?::bigint], 'worker stopping')`, [rows[0].id]);
  await new Promise((r) => setTimeout(r, 1100));
  await reapOnce(db, svc.api.deps.logger, 1);
  const run = await svc.request('GET', `/api/scenario-runs/${runId}`, { key: owner.key });
  t.is(run.body.data.status, 'failed', run.text);
  t.is((await db.raw('select count(*)::int as n from graphile_worker._private_jobs where id = ?::bigint', [rows[0].id])).rows[0].n, 0);
});

test.serial('/health counts a worker with a long lease as alive between its heartbeats, and a silent one as gone', async (t) => {
  const db = svc.api.deps.db;
  const active = async () => (await svc.request('GET', '/health')).body.data.worker.active as number;
  const before = await active();
  // A 200 s lease heart-beats every 50 s: seen 45 s ago it is alive; a 20 s lease seen 45 s ago is not.
  await db.raw(
    `insert into workers (id, hostname, pid, job_ids, lease_seconds, last_seen_at) values
       ('slow-beat', 'h', 1, '{}', 200, now() - interval '45 seconds'),
       ('gone-quiet', 'h', 2, '{}', 20, now() - interval '45 seconds')`,
  );
  t.teardown(() => db('workers').whereIn('id', ['slow-beat', 'gone-quiet']).delete());
  t.is(await active(), before + 1);
  const health = await svc.request('GET', '/health');
  t.true(health.body.data.worker.ok);
});
