import test from 'ava';
import { startApi } from '../api/server.js';
import { createLogger } from '../core/infra/logger.js';
import { startService, type Service } from './helpers/service.js';

let svc: Service;
test.before(async () => {
  svc = await startService({ worker: false, env: { RATE_LIMIT_FREE_MINUTE: '60', RATE_LIMIT_FREE_DAY: '1000', RATE_LIMIT_PRO_MINUTE: '300' } });
});
test.after.always(() => svc?.close());

test('the 61st request in a minute is a 429 with Retry-After; headers count down', async (t) => {
  const u = await svc.createUser();
  const remaining: number[] = [];
  for (let i = 0; i < 60; i++) {
    const res = await svc.request('GET', '/api/tools', { key: u.key });
    t.is(res.status, 200);
    t.is(res.headers.get('x-ratelimit-limit'), '60');
    remaining.push(Number(res.headers.get('x-ratelimit-remaining')));
    const reset = Number(res.headers.get('x-ratelimit-reset'));
    t.true(reset > Date.now() / 1000 && reset <= Date.now() / 1000 + 61);
  }
  t.deepEqual(
    remaining,
    Array.from({ length: 60 }, (_, i) => 59 - i),
  );
  const over = await svc.request('GET', '/api/tools', { key: u.key });
  t.is(over.status, 429);
  t.is(over.body.error.code, 'RATE_LIMITED');
  const retry = Number(over.headers.get('retry-after'));
  t.true(retry >= 1 && retry <= 60);
  t.is(over.body.error.message, `Retry after ${retry} seconds`);
  t.is(over.headers.get('x-ratelimit-remaining'), '0');
  const other = await svc.createUser();
  t.is((await svc.request('GET', '/api/tools', { key: other.key })).status, 200, 'another key has its own counter');
});

test('requests of one caller at once each take their own point: 70 → 60 answered (remaining 59 … 0, once each), 10 refused', async (t) => {
  // The limiter takes the points of requests that arrive together in one statement (rate-limit.ts): none may share a
  // point or be lost.
  const u = await svc.createUser();
  const answers = await Promise.all(Array.from({ length: 70 }, () => svc.request('GET', '/api/tools?limit=1', { key: u.key })));
  const ok = answers.filter((r) => r.status === 200);
  const refused = answers.filter((r) => r.status === 429);
  t.is(ok.length, 60);
  t.is(refused.length, 10);
  t.deepEqual(
    ok.map((r) => Number(r.headers.get('x-ratelimit-remaining'))).sort((a, b) => b - a),
    Array.from({ length: 60 }, (_, i) => 59 - i),
  );
  for (const r of refused) t.is(r.headers.get('x-ratelimit-remaining'), '0');
  const next = await svc.request('GET', '/api/tools?limit=1', { key: u.key });
  t.is(next.status, 429, 'the minute stays spent');
});

test('anonymous callers are limited per IP at the free tier', async (t) => {
  // This file's anonymous requests share 127.0.0.1; exhaust what is left of its minute.
  let res;
  let n = 0;
  do {
    res = await svc.request('GET', '/api/tools');
    n++;
  } while (res.status === 200 && n < 70);
  t.is(res.status, 429);
  t.true(n <= 61);
  t.is(res.headers.get('x-ratelimit-limit'), '60');
});

test('pro keys get 300 per minute; counters are shared by every API process', async (t) => {
  const u = await svc.createUser({ tier: 'pro' });
  const first = await svc.request('GET', '/api/tools', { key: u.key });
  t.is(first.headers.get('x-ratelimit-limit'), '300');
  t.is(first.headers.get('x-ratelimit-remaining'), '299');
  const second = await startApi(svc.config, svc.databaseUrl, createLogger('silent'), 0);
  try {
    const res = await fetch(`${second.url}/api/tools`, { headers: { authorization: `Bearer ${u.key}` } });
    t.is(res.headers.get('x-ratelimit-remaining'), '298', "the second process sees the first one's count");
  } finally {
    await second.close();
  }
});

test('the admin token and /health are not limited; their headers are integers (unlimited: 2147483647)', async (t) => {
  for (const [p, headers, limit] of [
    ['/health', {}, '60'],
    ['/api/tools', { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` }, '2147483647'],
  ] as const) {
    const before = await svc.request('GET', p, { headers });
    const after = await svc.request('GET', p, { headers });
    t.is(after.headers.get('x-ratelimit-limit'), limit, p);
    t.regex(after.headers.get('x-ratelimit-remaining') ?? '', /^\d+$/, p);
    const reset = Number(after.headers.get('x-ratelimit-reset'));
    t.true(reset >= Date.now() / 1000 && reset <= Date.now() / 1000 + 61, p);
    // /health reports the address's budget without spending it, which this file's other tests spend meanwhile
    // (tests/rate-limit-headers.test.ts compares exactly); the admin token is unlimited.
    if (p !== '/health')
      t.deepEqual(
        [before, after].map((r) => r.headers.get('x-ratelimit-remaining')),
        ['2147483647', '2147483647'],
      );
  }
});

test('a rejected credential costs its address a point, carries the headers, and guessing keys meets the limit', async (t) => {
  // Its own service: this file's other tests spend 127.0.0.1's anonymous minute.
  const own = await startService({ worker: false, env: { RATE_LIMIT_FREE_MINUTE: '5', RATE_LIMIT_FREE_DAY: '1000' } });
  t.teardown(() => own.close());
  const guesses = [
    { authorization: `Bearer tsk_${'a'.repeat(40)}` }, // well-formed, unknown
    { authorization: 'Bearer not-a-key-and-not-the-admin-token' },
    { authorization: 'Basic Zm9vOmJhcg==' }, // not a bearer token at all
  ];
  const remaining: number[] = [];
  for (const headers of guesses) {
    const res = await own.request('POST', '/api/keys', { headers, body: {} });
    t.is(res.status, 401);
    t.is(res.body.error.code, 'UNAUTHORIZED');
    t.is(res.headers.get('x-ratelimit-limit'), '5');
    remaining.push(Number(res.headers.get('x-ratelimit-remaining')));
  }
  t.deepEqual(remaining, [remaining[0], remaining[0] - 1, remaining[0] - 2], 'each rejected credential is a point of the address');
  const anonymous = await own.request('GET', '/api/tools');
  t.is(Number(anonymous.headers.get('x-ratelimit-remaining')), remaining[0] - 3, 'the same budget as anonymous reads');
  let over = await own.request('GET', '/api/keys', { headers: guesses[0] });
  for (let i = 0; i < 5 && over.status === 401; i++) over = await own.request('GET', '/api/keys', { headers: guesses[0] });
  t.is(over.status, 429, 'over the limit, a guess is refused before its key is looked up');
  t.is(over.body.error.code, 'RATE_LIMITED');
  t.truthy(over.headers.get('retry-after'));
  // A good key is its user's budget, not the exhausted address's.
  const u = await own.createUser();
  t.is((await own.request('GET', '/api/keys', { key: u.key })).status, 200);
});
