import test from 'ava';
import { startApi } from '../api/server.js';
import { createLogger } from '../core/logger.js';
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

test('the admin token is not rate limited and /health carries no limit', async (t) => {
  const res = await svc.request('GET', '/health');
  t.is(res.headers.get('x-ratelimit-limit'), null);
});
