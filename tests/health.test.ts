import test from 'ava';
import path from 'node:path';
import { enqueue } from '../core/infra/jobs.js';
import { FIXTURES_DIR, startService, type Service } from './helpers/service.js';
import { until } from './helpers/processes.js';
import { settle, waitUntil } from './helpers/wait.js';

let svc: Service;
test.before(async () => {
  svc = await startService({ sandbox: 'process' });
});
test.after.always(() => svc?.close());

const db = () => svc.api.deps.db;

/** Runs a health check job on the real worker and waits until its row is written. */
async function checkNow(toolId: string): Promise<{ passed: boolean; error: string | null }> {
  const before = Number((await db()('health_checks').where({ tool_id: toolId }).count('* as n').first())!.n);
  await enqueue(db(), 'health_check', { toolId });
  const rows = await waitUntil(
    () => db()('health_checks').where({ tool_id: toolId }).orderBy('id', 'desc'),
    (r) => r.length > before,
    'the health check to be written',
  );
  return rows[0];
}

const tool = async (id: string) => (await svc.request('GET', `/api/tools/${id}`)).body.data;

test.serial('three consecutive failed checks make a tool BROKEN; it leaves search and execute says 422', async (t) => {
  const res = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'packages', 'missing-export')}`);
  const present = res.body.data.tools.find((x: { name: string }) => x.name === 'present');
  t.is(present.healthStatus, 'HEALTHY');
  // The package's declared example now expects a wrong answer: every periodic check fails.
  await db()('tools')
    .where({ id: present.id })
    .update({ health_example: JSON.stringify({ params: { n: 2 }, expect: { doubled: 5 } }) });
  await svc.api.searchSync.flush();

  for (const n of [1, 2]) {
    const check = await checkNow(present.id);
    t.false(check.passed);
    t.is((await tool(present.id)).healthStatus, 'HEALTHY', `still HEALTHY after ${n} failure(s)`);
  }
  t.false((await checkNow(present.id)).passed);
  // The API's tool cache learns of the change by NOTIFY once the check commits: wait for it, as a client would see it.
  const broken = await until(
    async () => {
      const x = await tool(present.id);
      return x.healthStatus === 'BROKEN' && x;
    },
    30_000,
    'the tool to show BROKEN',
  );
  t.is(broken.healthStatus, 'BROKEN');
  t.regex(broken.healthError, /does not match/);
  t.truthy(broken.lastHealthCheckAt);

  await svc.api.searchSync.flush();
  const search = await svc.request('GET', '/api/tools/search?q=doubles%20a%20number');
  t.false(
    search.body.results.tools.some((x: { id: string }) => x.id === present.id),
    'BROKEN tools leave search',
  );
  const exec = await svc.request('POST', '/api/tools/execute/@fixtures/missing-export/present', { body: { params: { n: 1 } } });
  t.is(exec.status, 422);

  // The example is fixed: the next passing check brings it back.
  await db()('tools')
    .where({ id: present.id })
    .update({ health_example: JSON.stringify({ params: { n: 2 }, expect: { doubled: 4 } }) });
  t.true((await checkNow(present.id)).passed);
  t.truthy(await until(async () => (await tool(present.id)).healthStatus === 'HEALTHY', 30_000, 'the tool to show HEALTHY again'));
  await svc.api.searchSync.flush();
  const back = await svc.request('GET', '/api/tools/search?q=doubles%20a%20number');
  t.true(
    back.body.results.tools.some((x: { id: string }) => x.id === present.id),
    'and back into search',
  );
  const history = await db()('health_checks').where({ tool_id: present.id }).orderBy('id');
  t.deepEqual(
    history.map((h) => h.passed),
    [true, false, false, false, true],
    'the history is kept',
  );
});

test.serial('a check finds a discovered tool by its locator: members of records, of factories and of Agentic classes pass', async (t) => {
  // They were "export 'textTools#reverse' is missing or is not a tool": every such tool (all of an Agentic client's)
  // failed each check, and three made it BROKEN.
  const res = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'packages', 'discover-mixed')}`);
  t.is(res.status, 201, res.text);
  for (const name of ['reverse', 'forecast', 'add_numbers', 'find_papers', 'multiply_numbers', 'scrape']) {
    const found = res.body.data.tools.find((x: { name: string }) => x.name === name);
    const check = await checkNow(found.id);
    t.true(check.passed, `${name}: ${check.error}`);
  }
});

test.serial('the periodic sweep checks every tool', async (t) => {
  const before = Number((await db()('health_checks').count('* as n').first())!.n);
  const tools = Number((await db()('tools').count('* as n').first())!.n);
  await enqueue(db(), 'health_check', {});
  const after = await settle(
    async () => Number((await db()('health_checks').count('* as n').first())!.n),
    (now) => now >= before + tools,
  );
  t.is(after - before, tools);
});

// The other periodic job: the hourly sweep of expired browser sessions, on the same real worker.
test.serial('sweep_sessions deletes expired sessions only; a live session still signs its user in', async (t) => {
  const signUp = async (username: string) => {
    const res = await svc.request('POST', '/api/auth/signup', { body: { username, password: 'correct horse battery' } });
    t.is(res.status, 201, res.text);
    return res.headers
      .getSetCookie()
      .find((c) => c.startsWith('toolshed_session='))!
      .split(';')[0];
  };
  const live = await signUp('sweep-live');
  await signUp('sweep-old');
  const old = await db()('users').where({ username: 'sweep-old' }).first('id');
  await db()('sessions')
    .where({ user_id: old.id })
    .update({ expires_at: new Date(Date.now() - 1000) });
  const count = async () => Number((await db()('sessions').count('* as n').first())!.n);
  const before = await count();

  await enqueue(db(), 'sweep_sessions', {});
  await settle(
    () => db()('sessions').where({ user_id: old.id }).first(),
    (row) => !row,
  );
  t.falsy(await db()('sessions').where({ user_id: old.id }).first(), 'the expired session is gone');
  t.is(await count(), before - 1, 'nothing else was deleted');
  const me = await svc.request('GET', '/api/auth/me', { headers: { cookie: live } });
  t.is(me.status, 200);
  t.like(me.body.data, { via: 'session', user: { username: 'sweep-live' } });
});
