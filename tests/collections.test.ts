import test from 'ava';
import path from 'node:path';
import { EXAMPLES_DIR, startService, type Service } from './helpers/service.js';

type User = { key: string; id: string; username: string };
let svc: Service;
let alice: User;
let bob: User;
let tools: { id: string; name: string; package: { npmPackageName: string } }[];

test.before(async () => {
  svc = await startService({ sandbox: 'process' });
  const res = await svc.importPackage(`path:${path.join(EXAMPLES_DIR, 'text-tools')}`);
  if (res.status !== 201) throw new Error(`import: ${res.text}`);
  tools = res.body.data.tools;
  alice = await svc.createUser();
  bob = await svc.createUser();
});
test.after.always(() => svc?.close());

const create = (key: string, body: Record<string, unknown>) => svc.request('POST', '/api/collections', { key, body });
async function collection(key: string, body: Record<string, unknown>) {
  const res = await create(key, body);
  if (res.status !== 201) throw new Error(`create: ${res.status} ${res.text}`);
  return res.body.data as { id: string; uid: string; name: string };
}
const tool = (name: string) => tools.find((t) => t.name === name)!;

test('create: 201 with the collection; defaults isPublic true, empty tools, owner, likedByMe false', async (t) => {
  const res = await create(alice.key, { name: 'Writing helpers', uid: 'writing-helpers', description: 'Tools for prose' });
  t.is(res.status, 201);
  const d = res.body.data;
  t.like(d, { uid: 'writing-helpers', name: 'Writing helpers', description: 'Tools for prose', isPublic: true, toolCount: 0, likeCount: 0, likedByMe: false });
  t.deepEqual(d.owner, { id: alice.id, name: null, username: alice.username });
  t.deepEqual(d.tools, []);
  t.truthy(Date.parse(d.createdAt));
  t.truthy(Date.parse(d.updatedAt));
  t.regex(d.id, /^[0-9a-f-]{36}$/);
});

test('create: the default uid is the slug of the name, made unique', async (t) => {
  const first = await collection(alice.key, { name: 'Crème Brûlée Recipes!' });
  t.is(first.uid, 'creme-brulee-recipes');
  const second = await collection(bob.key, { name: 'creme  brulee -- recipes' });
  t.is(second.uid, 'creme-brulee-recipes-2');
  const third = await collection(alice.key, { name: 'Crème brûlée recipes' });
  t.is(third.uid, 'creme-brulee-recipes-3');
  t.is((await collection(alice.key, { name: 'AI' })).uid, 'ai-collection');
  t.regex((await collection(alice.key, { name: '¿¿??' })).uid, /^collection(-\d+)?$/);
  // Twenty at once (five retries each used to leave some of them a 409).
  const racing = await Promise.all(Array.from({ length: 20 }, () => collection(bob.key, { name: 'Racing Names' })));
  t.deepEqual(
    racing.map((c) => c.uid).sort(),
    ['racing-names', ...Array.from({ length: 19 }, (_, i) => `racing-names-${i + 2}`)].sort(),
    'concurrent creates get distinct uids',
  );
  const long = await collection(alice.key, { name: 'abcdefghij '.repeat(9) });
  t.true(long.uid.length <= 64);
  t.regex(long.uid, /^[a-z0-9]+(?:-[a-z0-9]+)*$/);
});

test('create: a uid taken by anyone is a 409; bad uids and fields are 400 naming the field', async (t) => {
  await collection(alice.key, { name: 'Mine', uid: 'taken-uid' });
  const conflict = await create(bob.key, { name: 'Yours', uid: 'taken-uid' });
  t.is(conflict.status, 409);
  t.is(conflict.body.error.code, 'CONFLICT');
  t.regex(conflict.body.error.message, /taken-uid/);
  for (const uid of ['ab', 'Has-Caps', 'double--hyphen', '-lead', 'trail-', 'under_score', 'x'.repeat(65), '123e4567-e89b-42d3-a456-426614174000']) {
    const res = await create(alice.key, { name: 'Bad uid', uid });
    t.is(res.status, 400, uid);
    t.is(res.body.error.details[0].path, 'body.uid', uid);
  }
  for (const [body, field] of [
    [{ name: '' }, 'body.name'],
    [{ name: '   ' }, 'body.name'],
    [{ name: 'x'.repeat(101) }, 'body.name'],
    [{ name: 'ok', description: 'd'.repeat(1001) }, 'body.description'],
    [{ name: 'ok', isPublic: 'yes' }, 'body.isPublic'],
    [{}, 'body.name'],
  ] as const) {
    const res = await create(alice.key, body);
    t.is(res.status, 400, JSON.stringify(body));
    t.is(res.body.error.details[0].path, field);
  }
  t.is((await create(alice.key, { name: 'ok', colour: 'red' })).status, 400, 'unknown fields are refused');
});

test('anonymous writes are 401 in shape A; reads need no key', async (t) => {
  const c = await collection(alice.key, { name: 'Open to read' });
  const writes: [string, string, unknown?][] = [
    ['POST', '/api/collections', { name: 'x' }],
    ['PATCH', `/api/collections/${c.uid}`, { name: 'y' }],
    ['DELETE', `/api/collections/${c.uid}`],
    ['POST', `/api/collections/${c.uid}/tools`, { toolId: tool('slugify').id }],
    ['DELETE', `/api/collections/${c.uid}/tools/${tool('slugify').id}`],
    ['POST', `/api/collections/${c.uid}/like`],
  ];
  for (const [method, p, body] of writes) {
    const res = await svc.request(method, p, { body });
    t.is(res.status, 401, `${method} ${p}`);
    t.deepEqual(res.body, { success: false, error: { code: 'UNAUTHORIZED', message: 'A valid API key is required' } });
  }
  const read = await svc.request('GET', `/api/collections/${c.uid}`);
  t.is(read.status, 200);
  t.false('likedByMe' in read.body.data, 'likedByMe only when a key is given');
});

test('detail by uid or id; unknown is 404; private collections are 404 to everyone but the owner', async (t) => {
  const pub = await collection(alice.key, { name: 'Public one' });
  t.is((await svc.request('GET', `/api/collections/${pub.id}`)).body.data.uid, pub.uid);
  t.is((await svc.request('GET', `/api/collections/${pub.uid}`)).body.data.id, pub.id);
  t.is((await svc.request('GET', '/api/collections/no-such-collection')).status, 404);
  t.is((await svc.request('GET', '/api/collections/00000000-0000-4000-8000-000000000000')).status, 404);

  const priv = await collection(alice.key, { name: 'Secret stash', isPublic: false });
  for (const key of [undefined, bob.key]) {
    for (const [method, p, body] of [
      ['GET', `/api/collections/${priv.uid}`],
      ['GET', `/api/collections/${priv.id}`],
      ['POST', `/api/collections/${priv.uid}/like`],
      ...(key
        ? [
            ['PATCH', `/api/collections/${priv.uid}`, { name: 'mine now' }],
            ['DELETE', `/api/collections/${priv.uid}`],
          ]
        : []),
    ] as [string, string, unknown?][]) {
      const res = await svc.request(method, p, { key, body });
      t.is(res.status, key || method === 'GET' ? 404 : 401, `${method} ${p} ${key ? 'bob' : 'anonymous'}`);
    }
  }
  const own = await svc.request('GET', `/api/collections/${priv.uid}`, { key: alice.key });
  t.is(own.status, 200);
  t.false(own.body.data.isPublic);
});

test('PATCH: partial update by the owner; 403 to other users; empty or uid changes are 400', async (t) => {
  const c = await collection(alice.key, { name: 'Before', description: 'kept' });
  const renamed = await svc.request('PATCH', `/api/collections/${c.uid}`, { key: alice.key, body: { name: 'After' } });
  t.is(renamed.status, 200);
  t.like(renamed.body.data, { name: 'After', description: 'kept', isPublic: true, uid: c.uid });
  const hidden = await svc.request('PATCH', `/api/collections/${c.id}`, { key: alice.key, body: { isPublic: false, description: null } });
  t.like(hidden.body.data, { name: 'After', description: null, isPublic: false });
  t.is((await svc.request('GET', `/api/collections/${c.uid}`)).status, 404, 'made private: hidden from others');
  await svc.request('PATCH', `/api/collections/${c.uid}`, { key: alice.key, body: { isPublic: true } });

  const forbidden = await svc.request('PATCH', `/api/collections/${c.uid}`, { key: bob.key, body: { name: 'Hijacked' } });
  t.is(forbidden.status, 403);
  t.is(forbidden.body.error.code, 'FORBIDDEN');
  t.is((await svc.request('GET', `/api/collections/${c.uid}`)).body.data.name, 'After');
  t.is((await svc.request('PATCH', `/api/collections/${c.uid}`, { key: alice.key, body: {} })).status, 400);
  t.is((await svc.request('PATCH', `/api/collections/${c.uid}`, { key: alice.key, body: { uid: 'new-uid' } })).status, 400);
  t.is((await svc.request('PATCH', '/api/collections/nothing-here', { key: alice.key, body: { name: 'x' } })).status, 404);
});

test('add tool by id, <package>::<tool> or slug: 201 with toolCount; duplicate 409; unknown 404; others 403', async (t) => {
  const c = await collection(alice.key, { name: 'Adders' });
  const add = (toolId: string, key = alice.key) => svc.request('POST', `/api/collections/${c.uid}/tools`, { key, body: { toolId } });
  const pkg = '@toolshed-examples/text-tools';
  const byId = await add(tool('slugify').id);
  t.is(byId.status, 201);
  t.deepEqual(byId.body, { success: true, data: { collectionId: c.id, toolId: tool('slugify').id, toolCount: 1 } });
  t.deepEqual((await add(`${pkg}::convertCase`)).body.data, { collectionId: c.id, toolId: tool('convertCase').id, toolCount: 2 });
  t.deepEqual((await add(`${pkg}/diffText`)).body.data, { collectionId: c.id, toolId: tool('diffText').id, toolCount: 3 });

  const dup = await add(`${pkg}/slugify`);
  t.is(dup.status, 409);
  t.is(dup.body.error.code, 'CONFLICT');
  t.is((await add(`${pkg}/noSuchTool`)).status, 404);
  t.is((await add('00000000-0000-4000-8000-000000000000')).status, 404);
  t.is((await add(tool('testRegex').id, bob.key)).status, 403);
  t.is((await svc.request('POST', `/api/collections/${c.uid}/tools`, { key: alice.key, body: {} })).status, 400);

  const detail = (await svc.request('GET', `/api/collections/${c.uid}`)).body.data;
  t.is(detail.toolCount, 3);
  t.deepEqual(
    detail.tools.map((x: { name: string }) => x.name),
    ['slugify', 'convertCase', 'diffText'],
    'in the order added',
  );
  t.like(detail.tools[0], { id: tool('slugify').id, name: 'slugify', toolId: `${pkg}::slugify` });
  t.true(detail.tools[0].description.length > 10);
});

test('remove tool: by id or slug; removing one that is not there is 404; others 403', async (t) => {
  const c = await collection(alice.key, { name: 'Removers' });
  for (const name of ['slugify', 'convertCase'])
    await svc.request('POST', `/api/collections/${c.uid}/tools`, { key: alice.key, body: { toolId: tool(name).id } });
  t.is((await svc.request('DELETE', `/api/collections/${c.uid}/tools/${tool('slugify').id}`, { key: bob.key })).status, 403);
  const removed = await svc.request('DELETE', `/api/collections/${c.uid}/tools/${tool('slugify').id}`, { key: alice.key });
  t.is(removed.status, 200);
  t.true(removed.body.success);
  t.regex(removed.body.message, /slugify/);
  t.is((await svc.request('DELETE', `/api/collections/${c.uid}/tools/${tool('slugify').id}`, { key: alice.key })).status, 404);
  const bySlug = await svc.request('DELETE', `/api/collections/${c.uid}/tools/@toolshed-examples/text-tools/convertCase`, { key: alice.key });
  t.is(bySlug.status, 200);
  const detail = (await svc.request('GET', `/api/collections/${c.uid}`)).body.data;
  t.is(detail.toolCount, 0);
  t.deepEqual(detail.tools, []);
});

test('like toggles; likeCount and likedByMe follow; a private collection cannot be liked by others', async (t) => {
  const c = await collection(alice.key, { name: 'Likeable' });
  const like = (key: string) => svc.request('POST', `/api/collections/${c.uid}/like`, { key });
  t.deepEqual((await like(bob.key)).body, { success: true, data: { liked: true, likeCount: 1 } });
  t.deepEqual((await like(alice.key)).body.data, { liked: true, likeCount: 2 });
  t.true((await svc.request('GET', `/api/collections/${c.uid}`, { key: bob.key })).body.data.likedByMe);
  t.deepEqual((await like(bob.key)).body.data, { liked: false, likeCount: 1 });
  const seenByBob = (await svc.request('GET', `/api/collections/${c.uid}`, { key: bob.key })).body.data;
  t.false(seenByBob.likedByMe);
  t.is(seenByBob.likeCount, 1);
});

test('likeCount stays exact under concurrent toggles', async (t) => {
  const c = await collection(alice.key, { name: 'Crowd favourite' });
  const users = await Promise.all(Array.from({ length: 12 }, () => svc.createUser()));
  const like = (u: User) => svc.request('POST', `/api/collections/${c.uid}/like`, { key: u.key });
  const first = await Promise.all(users.map(like));
  t.true(first.every((r) => r.status === 200 && r.body.data.liked));
  t.deepEqual(
    first.map((r) => r.body.data.likeCount).sort((a, b) => a - b),
    Array.from({ length: 12 }, (_, i) => i + 1),
  );
  t.is((await svc.request('GET', `/api/collections/${c.uid}`)).body.data.likeCount, 12);
  // Half of them toggle twice at once, the other half once: 6 likes remain.
  await Promise.all([...users.slice(0, 6).flatMap((u) => [like(u), like(u)]), ...users.slice(6).map(like)]);
  t.is((await svc.request('GET', `/api/collections/${c.uid}`)).body.data.likeCount, 6);
  const rows = await svc.api.deps.db('collection_likes').where({ collection_id: c.id }).count<{ count: number }[]>('* as count');
  t.is(Number(rows[0].count), 6);
});

test('list: public only, newest first, q on name or description, exact paging with hasMore', async (t) => {
  const marker = 'zebra-marker';
  const made: string[] = [];
  for (let i = 0; i < 7; i++) made.push((await collection(i % 2 ? bob.key : alice.key, { name: `List ${i}`, description: `about ${marker} ${i}` })).id);
  made.push((await collection(alice.key, { name: `Named ${marker}` })).id);
  await collection(alice.key, { name: `Hidden ${marker}`, isPublic: false });
  const newestFirst = [...made].reverse();
  const seen: string[] = [];
  for (let offset = 0; ; offset += 3) {
    const res = await svc.request('GET', `/api/collections?q=${marker.toUpperCase()}&limit=3&offset=${offset}`);
    t.is(res.status, 200);
    t.deepEqual(res.body.pagination, { limit: 3, offset, hasMore: offset + 3 < 8 });
    seen.push(...res.body.data.map((c: { id: string }) => c.id));
    if (!res.body.pagination.hasMore) break;
  }
  t.deepEqual(seen, newestFirst, 'every public match once, newest first; the private one never');
  const exact = await svc.request('GET', `/api/collections?q=${marker}&limit=8`);
  t.false(exact.body.pagination.hasMore, 'a page ending exactly at the last row has no more');
  const item = exact.body.data[0];
  t.deepEqual(Object.keys(item).sort(), ['description', 'id', 'isPublic', 'likeCount', 'name', 'owner', 'toolCount', 'uid']);
  const all = await svc.request('GET', '/api/collections?limit=500');
  t.is(all.body.pagination.limit, 50);
  t.is(all.body.data.length <= 50, true);
  t.true(all.body.data.every((c: { isPublic: boolean }) => c.isPublic));
  for (const q of ['limit=-1', 'offset=x', 'limit=1.5']) t.is((await svc.request('GET', `/api/collections?${q}`)).status, 400, q);
});

test('delete: owner only; removes the collection with its tools list, likes and scenarios', async (t) => {
  const c = await collection(alice.key, { name: 'Doomed' });
  await svc.request('POST', `/api/collections/${c.uid}/tools`, { key: alice.key, body: { toolId: tool('slugify').id } });
  await svc.request('POST', `/api/collections/${c.uid}/like`, { key: bob.key });
  const db = svc.api.deps.db;
  await db('scenarios').insert({ collection_id: c.id, created_by: alice.id, prompt: 'Make a slug of "Hello World"', name: 'slug' });
  t.is((await svc.request('DELETE', `/api/collections/${c.uid}`, { key: bob.key })).status, 403);

  const res = await svc.request('DELETE', `/api/collections/${c.uid}`, { key: alice.key });
  t.is(res.status, 200);
  t.true(res.body.success);
  t.is(typeof res.body.message, 'string');
  t.is((await svc.request('GET', `/api/collections/${c.uid}`, { key: alice.key })).status, 404);
  for (const table of ['collection_tools', 'collection_likes', 'scenarios']) {
    t.is((await db(table).where({ collection_id: c.id })).length, 0, table);
  }
  t.is((await svc.request('GET', `/api/tools/${tool('slugify').id}`)).status, 200, 'the tool itself stays');
  t.is((await svc.request('DELETE', `/api/collections/${c.uid}`, { key: alice.key })).status, 404);
  t.is((await collection(bob.key, { name: 'Reused', uid: c.uid })).uid, c.uid, 'its uid is free again');
});

test('adding a tool to a collection counts toward trending', async (t) => {
  const target = tool('textStatistics');
  const before = await svc.request('GET', '/api/tools/trending?period=day&limit=50');
  t.false(before.body.data.some((x: { id: string }) => x.id === target.id));
  const a = await collection(alice.key, { name: 'Trend A' });
  const b = await collection(bob.key, { name: 'Trend B' });
  await svc.request('POST', `/api/collections/${a.uid}/tools`, { key: alice.key, body: { toolId: target.id } });
  await svc.request('POST', `/api/collections/${b.uid}/tools`, { key: bob.key, body: { toolId: target.id } });
  const after = await svc.request('GET', '/api/tools/trending?period=day&limit=50');
  t.is(after.body.data.find((x: { id: string }) => x.id === target.id)?.trendingScore, 6, 'two collection adds, 3 each');
});
