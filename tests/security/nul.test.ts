import test from 'ava';
import path from 'node:path';
import { FIXTURES_DIR, startService, type Service } from '../helpers/service.js';
import { settle } from '../helpers/wait.js';
import { readSse } from '../helpers/sse.js';
import { rawRequest } from './raw-http.js';

// A tool's output or error holding U+0000 (which jsonb refuses) must finish its execution like any other.
let svc: Service;
test.before(async () => {
  svc = await startService({ sandbox: 'process' });
  const res = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'security', 'nul-tools')}`);
  if (res.status !== 201) throw new Error(res.text);
  const ex = await svc.importPackage(`path:${path.resolve('examples/tools/http-tools')}`);
  if (ex.status !== 201) throw new Error(ex.text);
});
test.after.always(() => svc?.close());

test('decodeBase64("AA==") from an anonymous caller finishes, with the NUL intact, and streams done', async (t) => {
  const res = await svc.request('POST', '/api/tools/execute/@toolshed-examples/http-tools/decodeBase64', { body: { params: { base64: 'AA==' } } });
  t.is(res.status, 200, res.text);
  t.true(res.body.success);
  t.true(JSON.stringify(res.body.result).includes('\\u0000'), res.text);
  const polled = await svc.request('GET', `/api/executions/${res.body.executionId}`);
  t.is(polled.body.data.status, 'succeeded');
  t.deepEqual(polled.body.data.result, res.body.result);
  const events = await readSse(`${svc.url}/api/executions/${res.body.executionId}/events`, { timeoutMs: 10_000 });
  t.is(events.events.at(-1)?.event, 'done');
  t.is(events.events.at(-1)?.data.status, 'succeeded');
});

test('the result comes back exactly as the tool produced it: key order and NUL characters kept', async (t) => {
  const res = await svc.request('POST', '/api/tools/execute/@fixtures/nul-tools/nulOutput', { body: { params: {} } });
  t.is(res.status, 200, res.text);
  const expected = '{"zeta":1,"al":"a\\u0000b","nested":{"y":"\\\\u0000 is not a NUL","x":["\\u0000"]}}';
  t.true(res.text.includes(`"result":${expected}`), res.text);
  const polled = await svc.request('GET', `/api/executions/${res.body.executionId}`);
  t.true(polled.text.includes(`"result":${expected}`), polled.text);
});

test('an error message with a NUL fails the execution once, cleanly, instead of wedging it', async (t) => {
  const res = await svc.request('POST', '/api/tools/execute/@fixtures/nul-tools/nulError', { body: { params: {} } });
  t.is(res.status, 200, res.text);
  t.false(res.body.success);
  t.is(res.body.error.code, 'TOOL_ERROR');
  t.regex(res.body.error.message, /bad.byte/);
  const polled = await svc.request('GET', `/api/executions/${res.body.executionId}`);
  t.is(polled.body.data.status, 'failed');
  const { rows } = await svc.api.deps.db.raw('select attempts from executions where id = ?', [res.body.executionId]);
  t.is(rows[0].attempts, 1, 'the tool ran once');
  // Graphile completes the job just after the task returns (the answer may come first): it must then be gone.
  const jobsLeft = async () =>
    (await svc.api.deps.db.raw(`select count(*)::int as n from graphile_worker._private_jobs where payload->>'executionId' = ?`, [res.body.executionId]))
      .rows[0].n as number;
  t.is(await settle(jobsLeft, (n) => n === 0, { ms: 60_000 }), 0, 'no failed job (with its sealed env) is left behind');
});

test('an error message ending in half an emoji (a lone surrogate) fails the execution once, cleanly', async (t) => {
  const res = await svc.request('POST', '/api/tools/execute/@fixtures/nul-tools/halfEmoji', { body: { params: {} } });
  t.is(res.status, 200, res.text);
  t.is(res.body.error.code, 'TOOL_ERROR');
  t.is(res.body.error.message, 'cut here: \uFFFD', 'the half is the replacement character');
  const polled = await svc.request('GET', `/api/executions/${res.body.executionId}`);
  t.is(polled.body.data.status, 'failed');
  const { rows } = await svc.api.deps.db.raw('select attempts from executions where id = ?', [res.body.executionId]);
  t.is(rows[0].attempts, 1, 'the tool ran once');
});

test('a JSON body that is not valid UTF-8 is a 400 and changes nothing; valid UTF-8 is kept exactly', async (t) => {
  const u = await svc.createUser();
  const send = (p: string, bytes: Buffer) => rawRequest(svc.url, 'POST', p, { body: bytes, headers: { authorization: `Bearer ${u.key}` } });
  const collections = async () => Number((await svc.api.deps.db('collections').count('* as n'))[0].n);
  const before = await collections();
  for (const [what, bad] of [
    ['a truncated sequence', Buffer.from([0xc3, 0x28])],
    ['an encoded surrogate', Buffer.from([0xed, 0xa0, 0x80])],
    ['an overlong slash', Buffer.from([0xc0, 0xaf])],
    ['a stray continuation byte', Buffer.from([0x80])],
  ] as const) {
    const body = Buffer.concat([Buffer.from('{"name":"bad'), bad, Buffer.from('utf8"}')]);
    const res = await send('/api/collections', body);
    t.is(res.status, 400, what);
    t.is(res.body.error.code, 'VALIDATION_ERROR', what);
    t.deepEqual(res.body.error.details, [{ path: 'body', message: 'is not valid UTF-8' }], what);
    const scenario = await send('/api/scenarios', Buffer.concat([Buffer.from('{"collectionId":"x","prompt":"bad'), bad, Buffer.from(' prompt text"}')]));
    t.like(scenario.body, { success: false, error: 'Bad Request' }, `${what}: shape B on scenario routes`);
  }
  t.is(await collections(), before, 'nothing was created');
  const good = await send('/api/collections', Buffer.from('{"name":"Café ☕ 𝄞"}', 'utf8'));
  t.is(good.status, 201, good.text);
  t.is(good.body.data.name, 'Café ☕ 𝄞');
});

// Serial: it makes collections, which the UTF-8 test counts.
test.serial('names and titles are one line: control characters and bidirectional overrides are a 400 naming the field', async (t) => {
  const user = await svc.createUser();
  const mine = (await svc.request('POST', '/api/collections', { key: user.key, body: { name: 'Plain name' } })).body.data;
  const tool = '@toolshed-examples/http-tools/decodeBase64';
  const collections = async () => Number((await svc.api.deps.db('collections').where({ owner_id: user.id }).count('* as n'))[0].n);
  const before = await collections();
  for (const bad of [
    'bell\u0007',
    'esc \u001b[2J',
    'tab\there',
    'two\nlines',
    'evil\u202Eexe.txt',
    'iso\u2066late',
    'c1 \u009b',
    'line\u2028sep',
    'para\u2029sep',
  ]) {
    for (const [p, body, field] of [
      ['/api/collections', { name: bad }, 'body.name'],
      [`/api/collections/${mine.uid}`, { name: bad }, 'body.name'],
      ['/api/keys', { name: bad }, 'body.name'],
      ['/api/agents', { name: bad }, 'body.name'],
      [`/api/tools/${tool}/reviews`, { rating: 4, title: bad, body: 'fine' }, 'body.title'],
    ] as const) {
      const res = await svc.request(p.endsWith(mine.uid) ? 'PATCH' : 'POST', p, { key: user.key, body });
      t.is(res.status, 400, `${p} ${JSON.stringify(bad)}`);
      t.is(res.body.error.details?.[0]?.path, field, res.text);
    }
    const admin = { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` };
    const named = await svc.request('POST', '/api/admin/users', {
      headers: admin,
      body: { username: `n${Math.random().toString(36).slice(2, 10)}`, name: bad },
    });
    t.is(named.status, 400, `a user's display name ${JSON.stringify(bad)}`);
    t.is(named.body.error.details?.[0]?.path, 'body.name');
    for (const scenarioBody of [{ name: bad }, { tags: [bad] }, { assertions: [{ type: 'toolCalled', tool: bad }] }]) {
      const res = await svc.request('POST', '/api/scenarios', {
        key: user.key,
        body: { collectionId: mine.id, prompt: 'Decode some base64 text please', ...scenarioBody },
      });
      t.is(res.status, 400, `scenario ${JSON.stringify(scenarioBody)}`);
    }
    const scenario = await svc.request('POST', '/api/scenarios', {
      key: user.key,
      body: { collectionId: mine.id, prompt: 'Decode some base64 text please', name: bad },
    });
    t.is(scenario.status, 400, `scenario ${JSON.stringify(bad)}`);
    t.like(scenario.body, { success: false, error: 'Bad Request' });
  }
  t.is(await collections(), before, 'nothing was created');
  t.is((await svc.request('GET', `/api/collections/${mine.uid}`, { key: user.key })).body.data.name, 'Plain name');
  const accented = await svc.request('POST', '/api/collections', { key: user.key, body: { name: '  Café ☕ — عربى  ' } });
  t.is(accented.status, 201, 'other scripts and symbols are names');
  t.is(accented.body.data.name, 'Café ☕ — عربى');
  const untitled = await svc.request('POST', `/api/tools/${tool}/reviews`, {
    key: user.key,
    body: { rating: 4, title: '', body: 'An empty title is no title.' },
  });
  t.is(untitled.status, 201, untitled.text);
});
