import test from 'ava';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startService, type Service } from './helpers/service.js';

const run = promisify(execFile);
let svc: Service;
test.before(async () => {
  svc = await startService({ worker: false });
});
test.after.always(() => svc?.close());

const admin = () => ({ authorization: `Bearer ${svc.config.ADMIN_TOKEN}` });

test('admin creates a user with a key shown once; the key works', async (t) => {
  const res = await svc.request('POST', '/api/admin/users', { headers: admin(), body: { username: 'ada', name: 'Ada L', tier: 'pro' } });
  t.is(res.status, 201);
  t.like(res.body.data.user, { username: 'ada', name: 'Ada L', tier: 'pro' });
  t.regex(res.body.data.apiKey.key, /^tsk_[0-9A-Za-z]{40}$/);
  t.is(res.body.data.apiKey.prefix, res.body.data.apiKey.key.slice(0, 8));
  const keys = await svc.request('GET', '/api/keys', { key: res.body.data.apiKey.key });
  t.is(keys.status, 200);
  t.is(keys.body.data.length, 1);
  t.false(JSON.stringify(keys.body).includes(res.body.data.apiKey.key), 'listing never shows the secret');
  const stored = await svc.api.deps.db('api_keys').first();
  t.false(JSON.stringify(stored).includes(res.body.data.apiKey.key), 'only a hash is stored');
});

test('admin endpoint: no token or a wrong token is 401; bad input 400; taken username 409', async (t) => {
  t.is((await svc.request('POST', '/api/admin/users', { body: { username: 'bob' } })).status, 401);
  const wrong = await svc.request('POST', '/api/admin/users', { headers: { authorization: 'Bearer nope-nope-nope-nope' }, body: { username: 'bob' } });
  t.is(wrong.status, 401);
  t.is(wrong.body.error.code, 'UNAUTHORIZED');
  const bad = await svc.request('POST', '/api/admin/users', { headers: admin(), body: { username: 'b!', tier: 'gold' } });
  t.is(bad.status, 400);
  t.deepEqual(bad.body.error.details.map((d: { path: string }) => d.path).sort(), ['body.tier', 'body.username']);
  t.is((await svc.request('POST', '/api/admin/users', { headers: admin(), body: { username: 'carol' } })).status, 201);
  const dup = await svc.request('POST', '/api/admin/users', { headers: admin(), body: { username: 'CAROL' } });
  t.is(dup.status, 409);
  t.is(dup.body.error.code, 'CONFLICT');
});

test('keys: create, list, revoke — the revoked key is 401 on its next request', async (t) => {
  const u = await svc.createUser();
  t.is((await svc.request('POST', '/api/keys', { body: { name: 'ci' } })).status, 401, 'anonymous cannot create keys');
  const created = await svc.request('POST', '/api/keys', { key: u.key, body: { name: 'ci' } });
  t.is(created.status, 201);
  const second = created.body.data.key as string;
  t.regex(second, /^tsk_[0-9A-Za-z]{40}$/);
  const list = await svc.request('GET', '/api/keys', { key: second });
  t.deepEqual(list.body.data.map((k: { name: string }) => k.name).sort(), ['ci', 'default']);
  const del = await svc.request('DELETE', `/api/keys/${created.body.data.id}`, { key: u.key });
  t.is(del.status, 200);
  t.is(del.body.message, 'API key revoked');
  const after = await svc.request('GET', '/api/keys', { key: second });
  t.is(after.status, 401);
  t.is(after.body.error.code, 'UNAUTHORIZED');
  t.is((await svc.request('GET', '/api/tools', { key: second })).status, 401, 'a revoked key is refused on public reads too');
});

test("keys: another user's key id is 404; an unknown or malformed key is 401", async (t) => {
  const a = await svc.createUser();
  const b = await svc.createUser();
  const keyOfA = (await svc.request('GET', '/api/keys', { key: a.key })).body.data[0].id;
  t.is((await svc.request('DELETE', `/api/keys/${keyOfA}`, { key: b.key })).status, 404);
  t.is((await svc.request('GET', '/api/keys', { key: a.key })).status, 200, 'A is untouched');
  t.is((await svc.request('GET', '/api/keys', { key: `tsk_${'a'.repeat(40)}` })).status, 401);
  t.is((await svc.request('GET', '/api/keys', { headers: { authorization: 'Basic abc' } })).status, 401);
  t.is((await svc.request('DELETE', '/api/keys/not-a-uuid', { key: a.key })).status, 400);
});

test('CLI users:create makes a user whose key works against the API', async (t) => {
  const { stdout } = await run('node', ['bin/toolshed.js', 'users:create', 'cli_user', '--tier', 'pro', '--json'], {
    env: { ...process.env, DATABASE_URL: svc.databaseUrl, DATA_DIR: svc.config.DATA_DIR },
  });
  const out = JSON.parse(stdout.trim().split('\n').pop()!);
  t.like(out.user, { username: 'cli_user', tier: 'pro' });
  const keys = await svc.request('GET', '/api/keys', { key: out.apiKey.key });
  t.is(keys.status, 200);
  const dup = await run('node', ['bin/toolshed.js', 'users:create', 'cli_user'], {
    env: { ...process.env, DATABASE_URL: svc.databaseUrl, DATA_DIR: svc.config.DATA_DIR },
  }).catch((e) => e);
  t.is(dup.code, 1);
  t.regex(dup.stderr, /taken/);
});
