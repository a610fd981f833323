import test from 'ava';
import path from 'node:path';
import { EXAMPLES_DIR, startService, type Service } from '../helpers/service.js';

// Trending counts callers, not calls: one user repeating a tool must not outrank a tool several people used.
let svc: Service;
const TEXT = '@toolshed-examples/text-tools';

test.before(async () => {
  svc = await startService({ sandbox: 'process', env: { TRUST_PROXY: '1' } });
  const res = await svc.importPackage(`path:${path.join(EXAMPLES_DIR, 'text-tools')}`);
  if (res.status !== 201) throw new Error(res.text);
});
test.after.always(() => svc?.close());

async function run(tool: string, params: unknown, opts: { key?: string; from?: string } = {}) {
  const res = await svc.request('POST', `/api/tools/execute/${TEXT}/${tool}`, {
    key: opts.key,
    headers: opts.from ? { 'x-forwarded-for': opts.from } : {},
    body: { params },
  });
  if (res.status !== 200 || !res.body.success) throw new Error(res.text);
}

test('25 calls by one user do not beat a tool three users called once; anonymous callers count by address (/64)', async (t) => {
  const repeater = await svc.createUser();
  for (let round = 0; round < 5; round++) {
    await Promise.all(Array.from({ length: 5 }, (_, i) => run('slugify', { text: `again ${round} ${i}` }, { key: repeater.key })));
  }
  for (const user of [await svc.createUser(), await svc.createUser(), await svc.createUser()]) {
    await run('convertCase', { text: 'user account id', to: 'camel' }, { key: user.key });
  }
  // Two addresses of one IPv6 /64 are one anonymous caller; an IPv4 address is another.
  for (const from of ['2001:db8:1:1::1', '2001:db8:1:1::2', '2001:db8:1:1::3', '203.0.113.7', '203.0.113.7']) {
    await run('textStatistics', { text: 'One sentence. Two.' }, { from });
  }
  const trending = await svc.request('GET', '/api/tools/trending?period=day&limit=50');
  t.is(trending.status, 200, trending.text);
  const names = trending.body.data.map((x: { name: string }) => x.name);
  const scoreOf = (name: string) => trending.body.data.find((x: { name: string }) => x.name === name)?.trendingScore;
  t.deepEqual(names.slice(0, 3), ['convertCase', 'textStatistics', 'slugify'], trending.text);
  t.is(scoreOf('convertCase'), 3, 'three users, one success each');
  t.is(scoreOf('textStatistics'), 2, 'one /64 and one IPv4 address');
  t.is(scoreOf('slugify'), 1, "one user's 25 successes count once");
  // The calls themselves are all counted where counts are meant: the tool's execution count.
  const slugify = await svc.request('GET', `/api/tools/${TEXT}/slugify`);
  t.is(slugify.body.data.executionCount, 25);
});
