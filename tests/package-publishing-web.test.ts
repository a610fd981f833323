/**
 * What the web app's publishing pages need of the API (issue 24, item 2): `POST /api/packages?wait=false` answers 202
 * at once with the import to follow, and `GET /api/auth/me/packages` lists the caller's own packages, hidden ones
 * included (the public list leaves them out, so a publisher could not find one to show again).
 */
import test from 'ava';
import path from 'node:path';
import { FIXTURES_DIR, startService, type Service } from './helpers/service.js';
import { until } from './helpers/processes.js';

let svc: Service;
test.before(async () => {
  svc = await startService({ sandbox: 'process' });
});
test.after.always(() => svc?.close());

test('?wait=false answers 202 at once; the import is followed to its end with GET /api/package-imports/:id', async (t) => {
  const alice = await svc.createUser();
  const res = await svc.request('POST', '/api/packages?wait=false', {
    key: alice.key,
    body: { source: 'npm:@toolshed-no-such-scope/no-such-package-xyz@1.0.0' },
  });
  t.is(res.status, 202, res.text);
  t.true(['queued', 'running'].includes(res.body.data.status));
  const id = res.body.data.importId;
  let last: any;
  await until(
    async () => {
      last = (await svc.request('GET', `/api/package-imports/${id}`, { key: alice.key })).body.data;
      return last.status === 'failed';
    },
    60_000,
    'the import to fail',
  );
  t.regex(last.error.message, /no-such-package-xyz/);
  t.is((await svc.request('POST', '/api/packages?wait=maybe', { key: alice.key, body: { source: 'npm:x@1.0.0' } })).status, 400);
});

test("GET /api/auth/me/packages lists the caller's own packages, hidden ones too; nobody else's; not without a key", async (t) => {
  const alice = await svc.createUser();
  const bob = await svc.createUser();
  const imported = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'packages', 'compat-v1')}`);
  t.is(imported.status, 201, imported.text);
  // As if alice had published it (a user's npm publish records the same column; tests/package-publishing.test.ts).
  await svc.api.deps.db('packages').where({ name: '@fixtures/compat' }).update({ published_by: alice.id });

  t.is((await svc.request('GET', '/api/auth/me/packages')).status, 401);
  const hide = await svc.request('PATCH', '/api/packages/@fixtures/compat', { key: alice.key, body: { hidden: true } });
  t.is(hide.status, 200, hide.text);
  const mine = await svc.request('GET', '/api/auth/me/packages', { key: alice.key });
  t.is(mine.status, 200, mine.text);
  t.deepEqual(
    mine.body.data.map((p: { name: string; hidden: boolean; publisher: string }) => [p.name, p.hidden, p.publisher]),
    [['@fixtures/compat', true, alice.username]],
  );
  t.like(mine.body.pagination, { hasMore: false });
  t.deepEqual((await svc.request('GET', '/api/auth/me/packages', { key: bob.key })).body.data, []);
  const all = await svc.request('GET', '/api/packages?limit=100');
  t.false(
    all.body.data.some((p: { name: string }) => p.name === '@fixtures/compat'),
    'the public list leaves it out',
  );
});
