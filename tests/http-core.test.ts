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

test('a content-coded body (gzip, or a label we do not decode) is a 415 naming what we take, and creates nothing', async (t) => {
  const { gzipSync } = await import('node:zlib');
  const json = JSON.stringify({ name: 'coded' });
  for (const [coding, rawBody] of [
    ['gzip', gzipSync(json)],
    ['br', json],
    ['x-bogus', json],
  ] as const) {
    const res = await svc.request('POST', '/api/keys', { key, rawBody, headers: { 'content-type': 'application/json', 'content-encoding': coding } });
    t.is(res.status, 415, coding);
    t.is(res.body.error.code, 'UNSUPPORTED_MEDIA_TYPE');
    t.regex(res.body.error.message, /Content-Encoding/);
    t.is(res.headers.get('accept-encoding'), 'identity');
  }
  const identity = await svc.request('POST', '/api/keys', {
    key,
    rawBody: json,
    headers: { 'content-type': 'application/json', 'content-encoding': 'identity' },
  });
  t.is(identity.status, 201, identity.text);
  const names = (await svc.request('GET', '/api/keys', { key })).body.data.map((k: { name: string }) => k.name);
  t.is(names.filter((n: string) => n === 'coded').length, 1, 'only the identity one was made');
});

test('a JSON null body is refused like any other non-object, and creates nothing', async (t) => {
  const key = (await svc.createUser()).key; // its own: the other tests of this file make keys at the same time
  const before = (await svc.request('GET', '/api/keys', { key })).body.data.length;
  const res = await svc.request('POST', '/api/keys', { key, rawBody: 'null', headers: { 'content-type': 'application/json' } });
  t.is(res.status, 400);
  t.is(res.body.error.code, 'VALIDATION_ERROR');
  t.deepEqual(res.body.error.details, [{ path: 'body', message: 'Invalid input: expected object, received null' }]);
  const collection = await svc.request('POST', '/api/collections', { key, rawBody: 'null', headers: { 'content-type': 'application/json' } });
  t.is(collection.status, 400);
  t.is(collection.body.error.details[0].path, 'body');
  t.is((await svc.request('GET', '/api/keys', { key })).body.data.length, before);
});

test('an operation that takes no body refuses one that is not empty (null, an array, unknown fields), and does nothing', async (t) => {
  const own = await svc.createUser();
  const made = await svc.request('POST', '/api/keys', { key: own.key, body: { name: 'spare' } });
  const json = { 'content-type': 'application/json' };
  for (const rawBody of ['null', '[1,2]', '{"x":1}', '"text"']) {
    const res = await svc.request('DELETE', `/api/keys/${made.body.data.id}`, { key: own.key, rawBody, headers: json });
    t.is(res.status, 400, rawBody);
    t.deepEqual(res.body.error.details, [{ path: 'body', message: 'must be empty: this operation takes no body' }]);
  }
  const keys = (await svc.request('GET', '/api/keys', { key: own.key })).body.data;
  t.is(keys.find((k: { id: string }) => k.id === made.body.data.id).revokedAt, null, 'not revoked');
  t.is(
    (await svc.request('DELETE', `/api/keys/${made.body.data.id}`, { key: own.key, rawBody: '{}', headers: json })).status,
    200,
    'an empty object is no body',
  );
});

test('a Transfer-Encoding other than chunked is a 415 (Node read "gzip, chunked" as plain chunked bytes)', async (t) => {
  const { default: net } = await import('node:net');
  const own = await svc.createUser();
  const u = new URL(svc.url);
  const send = (transfer: string) =>
    new Promise<string>((resolve, reject) => {
      const body = '{"name":"te-gz"}';
      const socket = net.connect(Number(u.port), u.hostname, () =>
        socket.write(
          `POST /api/keys HTTP/1.1\r\nHost: ${u.host}\r\nAuthorization: Bearer ${own.key}\r\nContent-Type: application/json\r\n` +
            `Transfer-Encoding: ${transfer}\r\nConnection: close\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
        ),
      );
      let text = '';
      socket.on('data', (c) => (text += c));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
  t.regex(await send('gzip, chunked'), /^HTTP\/1\.1 415 /);
  t.deepEqual(
    (await svc.request('GET', '/api/keys', { key: own.key })).body.data.map((k: { name: string }) => k.name),
    ['default'],
  );
  t.regex(await send('chunked'), /^HTTP\/1\.1 201 /);
});
