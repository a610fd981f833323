/**
 * Item 12, smaller leaks: a BROKEN tool's healthError and GET /health show no host paths, stack frames or raw
 * database errors; one user's collection add/remove loop adds no more trending weight than one add. (Another user's
 * runs of a public scenario count in its statistics since SPEC.md says so: tests/scenarios-runs.test.ts.)
 *
 * The process sandbox is used here on purpose: it runs tools at their real host paths (the package cache, DATA_DIR),
 * which is what a careless error message would show.
 */
import test from 'ava';
import path from 'node:path';
import pg from 'pg';
import { EXAMPLES_DIR, FIXTURES_DIR, startService, type Service } from '../helpers/service.js';
import { settle } from '../helpers/wait.js';

let svc: Service;
let textTools: { id: string; name: string }[];

test.before(async () => {
  svc = await startService({ env: { SANDBOX: 'process', SCENARIO_DAILY_QUOTA: '10' } });
  const res = await svc.importPackage(`path:${path.join(EXAMPLES_DIR, 'text-tools')}`);
  if (res.status !== 201) throw new Error(res.text);
  textTools = res.body.data.tools;
});
test.after.always(() => svc?.close());

/** What a host path in a public text would look like: the directories this service actually uses. */
function assertNoHostDetail(t: import('ava').ExecutionContext, text: string, where: string) {
  for (const dir of [svc.config.PACKAGE_CACHE_DIR, svc.config.DATA_DIR, path.resolve(FIXTURES_DIR), '/root', '/tmp/', 'file://']) {
    t.false(text.includes(dir), `${where} does not show ${dir}`);
  }
  t.false(/^\s*at /m.test(text), `${where} has no stack frame`);
}

test.serial("a BROKEN tool's healthError names no host path and carries no stack trace", async (t) => {
  const imported = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'security', 'leaks-paths')}`);
  t.is(imported.status, 201, imported.text);
  const detail = await svc.request('GET', '/api/tools/@fixtures/leaks-paths/whereAmI');
  t.is(detail.body.data.healthStatus, 'BROKEN');
  const healthError: string = detail.body.data.healthError;
  t.regex(healthError, /^health example threw: cannot read <package>\/index\.js/, "the tool's own file, package-relative");
  assertNoHostDetail(t, healthError, 'the health example error');

  const notLoading = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'security', 'leaks-load')}`);
  t.is(notLoading.status, 201, notLoading.text);
  const broken = await svc.request('GET', '/api/tools/@fixtures/leaks-load/neverLoads');
  t.is(broken.body.data.healthStatus, 'BROKEN');
  t.regex(broken.body.data.healthError, /module failed to load: .*<package>\/missing-helper\.js/);
  assertNoHostDetail(t, broken.body.data.healthError, 'the load error');
  assertNoHostDetail(t, JSON.stringify(await svc.api.deps.db('health_checks').select('error')), 'stored health checks');
});

/** GET /health until it answers `status`; the last answer either way (the test asserts on it). */
function healthOnceStatus(status: number) {
  return settle(
    () => svc.request('GET', '/health'),
    (res) => res.status === status,
    { ms: 60_000 },
  );
}

test.serial('/health says the database is down, not why', async (t) => {
  const url = new URL(svc.databaseUrl);
  const dbName = url.pathname.slice(1);
  const admin = new pg.Client({ connectionString: Object.assign(new URL(svc.databaseUrl), { pathname: '/postgres' }).toString() });
  await admin.connect();
  try {
    await admin.query(`alter database "${dbName}" allow_connections false`);
    // Graphile Worker's LISTEN connection is spared: on a terminated connection its client can emit a second error
    // after dropping its handler (a known graphile-worker edge), which would end the test process, not the API.
    await admin.query(
      `select pg_terminate_backend(pid) from pg_stat_activity
        where datname = $1 and pid <> pg_backend_pid() and query not like 'LISTEN "jobs:insert"%'`,
      [dbName],
    );
    const res = await healthOnceStatus(503);
    t.is(res.status, 503);
    t.deepEqual(res.body.data.database, { ok: false, status: 'down' });
    t.false(res.text.includes(dbName), 'no database name');
    t.false(/connection|terminat|accepting|ECONN|password|postgres/i.test(res.text), 'no driver error text');
    assertNoHostDetail(t, res.text, '/health');
    t.regex(svc.logs(), /health: database down/, 'the detail is in the server log');
  } finally {
    await admin.query(`alter database "${dbName}" allow_connections true`);
    await admin.end();
  }
  const up = await healthOnceStatus(200);
  t.is(up.status, 200);
  t.like(up.body.data.database, { ok: true, status: 'up' });
});

test.serial('a collection add/remove/add loop counts as one add in trending', async (t) => {
  const target = textTools.find((x) => x.name === 'slugify')!;
  const scoreOf = async (period = 'day') =>
    (await svc.request('GET', `/api/tools/trending?period=${period}&limit=50`)).body.data.find((x: { id: string }) => x.id === target.id)?.trendingScore ?? 0;
  const periods = ['day', 'week', 'month', 'all'];
  const base: Record<string, number> = {};
  for (const p of periods) base[p] = await scoreOf(p);
  const looper = await svc.createUser();
  const mk = async (name: string) => (await svc.request('POST', '/api/collections', { key: looper.key, body: { name } })).body.data.uid as string;
  const [a, b] = [await mk('Loop A'), await mk('Loop B')];
  for (let i = 0; i < 5; i++) {
    t.is((await svc.request('POST', `/api/collections/${a}/tools`, { key: looper.key, body: { toolId: target.id } })).status, 201);
    t.is((await svc.request('DELETE', `/api/collections/${a}/tools/${target.id}`, { key: looper.key })).status, 200);
  }
  t.is((await svc.request('POST', `/api/collections/${a}/tools`, { key: looper.key, body: { toolId: target.id } })).status, 201);
  t.is((await svc.request('POST', `/api/collections/${b}/tools`, { key: looper.key, body: { toolId: target.id } })).status, 201);
  for (const p of periods) t.is(await scoreOf(p), base[p]! + 3, `${p}: seven adds by one user (two collections) weigh as one add (3)`);
  const rows = await svc.api.deps.db('tool_events').where({ tool_id: target.id, kind: 'collection_add', user_id: looper.id });
  t.is(rows.length, 1, 'one stored event for the loop');

  const second = await svc.createUser();
  const uid = (await svc.request('POST', '/api/collections', { key: second.key, body: { name: 'Another' } })).body.data.uid;
  await svc.request('POST', `/api/collections/${uid}/tools`, { key: second.key, body: { toolId: target.id } });
  t.is(await scoreOf(), base.day! + 6, "another user's add counts");
});
