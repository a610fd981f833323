import test from 'ava';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres, type EmbeddedServer } from '../core/infra/embedded-postgres.js';
import { migrateAll } from '../core/infra/bootstrap.js';
import { FIXTURES_DIR, startService, type Service } from './helpers/service.js';
import { type Child, killAll, serviceEnv, spawnProcess, stopProcess, until as untilBare } from './helpers/processes.js';

// Restarts under load: the database (its own server here, so that other test files are not disturbed) and the API
// process. Clients get a result or a clean 504 with the id; every execution ends terminal; waiting works afterwards.
let pgDir: string;
let pgServer: EmbeddedServer;
let svc: Service;
let worker: Child;
const SLOW = '@fixtures/nul-tools/slow';
const FINAL = ['succeeded', 'failed', 'timed_out'];

test.before(async () => {
  pgDir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolshed-restart-pg-'));
  await fs.chmod(pgDir, 0o755);
  pgServer = await startEmbeddedPostgres({ dataDir: path.join(pgDir, 'data'), durability: 'none' });
  await migrateAll(pgServer.url());
  svc = await startService({
    worker: false,
    database: { url: pgServer.url(), drop: async () => undefined },
    env: { EXECUTION_TIMEOUT_MS: '20000' },
  });
  worker = spawnProcess('worker/main.ts', serviceEnv(svc.config, svc.databaseUrl, { EXECUTION_TIMEOUT_MS: '20000' }));
  const imp = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'security', 'nul-tools')}`);
  if (imp.status !== 201) throw new Error(imp.text);
});
test.after.always(async () => {
  await killAll();
  await svc?.close();
  await pgServer?.stop();
  if (pgDir) await fs.rm(pgDir, { recursive: true, force: true });
});

/**
 * `until`, whose time-out also says whether the worker process still runs and what it said last (warnings, errors,
 * anything not a log line, such as a crash's stack): an execution here that never ends is the worker's doing.
 */
const until = <T>(fn: () => Promise<T | undefined | null | false>, ms: number, what: string): Promise<T> =>
  untilBare(fn, ms, what).catch((err: Error) => {
    const p = worker?.process;
    const state = !p ? 'not started' : p.exitCode !== null || p.signalCode !== null ? `exited (${p.exitCode ?? p.signalCode})` : 'running';
    const said = (worker?.output() ?? '')
      .split('\n')
      .filter((l) => /"level":(40|50|60)/.test(l) || (l.trim() !== '' && !l.startsWith('{')))
      .slice(-8)
      .map((l) => l.slice(0, 400));
    throw new Error(`${err.message}; the worker process is ${state}; its last warnings, errors and other output:\n${said.join('\n')}`);
  });

const db = () => svc.api.deps.db;
/** The execution's row once it has `status` (waited for up to 60 s). */
const executionIn = (id: string, status: string, what: string) =>
  until(
    async () => {
      const row = await db()('executions').where({ id }).first();
      return row?.status === status ? row : undefined;
    },
    60_000,
    what,
  );
const allFinal = async (ids: string[]) => {
  const rows = await db()('executions').whereIn('id', ids).select('status');
  return rows.length === ids.length && rows.every((r) => FINAL.includes(r.status));
};

test.serial('Postgres restarts while a client waits and a worker runs jobs: every execution ends, waiting works again', async (t) => {
  const waiting = svc.request('POST', `/api/tools/execute/${SLOW}`, { body: { params: { ms: 6001 } } });
  const queued = await Promise.all(
    Array.from({ length: 3 }, () => svc.request('POST', `/api/tools/execute/${SLOW}?wait=false`, { body: { params: { ms: 6000 } } })),
  );
  const ids = queued.map((r) => r.body.data.executionId as string);
  await until(async () => Number((await db()('executions').where({ status: 'running' }).count('* as n'))[0].n) > 0, 60_000, 'a job to run');
  await until(async () => (await db()('executions').whereRaw("params->>'ms' = '6001'").first()) !== undefined, 30_000, 'the waited execution to be queued');

  await pgServer.stop();
  // A call that arrives during the outage is queued once the database is back (the enqueue retries), or refused
  // cleanly with a 503 and Retry-After: never a 500, never queued twice.
  const during = svc.request('POST', `/api/tools/execute/${SLOW}?wait=false`, { body: { params: { ms: 6002 } } });
  await new Promise((r) => setTimeout(r, 2000)); // the outage itself: a fixed length is the point here
  pgServer = await startEmbeddedPostgres({ dataDir: path.join(pgDir, 'data'), port: pgServer.port, durability: 'none' });
  const duringRes = await during;
  t.true(duringRes.status === 202 || duringRes.status === 503, `${duringRes.status} ${duringRes.text}`);
  if (duringRes.status === 202) ids.push(duringRes.body.data.executionId);
  else t.is(duringRes.headers.get('retry-after'), '5');
  const duringRows = await db()('executions').whereRaw("params->>'ms' = '6002'").select('id');
  t.is(duringRows.length, duringRes.status === 202 ? 1 : 0, 'queued exactly once, or not at all');

  const res = await waiting;
  const errorsLogged = () =>
    svc
      .logs()
      .split('\n')
      .filter((l) => l.includes('unhandled'))
      .slice(-3)
      .map((l) => l.slice(0, 600))
      .join('\n');
  t.true(res.status === 200 || res.status === 504, `${res.status} ${res.text} ${errorsLogged()}`);
  if (res.status === 200) t.true(res.body.success, res.text);
  else t.regex(res.body.executionId, /^[0-9a-f-]{36}$/, 'a 504 carries the id to poll');
  const waitedId = res.body.executionId as string;

  await until(() => allFinal([...ids, waitedId]), 120_000, 'every execution to end');
  const rows = await db()('executions')
    .whereIn('id', [...ids, waitedId])
    .select('status', 'attempts');
  t.true(
    rows.every((r) => r.status === 'succeeded'),
    JSON.stringify(rows),
  );

  // LISTEN recovered: a synchronous call is answered by its NOTIFY again (well before its 35 s wait runs out).
  const started = Date.now();
  const after = await svc.request('POST', `/api/tools/execute/${SLOW}`, { body: { params: { ms: 10 } } });
  t.is(
    after.status,
    200,
    `pg port ${pgServer.port}, url ${new URL(svc.databaseUrl).port}, req ${after.headers.get('x-request-id')}: ${after.text} ${svc
      .logs()
      .split('\n')
      .filter((l) => /unhandled|warn|"level":50/.test(l))
      .slice(-6)
      .map((l) => l.slice(0, 400))
      .join('\n')}`,
  );
  t.true(after.body.success);
  t.true(Date.now() - started < 20_000);
});

/** A second API process on its own port over the same database; `start()` (re)starts it and waits until it answers. */
function apiProcess() {
  const port = 20_000 + crypto.randomInt(20_000);
  const env = serviceEnv(svc.config, svc.databaseUrl, { PORT: String(port), HOST: '127.0.0.1', EXECUTION_TIMEOUT_MS: '20000' });
  const base = `http://127.0.0.1:${port}`;
  const start = async () => {
    const api = spawnProcess('api/server.ts', env);
    await until(async () => (await fetch(`${base}/health`).catch(() => undefined))?.status === 200, 60_000, 'the API to listen');
    return api;
  };
  return { base, start };
}
/** A synchronous execute of the slow tool for `ms` (a value each test makes its own, to find its execution by). */
const callSlow = (base: string, ms: number) =>
  fetch(`${base}/api/tools/execute/${SLOW}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ params: { ms } }) });
const executionWithMs = (ms: number) =>
  until(
    async () =>
      (
        await db()('executions')
          .whereRaw("params->>'ms' = ?", [String(ms)])
          .first()
      )?.id as string | undefined,
    30_000,
    'the execution to exist',
  );

test.serial('the API process is killed while a client waits: the execution still completes and can be polled', async (t) => {
  const { base, start } = apiProcess();
  let api = await start();
  const client = callSlow(base, 5001).then(
    (r) => r.status,
    () => 'connection lost',
  );
  const id = await executionWithMs(5001);
  await stopProcess(api, 'SIGKILL');
  t.is(await client, 'connection lost');

  api = await start();
  const polled = await until(
    async () => {
      const r = await fetch(`${base}/api/executions/${id}`).then((x) => x.json() as Promise<any>);
      return r.data?.status === 'succeeded' ? r.data : undefined;
    },
    60_000,
    'the execution to complete',
  );
  t.deepEqual(polled.result, { waited: 5001 });
  await stopProcess(api, 'SIGTERM');
});

test.serial('a graceful stop (SIGTERM) of an API process answers a waiting client with the execution id; the execution completes', async (t) => {
  const { base, start } = apiProcess();
  const api = await start();
  const client = callSlow(base, 6002).then(
    async (r) => ({ status: r.status, body: (await r.json()) as any }),
    (err: Error) => ({ status: 0, body: err.message }),
  );
  const id = await executionWithMs(6002);
  const stoppedAt = Date.now();
  t.is(await stopProcess(api, 'SIGTERM'), 0);
  const answer = await client;
  t.is(answer.status, 504, JSON.stringify(answer.body));
  t.is(answer.body.executionId, id, 'the client can poll it elsewhere');
  t.true(Date.now() - stoppedAt < 5_000, 'answered at once, not after the grace period');
  const done = await executionIn(id, 'succeeded', 'the execution to complete');
  t.deepEqual(done.result, { waited: 6002 });
  t.is(done.attempts, 1, 'ran once: a client that polls has no reason to send it again');
});

test.serial('Graphile cannot write a finished job away and ends its pool: the worker starts a new one and takes jobs again', async (t) => {
  // The moment a database outage can hit: the tool has finished and its result is stored, and Graphile's write that
  // deletes the job fails (here: its table is renamed away meanwhile). Graphile then ends its pool ("queue is in an
  // inconsistent state"), while the process lives on and beats as alive.
  // The table is renamed while the job is still there (the tool runs 3 s); should the job have been removed already
  // (a slow machine), the table is put back and a new execution tried, so the test does not depend on timing.
  let caught = false;
  for (let attempt = 0; attempt < 5 && !caught; attempt++) {
    const first = await svc.request('POST', `/api/tools/execute/${SLOW}?wait=false`, { body: { params: { ms: 3003 + attempt } } });
    t.is(first.status, 202, first.text);
    const id = first.body.data.executionId as string;
    const running = await executionIn(id, 'running', 'the execution to run');
    await db().raw('alter table graphile_worker._private_jobs rename to _private_jobs_away');
    try {
      caught = (await db().raw('select 1 from graphile_worker._private_jobs_away where id = ?', [running.job_id])).rows.length === 1;
      if (!caught) continue;
      await executionIn(id, 'succeeded', 'the result to be stored');
      await until(async () => worker.output().includes('Failed to complete jobs'), 60_000, "Graphile's failed write");
    } finally {
      await db().raw('alter table graphile_worker._private_jobs_away rename to _private_jobs');
    }
  }
  t.true(caught, 'a job was caught in flight');
  // A synchronous call is answered: a job runner takes jobs again (before the fix, none ever did: a 504 after the wait).
  const next = await svc.request('POST', `/api/tools/execute/${SLOW}`, { body: { params: { ms: 10 } } });
  t.is(next.status, 200, next.text);
  t.deepEqual(next.body.result, { waited: 10 });
  t.regex(worker.output(), /the job runner stopped by itself; starting a new one/);
});
