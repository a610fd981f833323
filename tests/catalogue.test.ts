import test from 'ava';
import fs from 'node:fs/promises';
import path from 'node:path';
import { EXAMPLES_DIR, FIXTURES_DIR, startService, type Service } from './helpers/service.js';

let svc: Service;
let total = 0;
let alice: { key: string; id: string; username: string };
let bob: { key: string; id: string; username: string };

test.before(async () => {
  svc = await startService({ sandbox: 'process' });
  for (const dir of (await fs.readdir(EXAMPLES_DIR)).sort()) {
    const res = await svc.importPackage(`path:${path.join(EXAMPLES_DIR, dir)}`);
    if (res.status !== 201) throw new Error(`import ${dir}: ${res.text}`);
    total += res.body.data.tools.length;
  }
  const broken = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'packages', 'load-fails')}`);
  total += broken.body.data.tools.length;
  await svc.api.searchSync.flush();
  alice = await svc.createUser();
  bob = await svc.createUser();
});
test.after.always(() => svc?.close());

type Item = { id: string; name: string; qualityScore: number; healthStatus: string; package: { npmPackageName: string; category: string; env: string[] } };

test('list: item shape, default limit 20, ordered by qualityScore then name', async (t) => {
  const res = await svc.request('GET', '/api/tools');
  t.is(res.status, 200);
  t.is(res.body.data.length, Math.min(20, total));
  t.deepEqual(res.body.pagination, { limit: 20, offset: 0, hasMore: total > 20 });
  const item = res.body.data[0];
  t.deepEqual(Object.keys(item).sort(), ['averageRating', 'description', 'healthStatus', 'id', 'name', 'package', 'qualityScore', 'ratingCount'].sort());
  t.deepEqual(Object.keys(item.package).sort(), ['category', 'env', 'npmPackageName']);
  const items: Item[] = res.body.data;
  for (let i = 1; i < items.length; i++) {
    const [a, b] = [items[i - 1], items[i]];
    t.true(a.qualityScore > b.qualityScore || (a.qualityScore === b.qualityScore && a.name <= b.name), `${a.name} before ${b.name}`);
  }
});

// Serial: the rating tests change qualityScore, which reorders the list while it is being paged.
test.serial('list: paging is exact — every tool once, hasMore false exactly on the last page', async (t) => {
  const seen: string[] = [];
  for (let offset = 0; ; offset += 7) {
    const res = await svc.request('GET', `/api/tools?limit=7&offset=${offset}`);
    seen.push(...res.body.data.map((x: Item) => x.id));
    t.is(res.body.pagination.hasMore, offset + 7 < total, `hasMore at offset ${offset}`);
    if (!res.body.pagination.hasMore) break;
  }
  t.is(seen.length, total);
  t.is(new Set(seen).size, total);
  const exact = await svc.request('GET', `/api/tools?limit=${total}`);
  t.false(exact.body.pagination.hasMore, 'a page that ends exactly at the last row has no more');
});

test('list: limit above the maximum is clamped; bad paging values are 400', async (t) => {
  const clamped = await svc.request('GET', '/api/tools?limit=500');
  t.is(clamped.status, 200);
  t.is(clamped.body.pagination.limit, 100);
  for (const q of ['limit=abc', 'limit=-1', 'offset=-5', 'limit=2.5', 'offset=x']) {
    const res = await svc.request('GET', `/api/tools?${q}`);
    t.is(res.status, 400, q);
    t.is(res.body.error.code, 'VALIDATION_ERROR');
    t.is(res.body.error.details[0].path, `query.${q.split('=')[0]}`);
  }
});

test('list: category and q filters; an unknown category is 400', async (t) => {
  const res = await svc.request('GET', '/api/tools?category=security&limit=100');
  t.true(res.body.data.length > 0);
  t.true(res.body.data.every((x: Item) => x.package.category === 'security'));
  const q = await svc.request('GET', '/api/tools?q=CSV&limit=100');
  t.true(q.body.data.length > 0);
  t.true(q.body.data.every((x: Item & { description: string }) => /csv/i.test(x.name + x.description + x.package.npmPackageName)));
  const bad = await svc.request('GET', '/api/tools?category=cooking');
  t.is(bad.status, 400);
});

test('detail: by id, by slug (scoped), by package::tool; 404 otherwise', async (t) => {
  const first: Item = (await svc.request('GET', '/api/tools')).body.data[0];
  const byId = await svc.request('GET', `/api/tools/${first.id}`);
  t.is(byId.status, 200);
  const d = byId.body.data;
  for (const k of ['inputSchema', 'healthStatus', 'lastHealthCheckAt', 'executionCount', 'createdAt']) t.true(k in d, k);
  t.regex(d.package.version, /^\d+\.\d+\.\d+/);
  const bySlug = await svc.request('GET', `/api/tools/${first.package.npmPackageName}/${first.name}`);
  t.is(bySlug.body.data.id, first.id);
  const byColons = await svc.request('GET', `/api/tools/${encodeURIComponent(`${first.package.npmPackageName}::${first.name}`)}`);
  t.is(byColons.body.data.id, first.id);
  const missing = await svc.request('GET', `/api/tools/${first.package.npmPackageName}/noSuchTool`);
  t.is(missing.status, 404);
  t.is(missing.body.error.code, 'NOT_FOUND');
  t.is((await svc.request('GET', '/api/tools/00000000-0000-4000-8000-000000000000')).status, 404);
});

test('search: ranked results in the contract shape; BROKEN tools never appear; q required', async (t) => {
  const res = await svc.request('GET', '/api/tools/search?q=csv%20json');
  t.is(res.status, 200);
  t.is(res.body.query, 'csv json');
  t.true(res.body.results.total >= 1);
  t.regex(res.body.results.tools[0].name, /csv/i);
  const broken = await svc.request('GET', '/api/tools/search?q=doThing');
  t.false(
    broken.body.results.tools.some((x: Item) => x.name === 'doThing'),
    'the BROKEN tool is hidden',
  );
  const stillReadable = await svc.request('GET', '/api/tools/@fixtures/load-fails/doThing');
  t.is(stillReadable.status, 200, 'but stays readable by id');
  // Each refusal names what is wrong with q.
  for (const [query, message] of [
    ['', 'is required'],
    ['?q=%20', 'is required'],
    [`?q=${'a'.repeat(4001)}`, 'Too big: expected string to have <=4000 characters'],
    ['?q=a&q=b', 'Invalid input: expected string, received array'],
  ]) {
    const refused = await svc.request('GET', `/api/tools/search${query}`);
    t.is(refused.status, 400, query);
    t.deepEqual(refused.body.error.details, [{ path: 'query.q', message }], query.slice(0, 20));
  }
  t.is((await svc.request('GET', '/api/tools/search?q=x&limit=0')).status, 400);
  const clamped = await svc.request('GET', '/api/tools/search?q=text&limit=101');
  t.is(clamped.status, 200, 'a limit above 100 is clamped, like every paged limit');
  const limited = await svc.request('GET', '/api/tools/search?q=text&limit=2');
  t.true(limited.body.results.tools.length <= 2);
  const cat = await svc.request('GET', '/api/tools/search?q=hash&category=security');
  t.true(cat.body.results.tools.every((x: Item) => x.package.category === 'security'));
});

test('rating: key required, 1..5 integers, a second rating replaces the first', async (t) => {
  const tool: Item = (await svc.request('GET', '/api/tools')).body.data[1];
  t.is((await svc.request('POST', `/api/tools/${tool.id}/rate`, { body: { rating: 5 } })).status, 401);
  for (const rating of [0, 6, 3.5, '4']) {
    const res = await svc.request('POST', `/api/tools/${tool.id}/rate`, { key: alice.key, body: { rating } });
    t.is(res.status, 400, String(rating));
  }
  const one = await svc.request('POST', `/api/tools/${tool.id}/rate`, { key: alice.key, body: { rating: 2 } });
  t.is(one.status, 200);
  t.deepEqual(one.body.data, { userRating: 2, averageRating: 2, ratingCount: 1 });
  const replaced = await svc.request('POST', `/api/tools/${tool.id}/rate`, { key: alice.key, body: { rating: 4 } });
  t.deepEqual(replaced.body.data, { userRating: 4, averageRating: 4, ratingCount: 1 });
  const other = await svc.request('POST', `/api/tools/${tool.id}/rate`, { key: bob.key, body: { rating: 5 } });
  t.deepEqual(other.body.data, { userRating: 5, averageRating: 4.5, ratingCount: 2 });
  const listed = (await svc.request('GET', `/api/tools/${tool.id}`)).body.data;
  t.is(listed.averageRating, 4.5);
  t.is(listed.ratingCount, 2);
  t.is((await svc.request('POST', '/api/tools/nope/nothing/rate', { key: alice.key, body: { rating: 3 } })).status, 404);
});

test('rating: twenty first ratings at once by one user are one trending event, as one would be', async (t) => {
  const carol = await svc.createUser();
  // The last tool, rated 1 star: it stays last, out of the way of the tests that pick tools by their place in the list.
  const tool: Item = (await svc.request('GET', `/api/tools?limit=1&offset=${total - 1}`)).body.data[0];
  const answers = await Promise.all(
    Array.from({ length: 20 }, () => svc.request('POST', `/api/tools/${tool.id}/rate`, { key: carol.key, body: { rating: 1 } })),
  );
  t.true(
    answers.every((r) => r.status === 200),
    answers.map((r) => r.status).join(','),
  );
  const events = await svc.api.deps.db('tool_events').where({ tool_id: tool.id, kind: 'rating' });
  t.deepEqual(
    events.map((e) => Math.round(Number(e.weight) * 100) / 100),
    [0.6],
    'one first rating: one event of 3·1/5',
  );
  const trending = await svc.request('GET', '/api/tools/trending?period=day&limit=50');
  t.is(trending.body.data.find((x: { id: string }) => x.id === tool.id)?.trendingScore, 0.6);
});

test('reviews: 201 then 200 on replacement, validation, public paged list', async (t) => {
  const tool: Item = (await svc.request('GET', '/api/tools')).body.data[2];
  const created = await svc.request('POST', `/api/tools/${tool.id}/reviews`, { key: alice.key, body: { rating: 4, title: 'Handy', body: 'Did the job.' } });
  t.is(created.status, 201);
  t.like(created.body.data, { toolId: tool.id, rating: 4, title: 'Handy', body: 'Did the job.', user: { id: alice.id, username: alice.username } });
  const replaced = await svc.request('POST', `/api/tools/${tool.id}/reviews`, { key: alice.key, body: { rating: 2, body: 'Changed my mind.' } });
  t.is(replaced.status, 200);
  t.is(replaced.body.data.id, created.body.data.id);
  t.is(replaced.body.data.title, null);
  t.is((await svc.request('POST', `/api/tools/${tool.id}/reviews`, { key: bob.key, body: { rating: 5, title: 'x'.repeat(121), body: 'ok' } })).status, 400);
  t.is((await svc.request('POST', `/api/tools/${tool.id}/reviews`, { key: bob.key, body: { rating: 5, body: '' } })).status, 400);
  t.is((await svc.request('POST', `/api/tools/${tool.id}/reviews`, { body: { rating: 5, body: 'anon' } })).status, 401);
  await svc.request('POST', `/api/tools/${tool.id}/reviews`, { key: bob.key, body: { rating: 5, body: 'Great.' } });
  const page1 = await svc.request('GET', `/api/tools/${tool.id}/reviews?limit=1`);
  t.is(page1.status, 200);
  t.is(page1.body.data.length, 1);
  t.deepEqual(page1.body.pagination, { limit: 1, offset: 0, hasMore: true });
  const page2 = await svc.request('GET', `/api/tools/${tool.id}/reviews?limit=1&offset=1`);
  t.false(page2.body.pagination.hasMore);
  t.notDeepEqual(page1.body.data[0].id, page2.body.data[0].id);
});

test('trending: weighted events over the period, in the item shape with trendingScore and period', async (t) => {
  const [a, b]: Item[] = (await svc.request('GET', '/api/tools?limit=100')).body.data.slice(10, 12);
  const db = svc.api.deps.db;
  // a: 4 successful executions (4) + 2 failed (0.5) today; b: one 5-star rating (3) and a collection add 40 days ago.
  await db('tool_events').insert([
    ...Array.from({ length: 4 }, () => ({ tool_id: a.id, kind: 'execution_succeeded', weight: 1 })),
    ...Array.from({ length: 2 }, () => ({ tool_id: a.id, kind: 'execution_failed', weight: 0.25 })),
    { tool_id: b.id, kind: 'rating', weight: 3 },
    { tool_id: b.id, kind: 'collection_add', weight: 3, created_at: db.raw("now() - interval '40 days'") },
  ]);
  const week = await svc.request('GET', '/api/tools/trending?period=week&limit=50');
  t.is(week.status, 200);
  const scoreOf = (res: typeof week, id: string) => res.body.data.find((x: { id: string }) => x.id === id)?.trendingScore;
  t.is(scoreOf(week, a.id), 4.5);
  t.is(scoreOf(week, b.id), 3);
  t.is(week.body.data[0].period, 'week');
  const all = await svc.request('GET', '/api/tools/trending?period=all&limit=50');
  t.is(scoreOf(all, b.id), 6);
  const scores = week.body.data.map((x: { trendingScore: number }) => x.trendingScore);
  t.deepEqual(
    scores,
    [...scores].sort((x: number, y: number) => y - x),
  );
  t.is((await svc.request('GET', '/api/tools/trending?period=year')).status, 400);
  t.is((await svc.request('GET', '/api/tools/trending?limit=500')).status, 200);
  const cat = await svc.request('GET', `/api/tools/trending?period=all&category=${a.package.category}`);
  t.true(cat.body.data.every((x: Item) => x.package.category === a.package.category));
});
