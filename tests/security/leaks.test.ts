/**
 * Item 12, smaller leaks: a BROKEN tool's healthError and GET /health show no host paths, stack frames or raw
 * database errors; another user's runs of a public scenario do not move its public statistics; one user's collection
 * add/remove loop adds no more trending weight than one add.
 *
 * The process sandbox is used here on purpose: it runs tools at their real host paths (the package cache, DATA_DIR),
 * which is what a careless error message would show.
 */
import test from 'ava';
import path from 'node:path';
import pg from 'pg';
import { EXAMPLES_DIR, FIXTURES_DIR, startService, type Service } from '../helpers/service.js';

type User = { key: string; id: string; username: string };
let svc: Service;
let owner: User;
let other: User;
let textTools: { id: string; name: string }[];

test.before(async () => {
  svc = await startService({ env: { SANDBOX: 'process', SCENARIO_DAILY_QUOTA: '10' } });
  const res = await svc.importPackage(`path:${path.join(EXAMPLES_DIR, 'text-tools')}`);
  if (res.status !== 201) throw new Error(res.text);
  textTools = res.body.data.tools;
  owner = await svc.createUser();
  other = await svc.createUser();
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

/** GET /health until it answers `status` (at most 5 s, every 100 ms); the last answer either way. */
async function healthOnceStatus(status: number) {
  let res = await svc.request('GET', '/health');
  for (let i = 0; i < 50 && res.status !== status; i++) {
    await new Promise((r) => setTimeout(r, 100));
    res = await svc.request('GET', '/health');
  }
  return res;
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

test.serial("another user's runs of a public scenario do not move its statistics; the owner's do", async (t) => {
  const c = await svc.request('POST', '/api/collections', { key: owner.key, body: { name: 'Public runs' } });
  t.is(c.status, 201, c.text);
  for (const tool of textTools) await svc.request('POST', `/api/collections/${c.body.data.uid}/tools`, { key: owner.key, body: { toolId: tool.id } });
  const created = await svc.request('POST', '/api/scenarios', {
    key: owner.key,
    body: {
      collectionId: c.body.data.id,
      prompt: 'Slugify "Hello World" with slugify',
      assertions: [{ type: 'outputContains', text: 'no such text anywhere' }],
    },
  });
  t.is(created.status, 201, created.text);
  const id = created.body.data.id;
  const stats = async () => {
    const d = (await svc.request('GET', `/api/scenarios/${id}`)).body.data;
    return {
      totalRuns: d.totalRuns,
      lastRunAt: d.lastRunAt,
      lastRunStatus: d.lastRunStatus,
      consecutivePasses: d.consecutivePasses,
      consecutiveFails: d.consecutiveFails,
      qualityScore: d.qualityScore,
    };
  };
  const initial = await stats();
  t.like(initial, { totalRuns: 0, lastRunAt: null, lastRunStatus: null });

  let quota: number | undefined;
  for (let i = 0; i < 3; i++) {
    const r = await svc.request('POST', `/api/scenarios/${id}/run`, { key: other.key });
    t.is(r.status, 200, r.text);
    t.like(r.body.data, { scenarioId: id, status: 'completed', success: false }, 'the other user gets the run record');
    if (quota !== undefined) t.is(r.body.data.quotaRemaining, quota - 1, 'and it takes their quota');
    quota = r.body.data.quotaRemaining;
  }
  t.deepEqual(await stats(), initial, 'three failing runs by someone else: the public statistics did not move');
  const theirs = await svc.request('GET', `/api/scenarios/${id}/runs`, { key: other.key });
  t.true(theirs.status === 200 && theirs.body.data.length >= 1, 'their runs are on record');

  const mine = await svc.request('POST', `/api/scenarios/${id}/run`, { key: owner.key });
  t.is(mine.status, 200, mine.text);
  const after = await stats();
  t.like(after, { totalRuns: 1, lastRunStatus: 'fail', consecutiveFails: 1, consecutivePasses: 0 });
  t.is(after.qualityScore, 0.3333, "quality over the owner's runs only: (0 + 1) / (1 + 2), to 4 decimals");
  t.truthy(after.lastRunAt);
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
