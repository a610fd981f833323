import test from 'ava';
import crypto from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import knex from 'knex';
import { startService, type Service } from '../helpers/service.js';
import { pathTricks, rawRequest } from './raw-http.js';

// Path tricks (case, `//`, dot segments, percent-encoding, trailing characters) against every privileged route:
// none may reach a handler that the canonical path would refuse, and none may skip rate limiting.
let svc: Service;
let db: knex.Knex;
test.before(async () => {
  svc = await startService({ worker: false, env: { TRUST_PROXY: '1', RATE_LIMIT_FREE_MINUTE: '5', RATE_LIMIT_FREE_DAY: '1000' } });
  db = knex({ client: 'pg', connection: svc.databaseUrl });
});
test.after.always(async () => {
  await db?.destroy();
  await svc?.close();
});

/** A fresh client address per request, so that the anonymous rate limit never answers in the router's place. */
/**
 * A client address no other request of this file used: counted, not drawn at random (254 random addresses met again
 * within a minute often enough that a request past the five-a-minute limit was a 429, in a full CI run).
 */
let clients = 0;
const unusedAddress = (prefix: string) => {
  clients++;
  return `${prefix}.${Math.floor(clients / 250)}.${(clients % 250) + 1}`;
};
// TRUST_PROXY=1: the right-most entry is the client's address.
const freshIp = () => `198.51.100.${crypto.randomInt(1, 255)}, ${unusedAddress('10.0')}`;
const asNewClient = (extra: Record<string, string> = {}) => ({ 'x-forwarded-for': unusedAddress('172.16'), ...extra });

const ADMIN_ROUTES: [string, string, unknown][] = [
  ['POST', '/api/admin/users', { username: 'eve', tier: 'enterprise' }],
  ['POST', '/api/admin/packages', { source: 'path:/nonexistent-toolshed-package', official: true }],
  ['POST', '/api/admin/invitations', { note: 'for eve', days: 90 }],
];

for (const [method, canonical, body] of ADMIN_ROUTES) {
  test(`${method} ${canonical}: no spelling of the path opens it without the admin token`, async (t) => {
    const tried: string[] = [];
    for (const p of [canonical, ...pathTricks(canonical)]) {
      for (const headers of [{}, { authorization: 'Bearer not-the-admin-token-at-all' }] as Record<string, string>[]) {
        const res = await rawRequest(svc.url, method, p, { body: JSON.stringify(body), headers: { ...headers, 'x-forwarded-for': freshIp() } });
        tried.push(`${p} → ${res.status}`);
        t.true([400, 401, 404].includes(res.status), `${method} ${p} answered ${res.status}: ${res.text.slice(0, 200)}`);
        t.is(res.body?.success, false, p);
        t.false(res.text.includes('tsk_'), `${p} leaked a key`);
      }
    }
    t.is(Number((await db('users').where({ username: 'eve' }).count('* as n'))[0].n), 0, 'no user was created');
    t.is(Number((await db('packages').count('* as n'))[0].n), 0, 'no package was imported');
    t.is(Number((await db('invitations').count('* as n'))[0].n), 0, 'no invitation was issued');
    t.true(tried.length >= 30);
  });

  test(`${method} ${canonical}: an ordinary user's key is not the admin token`, async (t) => {
    const u = await svc.createUser();
    for (const p of [canonical, canonical.toUpperCase()]) {
      const res = await rawRequest(svc.url, method, p, {
        body: JSON.stringify(body),
        headers: { authorization: `Bearer ${u.key}`, 'x-forwarded-for': freshIp() },
      });
      t.true([401, 403, 404].includes(res.status), `${p} answered ${res.status}`);
    }
    t.is(Number((await db('users').where({ username: 'eve' }).count('* as n'))[0].n), 0);
    t.is(Number((await db('invitations').count('* as n'))[0].n), 0);
  });
}

test('the admin token still works on the canonical path (and only there)', async (t) => {
  const headers = { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` };
  const ok = await rawRequest(svc.url, 'POST', '/api/admin/users', { body: JSON.stringify({ username: 'ada_admin_ok' }), headers });
  t.is(ok.status, 201);
  const upper = await rawRequest(svc.url, 'POST', '/API/ADMIN/USERS', { body: JSON.stringify({ username: 'ada_admin_upper' }), headers });
  t.is(upper.status, 404, 'routes are case-sensitive');
});

test('key routes: no spelling lets an anonymous caller create or list keys', async (t) => {
  for (const p of ['/api/keys', ...pathTricks('/api/keys')]) {
    for (const method of ['POST', 'GET']) {
      const res = await rawRequest(svc.url, method, p, { body: method === 'POST' ? '{}' : undefined, headers: { 'x-forwarded-for': freshIp() } });
      t.true([400, 401, 404].includes(res.status), `${method} ${p} answered ${res.status}`);
      t.false(res.text.includes('tsk_'));
    }
  }
});

test('no spelling of a path skips the per-IP rate limit', async (t) => {
  const headers = asNewClient();
  let res;
  for (let i = 0; i < 5; i++) {
    res = await rawRequest(svc.url, 'GET', '/api/tools', { headers });
    t.is(res.status, 200);
  }
  t.is((await rawRequest(svc.url, 'GET', '/api/tools', { headers })).status, 429);
  for (const p of pathTricks('/api/tools').concat(pathTricks('/api/tools/search?q=http'))) {
    res = await rawRequest(svc.url, 'GET', p, { headers });
    t.false(res.status >= 200 && res.status < 300, `${p} answered ${res.status} past the limit`);
  }
});

test('X-Forwarded-For: only the configured number of hops is trusted', async (t) => {
  // TRUST_PROXY=1: the client address is the right-most entry (what our one proxy appended); anything left of it is
  // the client's own claim. Rotating the claimed part must not give a fresh budget.
  const proxySaw = `192.0.2.${crypto.randomInt(1, 255)}`;
  const statuses: number[] = [];
  for (let i = 0; i < 7; i++) {
    const forged = `100.64.${i}.${crypto.randomInt(1, 255)}`;
    statuses.push((await rawRequest(svc.url, 'GET', '/api/tools', { headers: { 'x-forwarded-for': `${forged}, ${proxySaw}` } })).status);
  }
  t.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429]);
});

test('IPv6 clients are limited per /64, not per address', async (t) => {
  const prefix = `2001:db8:${crypto.randomInt(1, 0xffff).toString(16)}:1`;
  const statuses: number[] = [];
  for (let i = 0; i < 7; i++) {
    statuses.push((await rawRequest(svc.url, 'GET', '/api/tools', { headers: { 'x-forwarded-for': `${prefix}::${(i + 1).toString(16)}` } })).status);
  }
  t.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429]);
  const otherNet = await rawRequest(svc.url, 'GET', '/api/tools', { headers: { 'x-forwarded-for': `2001:db8:ffff:2::1` } });
  t.is(otherNet.status, 200, 'another /64 has its own budget');
});

test('a NUL byte anywhere in a request is a 400 in the contract shape, never a 500', async (t) => {
  const u = await svc.createUser();
  const auth = { authorization: `Bearer ${u.key}` };
  const cases: [string, string, string | undefined][] = [
    ['GET', '/api/tools/abc%00def', undefined],
    ['GET', '/api/tools?q=a%00b', undefined],
    ['GET', '/api/tools/search?q=http%00', undefined],
    ['GET', '/api/collections/x%00y', undefined],
    ['POST', '/api/collections', JSON.stringify({ name: 'nul\u0000name' })],
    ['POST', '/api/keys', JSON.stringify({ name: 'k\u0000' })],
    ['POST', '/api/scenarios', JSON.stringify({ collectionId: 'x', prompt: 'a prompt with a NUL \u0000 in it' })],
    ['POST', '/api/tools/execute/@toolshed-examples/http-tools/decodeBase64', JSON.stringify({ params: { base64: '\u0000' } })],
  ];
  for (const [method, p, body] of cases) {
    const res = await rawRequest(svc.url, method, p, { body, headers: { ...auth, 'x-forwarded-for': freshIp() } });
    t.is(res.status, 400, `${method} ${p}: ${res.text.slice(0, 200)}`);
    t.is(res.body?.success, false);
    const code = res.body?.error?.code ?? res.body?.error;
    t.true(code === 'VALIDATION_ERROR' || code === 'Bad Request', `${p}: ${res.text}`);
  }
  t.is(Number((await db('collections').count('* as n'))[0].n), 0);
});

// Serial: it issues invitations, which other tests of this file count.
test.serial('a Host (or trusted X-Forwarded-Host) that is not a host is a 400: public URLs are built from it', async (t) => {
  const admin = { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` };
  const invite = (headers: Record<string, string>) =>
    rawRequest(svc.url, 'POST', '/api/admin/invitations', { headers: { ...asNewClient(), ...admin, ...headers }, body: JSON.stringify({ note: 'host test' }) });
  for (const bad of ['evil.com/x?<script>', 'a"b', 'evil.com@other', 'a b', 'x'.repeat(300), 'localhost:70000', 'a.com:99999']) {
    for (const header of ['host', 'x-forwarded-host']) {
      const res = await invite({ [header]: bad });
      t.is(res.status, 400, `${header}: ${bad}`);
      t.deepEqual(res.body.error.details, [{ path: 'headers.host', message: 'is not a valid host' }]);
    }
  }
  const before = Number((await db('invitations').count('* as n'))[0].n);
  t.is((await invite({ host: 'a"b' })).status, 400);
  t.is(Number((await db('invitations').count('* as n'))[0].n), before, 'nothing was made');
  for (const [headers, origin] of [
    [{ host: 'tools.example.com:8443' }, 'http://tools.example.com:8443'],
    [{ host: '[::1]:3000' }, 'http://[::1]:3000'],
    [{ host: 'toolshed_web:3000' }, 'http://toolshed_web:3000'],
    [{ 'x-forwarded-host': 'tools.example.com', 'x-forwarded-proto': 'https' }, 'https://tools.example.com'],
  ] as const) {
    const res = await invite(headers);
    t.is(res.status, 201, res.text);
    t.true(res.body.data.url.startsWith(`${origin}/signup?invite=`), res.body.data.url);
  }
  await db('invitations').del(); // the tests after this one assert that no spelling issued any
});

test('two Authorization (or Host) headers are a 400, not the first one silently', async (t) => {
  const [a, b] = [await svc.createUser(), await svc.createUser()];
  const twice = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const u = new URL(svc.url);
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        method: 'GET',
        path: '/api/keys',
        // An array sends the header twice, as a client could.
        headers: { authorization: [`Bearer ${a.key}`, `Bearer ${b.key}`] as unknown as string, 'x-forwarded-for': freshIp() },
      },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, text }));
      },
    );
    req.on('error', reject);
    req.end();
  });
  t.is(twice.status, 400, twice.text);
  t.deepEqual(JSON.parse(twice.text).error.details, [{ path: 'headers.authorization', message: 'is repeated' }]);
  t.false(twice.text.includes('tsk_'));
  const u = new URL(svc.url);
  const hosts = await new Promise<string>((resolve, reject) => {
    const socket = net.connect(Number(u.port), u.hostname, () =>
      socket.write(`GET /api/tools HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\nX-Forwarded-For: ${freshIp()}\r\nConnection: close\r\n\r\n`),
    );
    let text = '';
    socket.on('data', (c) => (text += c));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
  t.regex(hosts, /^HTTP\/1\.1 400 /);
  t.is((await rawRequest(svc.url, 'GET', '/api/keys', { headers: { authorization: `Bearer ${a.key}`, 'x-forwarded-for': freshIp() } })).status, 200);
});
