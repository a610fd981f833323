import test from 'ava';
import { startService, type Service } from './helpers/service.js';

let svc: Service;
let key: string;
test.before(async () => {
  svc = await startService({ worker: false });
  key = (await svc.createUser()).key;
});
test.after.always(() => svc?.close());

test('a non-JSON body is a 415 in shape A and creates nothing', async (t) => {
  const res = await svc.request('POST', '/api/keys', { key, rawBody: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  t.is(res.status, 415);
  t.deepEqual(res.body, { success: false, error: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Request body must be application/json' } });
  const keys = await svc.request('GET', '/api/keys', { key });
  t.is(keys.body.data.length, 1);
});

test('malformed JSON is a 400 VALIDATION_ERROR with details', async (t) => {
  const res = await svc.request('POST', '/api/keys', { key, rawBody: '{"name": ', headers: { 'content-type': 'application/json' } });
  t.is(res.status, 400);
  t.is(res.body.success, false);
  t.is(res.body.error.code, 'VALIDATION_ERROR');
  t.deepEqual(res.body.error.details, [{ path: 'body', message: 'is not valid JSON' }]);
});

test('a body over 1 MiB is a 413', async (t) => {
  const res = await svc.request('POST', '/api/keys', { key, body: { name: 'x'.repeat(1024 * 1024 + 10) } });
  t.is(res.status, 413);
  t.is(res.body.error.code, 'PAYLOAD_TOO_LARGE');
});

test('wrong-typed fields are a 400 naming the field', async (t) => {
  const res = await svc.request('POST', '/api/keys', { key, body: { name: 42 } });
  t.is(res.status, 400);
  t.is(res.body.error.details[0].path, 'body.name');
});

test('an unknown route is a 404 in shape A; every response has a request id', async (t) => {
  const res = await svc.request('GET', '/api/nothing-here');
  t.is(res.status, 404);
  t.is(res.body.error.code, 'NOT_FOUND');
  t.regex(res.headers.get('x-request-id') ?? '', /^[\w-]{8,}$/);
  const echoed = await svc.request('GET', '/api/tools', { headers: { 'x-request-id': 'my-trace-123' } });
  t.is(echoed.headers.get('x-request-id'), 'my-trace-123');
});

test('GET /health reports the database and the search engine', async (t) => {
  const res = await svc.request('GET', '/health');
  t.is(res.status, 200);
  t.true(res.body.data.database.ok);
  t.true(res.body.data.search.ok);
  t.is(res.body.data.search.engine, 'embedded');
  t.false(res.body.data.worker.ok, 'no worker runs in this test file');
  t.is(res.body.data.status, 'degraded');
});

test('errors never carry a stack trace', async (t) => {
  const res = await svc.request('GET', '/api/tools/not-a-tool');
  t.is(res.status, 404);
  t.false(res.text.includes('    at '));
});
