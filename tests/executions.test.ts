import test from 'ava';
import { getEventListeners } from 'node:events';
import path from 'node:path';
import { EXAMPLES_DIR, FIXTURES_DIR, startService, type Service } from './helpers/service.js';
import { parseSse } from './helpers/sse.js';

let svc: Service;
let user: { key: string; id: string };
test.before(async () => {
  svc = await startService({ env: { EXECUTION_TIMEOUT_MS: '4000' } });
  for (const dir of ['text-tools', 'webhook-signer']) {
    const res = await svc.importPackage(`path:${path.join(EXAMPLES_DIR, dir)}`);
    if (res.status !== 201) throw new Error(res.text);
  }
  for (const dir of ['echo-tools', 'load-fails', 'missing-export', 'fetcher', 'shell-tools']) {
    const res = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'packages', dir)}`);
    if (res.status !== 201) throw new Error(res.text);
  }
  user = await svc.createUser();
});
test.after.always(() => svc?.close());

const execute = (slug: string, body: unknown, opts: { key?: string; query?: string } = {}) =>
  svc.request('POST', `/api/tools/execute/${slug}${opts.query ?? ''}`, { key: opts.key, body });

test('execute runs the tool in a sandbox and returns its output', async (t) => {
  const res = await execute('@toolshed-examples/text-tools/slugify', { params: { text: 'Hello, World! Ça va?' } });
  t.is(res.status, 200, res.text);
  t.true(res.body.success);
  t.regex(res.body.executionId, /^[0-9a-f-]{36}$/);
  t.is(typeof res.body.executionTimeMs, 'number');
  t.is(res.body.result.slug, 'hello-world-ca-va');
  const stored = await svc.request('GET', `/api/executions/${res.body.executionId}`);
  t.like(stored.body.data, { id: res.body.executionId, status: 'succeeded', result: res.body.result });
  t.truthy(stored.body.data.startedAt);
  t.truthy(stored.body.data.completedAt);
  const tool = await svc.request('GET', '/api/tools/@toolshed-examples/text-tools/slugify');
  t.true(tool.body.data.executionCount >= 1, 'executionCount counts it');
});

test.serial("synchronous calls leave no listener behind on the API's shutdown signal (each wait used to add one for good)", async (t) => {
  // The signal lives as long as the process: a listener left per waiting call (one per 3 s recheck) grew without
  // bound in a long-running API, and Node warned of a leak after ten.
  const listeners = () => getEventListeners(svc.api.deps.shutdown, 'abort').length;
  const before = listeners();
  for (const text of ['one', 'two', 'three']) {
    const res = await execute('@toolshed-examples/text-tools/slugify', { params: { text } });
    t.is(res.status, 200, res.text);
  }
  t.is(listeners(), before);
});

test.serial('params are validated against the JSON Schema before anything is queued (400 with details)', async (t) => {
  const before = await svc.api.deps.db('executions').count('* as n').first();
  const res = await execute('@toolshed-examples/text-tools/slugify', { params: { text: 42 } });
  t.is(res.status, 400);
  t.is(res.body.error.code, 'VALIDATION_ERROR');
  t.deepEqual(
    res.body.error.details.map((d: { path: string }) => d.path),
    ['params.text'],
  );
  const missing = await execute('@toolshed-examples/text-tools/slugify', { params: {} });
  t.deepEqual(missing.body.error.details, [{ path: 'params.text', message: 'is required' }]);
  t.is((await execute('@toolshed-examples/text-tools/slugify', { text: 'no params wrapper' })).status, 400);
  const after = await svc.api.deps.db('executions').count('* as n').first();
  t.is(Number(after!.n), Number(before!.n), 'nothing was queued');
});

test('a BROKEN tool and missing required env are 422 TOOL_UNAVAILABLE; unknown tools 404', async (t) => {
  const broken = await execute('@fixtures/load-fails/doThing', { params: {} });
  t.is(broken.status, 422);
  t.is(broken.body.error.code, 'TOOL_UNAVAILABLE');
  const absent = await execute('@fixtures/missing-export/absent', { params: {} });
  t.is(absent.status, 422);
  const noEnv = await execute('@toolshed-examples/webhook-signer/signPayload', { params: { payload: 'x' } });
  t.is(noEnv.status, 422);
  t.is(noEnv.body.error.message, 'Missing required env: WEBHOOK_SECRET');
  t.is((await execute('@toolshed-examples/text-tools/noSuchTool', { params: {} })).status, 404);
});

test('env reaches the tool; a tool that throws gives 200 with TOOL_ERROR', async (t) => {
  const signed = await execute('@toolshed-examples/webhook-signer/signPayload', { params: { payload: 'hello' }, env: { WEBHOOK_SECRET: 'key' } });
  t.is(signed.status, 200, signed.text);
  t.true(signed.body.success);
  // HMAC-SHA256("key", "hello")
  t.true(JSON.stringify(signed.body.result).includes('9307b3b915efb5171ff14d8cb55fbcc798c6c0ef1456d66ded1a6aa723a58b7b'));
  const thrown = await execute('@fixtures/echo-tools/failWithSecret', { params: {}, env: { ECHO_SECRET: 'abc' } });
  t.is(thrown.status, 200);
  t.false(thrown.body.success);
  t.is(thrown.body.error.code, 'TOOL_ERROR');
  t.regex(thrown.body.error.message, /could not authenticate/);
});

test('a tool whose request finds no network says why: its package does not declare network, or the service gives none', async (t) => {
  // The gVisor sandbox of a tool without `network` has loopback only (and this service runs with SANDBOX_NETWORK=none).
  const undeclared = await execute('@fixtures/fetcher/fetchPage', { params: { url: 'http://example.com/' } });
  t.is(undeclared.status, 200, undeclared.text);
  t.is(undeclared.body.error.code, 'TOOL_ERROR');
  t.regex(undeclared.body.error.message, /^fetch failed \(the tool ran without network: its package does not declare `network`/);
  const declared = await execute('@fixtures/fetcher/fetchDeclared', { params: { url: 'http://example.com/' } });
  t.regex(declared.body.error.message, /^fetch failed \(the tool ran without network: this service gives no sandbox network, SANDBOX_NETWORK=none\)$/);
  // The stored execution says the same; a failure of the tool's own is left as it is.
  t.is((await svc.request('GET', `/api/executions/${undeclared.body.executionId}`)).body.data.error.message, undeclared.body.error.message);
  const refused = await execute('@fixtures/fetcher/refuse', { params: {} });
  t.is(refused.body.error.message, 'quota exceeded for this month');
});

test('a tool that runs a shell command line (child_process.exec, /bin/sh -c) works in the sandbox', async (t) => {
  const res = await execute('@fixtures/shell-tools/runShell', { params: { n: 6 } });
  t.is(res.status, 200, res.text);
  t.deepEqual(res.body.result, { stdout: 'node read 42\n\n' });
});

test('a time-out gives 504 EXECUTION_TIMEOUT with the executionId, and the execution is timed_out', async (t) => {
  const res = await execute('@fixtures/echo-tools/sleepy', { params: { ms: 20000 }, env: { ECHO_SECRET: 'abc' } });
  t.is(res.status, 504);
  t.is(res.body.error.code, 'EXECUTION_TIMEOUT');
  const polled = await svc.request('GET', `/api/executions/${res.body.executionId}`);
  t.is(polled.body.data.status, 'timed_out');
});

test('?wait=false answers 202 at once; the execution can be polled and streamed', async (t) => {
  const res = await execute('@fixtures/echo-tools/sleepy', { params: { ms: 300 }, env: { ECHO_SECRET: 'abc' } }, { query: '?wait=false' });
  t.is(res.status, 202);
  t.deepEqual(res.body.data.status, 'queued');
  const id = res.body.data.executionId;
  const stream = await fetch(`${svc.url}/api/executions/${id}/events`);
  t.is(stream.headers.get('content-type'), 'text/event-stream; charset=utf-8');
  const text = await stream.text();
  const events = parseSse(text); // (SSE fields may come in any order within an event)
  t.deepEqual(
    events.map((e) => e.event),
    ['status', 'status', 'status', 'done'],
  );
  t.deepEqual(
    events.map((e) => e.id),
    [1, 2, 3, 4],
  );
  t.deepEqual(
    events.map((e) => e.data.status),
    ['queued', 'running', 'succeeded', 'succeeded'],
  );
  t.deepEqual(events[2].data.result, { slept: 300 });
  // A finished execution replays everything; Last-Event-ID resumes after what the client has.
  const replay = await (await fetch(`${svc.url}/api/executions/${id}/events`, { headers: { 'last-event-id': '2' } })).text();
  t.deepEqual(
    [...replay.matchAll(/id: (\d+)/g)].map((m) => Number(m[1])),
    [3, 4],
  );
});

test("executions made with a key are private to that key's user", async (t) => {
  const res = await execute('@toolshed-examples/text-tools/slugify', { params: { text: 'mine' } }, { key: user.key });
  const id = res.body.executionId;
  t.is((await svc.request('GET', `/api/executions/${id}`, { key: user.key })).status, 200);
  t.is((await svc.request('GET', `/api/executions/${id}`)).status, 404);
  const other = await svc.createUser();
  t.is((await svc.request('GET', `/api/executions/${id}`, { key: other.key })).status, 404);
  t.is((await svc.request('GET', '/api/executions/not-an-id')).status, 400);
});

test('executions count toward trending', async (t) => {
  await execute('@toolshed-examples/text-tools/slugify', { params: { text: 'trend' } });
  const trending = await svc.request('GET', '/api/tools/trending?period=day');
  const slugify = trending.body.data.find((x: { name: string }) => x.name === 'slugify');
  t.truthy(slugify);
  t.true(slugify.trendingScore >= 1);
});
