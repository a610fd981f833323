import test from 'ava';
import net from 'node:net';
import { startService, type Service } from '../helpers/service.js';

// What Node's HTTP parser refuses before the app runs is answered in the contract's error shape too.
let svc: Service;
test.before(async () => {
  svc = await startService({ worker: false });
});
test.after.always(() => svc?.close());

/** Sends bytes as they are and reads the whole answer (the server closes the connection after these errors). */
function rawExchange(bytes: Buffer | string): Promise<{ status: number; headers: string; body: any }> {
  const { port } = new URL(svc.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head, ...rest] = text.split('\r\n\r\n');
      let body: unknown;
      try {
        body = JSON.parse(rest.join('\r\n\r\n'));
      } catch {
        body = undefined;
      }
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), headers: head, body });
    });
    socket.end(bytes);
  });
}

const isShapeA = (t: any, res: { body: any }, code: string, what: string) => {
  t.is(res.body?.success, false, what);
  t.is(res.body?.error?.code, code, what);
  t.is(typeof res.body?.error?.message, 'string', what);
};

test('a request line or headers over the limit: 431 in shape A', async (t) => {
  const res = await rawExchange(`GET /api/tools/search?q=${'a'.repeat(70_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
  t.is(res.status, 431);
  isShapeA(t, res, 'VALIDATION_ERROR', 'long URL');
  t.regex(res.headers, /content-type: application\/json/i);
});

test('bytes that are not HTTP, or a body framed two ways: 400 in shape A', async (t) => {
  for (const [what, bytes] of [
    ['a raw 0xff in the request line', Buffer.concat([Buffer.from('GET /api/tools?q='), Buffer.from([0xff]), Buffer.from(' HTTP/1.1\r\nHost: x\r\n\r\n')])],
    ['a NUL in the request line', 'GET /api/\u0000tools HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['Content-Length and Transfer-Encoding both', 'POST /api/keys HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
    ['not HTTP at all', 'HELLO THERE\r\n\r\n'],
  ] as const) {
    const res = await rawExchange(bytes);
    t.is(res.status, 400, what);
    isShapeA(t, res, 'VALIDATION_ERROR', what);
  }
});

test('a 4,000-character non-ASCII search query (36 KB percent-encoded) is answered, not refused by the parser', async (t) => {
  const q = encodeURIComponent('検'.repeat(4000));
  t.true(q.length > 32_000);
  const res = await svc.request('GET', `/api/tools/search?q=${q}`);
  t.is(res.status, 200, res.text.slice(0, 200));
  t.is(res.body.query, '検'.repeat(4000));
});
