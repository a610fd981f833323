/**
 * Scenarios (9–13, 16, 17 and PATCH/DELETE): create, list with filters and sorting, detail, a collection's list,
 * error shapes (B on scenario routes, A for bad keys), similarity and generation with the offline provider.
 */
import test from 'ava';
import path from 'node:path';
import { EXAMPLES_DIR, startService, type Service } from './helpers/service.js';

type User = { key: string; id: string; username: string };
let svc: Service;
let alice: User;
let bob: User;
let textTools: { id: string; name: string }[];

test.before(async () => {
  svc = await startService({ sandbox: 'process' });
  for (const dir of ['text-tools', 'data-tools']) {
    const res = await svc.importPackage(`path:${path.join(EXAMPLES_DIR, dir)}`);
    if (res.status !== 201) throw new Error(res.text);
    if (dir === 'text-tools') textTools = res.body.data.tools;
  }
  alice = await svc.createUser();
  bob = await svc.createUser();
});
test.after.always(() => svc?.close());

async function collection(key: string, body: Record<string, unknown>, toolNames: string[] = ['slugify']) {
  const res = await svc.request('POST', '/api/collections', { key, body });
  if (res.status !== 201) throw new Error(res.text);
  for (const name of toolNames) {
    const tool = textTools.find((t) => t.name === name)!;
    await svc.request('POST', `/api/collections/${res.body.data.uid}/tools`, { key, body: { toolId: tool.id } });
  }
  return res.body.data as { id: string; uid: string };
}
async function scenario(key: string, body: Record<string, unknown>) {
  const res = await svc.request('POST', '/api/scenarios', { key, body });
  if (res.status !== 201) throw new Error(`${res.status} ${res.text}`);
  return res.body.data;
}
const B = (status: number, word: string) => ({ status, word });
function isShapeB(t: any, res: { status: number; body: any }, expected: { status: number; word: string }, what: string) {
  t.is(res.status, expected.status, what);
  t.is(res.body.success, false, what);
  t.is(res.body.error, expected.word, what);
  t.is(typeof res.body.message, 'string', what);
}

test('create: 201 with the scenario; name defaults from the prompt; embedding stored with its model', async (t) => {
  const c = await collection(alice.key, { name: 'Create test' });
  const s = await scenario(alice.key, {
    collectionId: c.uid,
    prompt: 'Slugify "Hello World" with slugify',
    tags: ['slug', 'text', 'slug'],
    assertions: [{ type: 'toolCalled', tool: 'slugify' }, { type: 'noToolErrors' }],
  });
  t.like(s, {
    collectionId: c.id,
    name: 'Slugify "Hello World" with slugify',
    description: null,
    qualityScore: 0.5,
    totalRuns: 0,
    lastRunAt: null,
    lastRunStatus: null,
    consecutivePasses: 0,
    consecutiveFails: 0,
  });
  t.deepEqual(s.tags, ['slug', 'text']);
  t.deepEqual(s.assertions, [{ type: 'toolCalled', tool: 'slugify' }, { type: 'noToolErrors' }]);
  t.like(s.collection, { id: c.id, uid: c.uid, isPublic: true, owner: { id: alice.id, username: alice.username } });
  const long = await scenario(alice.key, { collectionId: c.id, prompt: `Please ${'slugify the following words carefully '.repeat(10)}` });
  t.true(long.name.length <= 80 && long.name.endsWith('…'), long.name);
  // Cut between characters, never inside one (an emoji is two UTF-16 units).
  const emoji = await scenario(alice.key, { collectionId: c.id, prompt: '😀'.repeat(100) });
  t.is(emoji.name, `${'😀'.repeat(39)}…`);
  const comma = await svc.request('POST', '/api/scenarios', { key: alice.key, body: { collectionId: c.id, prompt: 'Slugify a title please', tags: ['a,b'] } });
  t.is(comma.status, 400, 'a tag with a comma could never be matched by ?tags=');
  t.regex(comma.body.message, /comma/);
  const row = await svc.api.deps.db('scenarios').where({ id: s.id }).first();
  t.is(row.embedding_model, 'offline-tfidf-v1');
  t.is(row.embedding.length, 1024);
});

test('PATCH re-embeds a changed prompt; DELETE removes; both owner-only', async (t) => {
  const c = await collection(alice.key, { name: 'Patch test' });
  const s = await scenario(alice.key, { collectionId: c.id, prompt: 'Slugify "Hello World" with slugify' });
  const before = await svc.api.deps.db('scenarios').where({ id: s.id }).first('embedding');
  isShapeB(t, await svc.request('PATCH', `/api/scenarios/${s.id}`, { key: bob.key, body: { name: 'x' } }), B(403, 'Forbidden'), 'PATCH by bob');
  const res = await svc.request('PATCH', `/api/scenarios/${s.id}`, {
    key: alice.key,
    body: { prompt: 'Count the words in "the quick brown fox" with textStatistics' },
  });
  t.is(res.status, 200);
  t.is(res.body.data.prompt, 'Count the words in "the quick brown fox" with textStatistics');
  const after = await svc.api.deps.db('scenarios').where({ id: s.id }).first('embedding');
  t.notDeepEqual(after.embedding, before.embedding, 'the new prompt was embedded');
  isShapeB(t, await svc.request('PATCH', `/api/scenarios/${s.id}`, { key: alice.key, body: {} }), B(400, 'Bad Request'), 'empty PATCH');
  isShapeB(t, await svc.request('DELETE', `/api/scenarios/${s.id}`, { key: bob.key }), B(403, 'Forbidden'), 'DELETE by bob');
  t.is((await svc.request('DELETE', `/api/scenarios/${s.id}`, { key: alice.key })).status, 200);
  isShapeB(t, await svc.request('GET', `/api/scenarios/${s.id}`), B(404, 'Not Found'), 'deleted');
});

test('errors are shape B on scenario routes (400/401/403/404); an unknown key stays shape A', async (t) => {
  const c = await collection(alice.key, { name: 'Errors test' });
  const priv = await collection(alice.key, { name: 'Errors private', isPublic: false });
  const s = await scenario(alice.key, { collectionId: priv.id, prompt: 'Slugify "Secret Stuff" with slugify' });
  isShapeB(t, await svc.request('POST', '/api/scenarios', { body: { collectionId: c.id, prompt: 'Slugify "x y" please' } }), B(401, 'Unauthorized'), 'no key');
  isShapeB(
    t,
    await svc.request('POST', '/api/scenarios', { key: bob.key, body: { collectionId: c.id, prompt: 'Slugify "x y" please' } }),
    B(403, 'Forbidden'),
    'not owner',
  );
  isShapeB(
    t,
    await svc.request('POST', '/api/scenarios', { key: bob.key, body: { collectionId: priv.id, prompt: 'Slugify "x y" please' } }),
    B(404, 'Not Found'),
    'private collection',
  );
  for (const body of [
    { collectionId: c.id, prompt: 'too short' },
    { collectionId: c.id, prompt: 'x'.repeat(4001) },
    { collectionId: c.id, prompt: 'Slugify "x y" please', assertions: [{ type: 'outputContains' }] },
    { collectionId: c.id, prompt: 'Slugify "x y" please', assertions: [{ type: 'magic' }] },
    { collectionId: c.id, prompt: 'Slugify "x y" please', tags: 'a,b' },
    { prompt: 'Slugify "x y" please' },
  ]) {
    const res = await svc.request('POST', '/api/scenarios', { key: alice.key, body });
    isShapeB(t, res, B(400, 'Bad Request'), JSON.stringify(body).slice(0, 80));
  }
  isShapeB(
    t,
    await svc.request('POST', '/api/scenarios', { key: alice.key, rawBody: '{nope', headers: { 'content-type': 'application/json' } }),
    B(400, 'Bad Request'),
    'malformed JSON',
  );
  isShapeB(t, await svc.request('GET', `/api/scenarios/${s.id}`, { key: bob.key }), B(404, 'Not Found'), 'private scenario');
  isShapeB(t, await svc.request('GET', '/api/scenarios/not-an-id'), B(404, 'Not Found'), 'bad id');
  isShapeB(t, await svc.request('GET', `/api/collections/${priv.uid}/scenarios`), B(404, 'Not Found'), 'private list');
  isShapeB(t, await svc.request('GET', '/api/scenarios?sortBy=name'), B(400, 'Bad Request'), 'bad sortBy');
  isShapeB(t, await svc.request('GET', '/api/scenarios?limit=-1'), B(400, 'Bad Request'), 'bad limit');
  t.is((await svc.request('GET', `/api/scenarios/${s.id}`, { key: alice.key })).status, 200, 'the owner sees it');
  const badKey = await svc.request('GET', '/api/scenarios', { key: `tsk_${'x'.repeat(40)}` });
  t.is(badKey.status, 401);
  t.deepEqual(Object.keys(badKey.body.error), ['code', 'message'], 'an unknown key is shape A everywhere');
});

test('list (9): public only, collectionId, tags all-of, sortBy descending with nulls last, paging', async (t) => {
  const c = await collection(alice.key, { name: 'List test' });
  const priv = await collection(alice.key, { name: 'List private', isPublic: false });
  const a = await scenario(alice.key, { collectionId: c.id, prompt: 'Slugify "Alpha Beta" with slugify', tags: ['list-t', 'red', 'blue'] });
  const b = await scenario(alice.key, { collectionId: c.id, prompt: 'Slugify "Gamma Delta" with slugify', tags: ['list-t', 'red'] });
  await scenario(alice.key, { collectionId: priv.id, prompt: 'Slugify "Hidden One" with slugify', tags: ['list-t', 'red', 'blue'] });
  await svc.api.deps.db('scenarios').where({ id: b.id }).update({ quality_score: 0.9, total_runs: 3, last_run_at: new Date() });
  const res = await svc.request('GET', '/api/scenarios?tags=list-t,red');
  t.is(res.status, 200);
  t.false('success' in res.body, 'list 9 carries data and pagination only');
  t.deepEqual(
    res.body.data.map((s: any) => s.id),
    [b.id, a.id],
    'newest first, private left out',
  );
  t.deepEqual(
    (await svc.request('GET', '/api/scenarios?tags=list-t, red ,blue')).body.data.map((s: any) => s.id),
    [a.id],
    'all of the tags',
  );
  t.deepEqual(
    (await svc.request('GET', `/api/scenarios?collectionId=${c.uid}&sortBy=lastRunAt`)).body.data.map((s: any) => s.id),
    [b.id, a.id],
    'nulls last',
  );
  t.deepEqual(
    (await svc.request('GET', `/api/scenarios?collectionId=${c.id}&sortBy=qualityScore`)).body.data.map((s: any) => s.id),
    [b.id, a.id],
  );
  const page = await svc.request('GET', '/api/scenarios?tags=list-t&limit=1&offset=1');
  t.deepEqual(page.body.pagination, { limit: 1, offset: 1, hasMore: false });
  t.deepEqual((await svc.request('GET', '/api/scenarios?tags=list-t&limit=1')).body.pagination, { limit: 1, offset: 0, hasMore: true });
  const own = await svc.request('GET', `/api/collections/${priv.id}/scenarios`, { key: alice.key });
  t.is(own.body.success, true);
  t.is(own.body.data.scenarios.length, 1, "the owner lists the private collection's scenarios");
  t.like((await svc.request('GET', `/api/scenarios/${a.id}`)).body.data, { id: a.id, collection: { uid: c.uid } });
});

test('list (9): every sortBy pages through in the raw order (descending, nulls last, ties by id), public only', async (t) => {
  const c = await collection(alice.key, { name: 'Sort pages' });
  const priv = await collection(alice.key, { name: 'Sort pages private', isPublic: false });
  const ids: string[] = [];
  for (const word of ['One', 'Two', 'Three', 'Four', 'Five', 'Six', 'Seven']) {
    ids.push((await scenario(alice.key, { collectionId: c.id, prompt: `Slugify "${word} Sorted" with slugify`, tags: ['sort-pages'] })).id);
  }
  await scenario(alice.key, { collectionId: priv.id, prompt: 'Slugify "Private Sorted" with slugify', tags: ['sort-pages'] });
  const db = svc.api.deps.db;
  const day = (n: number) => new Date(Date.UTC(2026, 10, n));
  // Ties in every column and missing last runs, so that nulls last and the id tie-break decide.
  const rows = [
    [0.5, 0, null, day(1)],
    [0.9, 3, day(5), day(2)],
    [0.9, 3, day(5), day(2)],
    [0.1, 7, day(3), day(3)],
    [0.5, 0, null, day(3)],
    [0.7, 1, day(9), day(4)],
    [0.5, 2, null, day(4)],
  ] as const;
  for (const [i, [quality, runs, last, created]] of rows.entries()) {
    await db('scenarios').where({ id: ids[i] }).update({ quality_score: quality, total_runs: runs, last_run_at: last, created_at: created });
  }
  const byKey = { qualityScore: 0, totalRuns: 1, lastRunAt: 2, createdAt: 3 } as const;
  const value = (v: number | Date | null) => (v === null ? null : Number(v));
  for (const [sortBy, col] of Object.entries(byKey)) {
    const expected = ids
      .map((id, i) => ({ id, v: value(rows[i]![col]) }))
      .sort((a, b) => (a.v === b.v ? (a.id < b.id ? 1 : -1) : a.v === null ? 1 : b.v === null ? -1 : b.v - a.v))
      .map((x) => x.id);
    const listed: string[] = [];
    for (let offset = 0; ; offset += 2) {
      const res = await svc.request('GET', `/api/scenarios?tags=sort-pages&sortBy=${sortBy}&limit=2&offset=${offset}`);
      t.is(res.status, 200, res.text);
      listed.push(...res.body.data.map((s: any) => s.id));
      if (!res.body.pagination.hasMore) break;
    }
    t.deepEqual(listed, expected, sortBy);
  }
});

test('check-similarity (16): a paraphrase scores above 0.7, an unrelated prompt below 0.3; key required', async (t) => {
  const c = await collection(alice.key, { name: 'Similarity test' });
  const s = await scenario(alice.key, { collectionId: c.id, prompt: 'Convert the CSV text "name,age\\nAda,36" into JSON rows with csvToJson' });
  const slug = await scenario(alice.key, { collectionId: c.id, prompt: 'Slugify "Hello World" with slugify' });
  const check = (prompt: string, key = bob.key) => svc.request('POST', '/api/scenarios/check-similarity', { key, body: { prompt, collectionId: c.uid } });
  const para = await check('Turn the CSV text "name,age\\nAda,36" into JSON records using csvToJson');
  t.is(para.status, 200);
  t.true(para.body.data.maxSimilarity > 0.7, String(para.body.data.maxSimilarity));
  t.is(para.body.data.mostSimilar.id, s.id);
  t.true(para.body.data.similar.every((x: any) => x.similarity > 0.3));
  const sims = para.body.data.similar.map((x: any) => x.similarity);
  t.deepEqual(
    sims,
    [...sims].sort((x: number, y: number) => y - x),
    'similar sorted descending',
  );
  const unrelated = await check('What is the weather forecast for Paris tomorrow?');
  t.true(unrelated.body.data.maxSimilarity < 0.3, String(unrelated.body.data.maxSimilarity));
  t.deepEqual(unrelated.body.data.similar, []);
  isShapeB(
    t,
    await svc.request('POST', '/api/scenarios/check-similarity', { body: { prompt: 'Slugify "a b" now', collectionId: c.id } }),
    B(401, 'Unauthorized'),
    'no key',
  );
  // Any non-empty text can be compared (the contract bounds a scenario's prompt, not the text checked against them).
  const short = await check('slugify');
  t.is(short.status, 200);
  t.is(short.body.data.mostSimilar?.id, slug.id, 'a one-word text finds the scenario about it');
  isShapeB(t, await check('   '), B(400, 'Bad Request'), 'empty prompt');
});

test('generate (13): count scenarios with similarity; too-similar ones are regenerated then dropped unless skipped', async (t) => {
  const c = await collection(alice.key, { name: 'Generate test' }, ['slugify', 'textStatistics', 'convertCase']);
  const res = await svc.request('POST', `/api/collections/${c.uid}/scenarios/generate`, { key: alice.key, body: {} });
  t.is(res.status, 201);
  t.is(res.body.data.scenarios.length, 3, 'count defaults to 3');
  for (const g of res.body.data.scenarios) {
    t.true(g.scenario.prompt.length >= 10);
    t.is(g.scenario.collectionId, c.id);
    t.true(g.similarity.maxSimilarity <= 0.7);
  }
  isShapeB(t, await svc.request('POST', `/api/collections/${c.uid}/scenarios/generate`, { key: bob.key, body: {} }), B(403, 'Forbidden'), 'not owner');
  // Visibility and ownership come before the body: a stranger's malformed request is still a 403 / 404.
  isShapeB(
    t,
    await svc.request('POST', `/api/collections/${c.uid}/scenarios/generate`, { key: bob.key, body: { count: 0 } }),
    B(403, 'Forbidden'),
    'bad body, not owner',
  );
  const s = (await svc.request('POST', '/api/scenarios', { key: alice.key, body: { collectionId: c.id, prompt: 'Slugify a title please' } })).body.data;
  isShapeB(t, await svc.request('PATCH', `/api/scenarios/${s.id}`, { key: bob.key, body: { prompt: 1 } }), B(403, 'Forbidden'), 'patch: bad body, not owner');
  isShapeB(
    t,
    await svc.request('PATCH', '/api/scenarios/00000000-0000-0000-0000-000000000000', { key: bob.key, body: { prompt: 1 } }),
    B(404, 'Not Found'),
    'patch: bad body, no such scenario',
  );
  isShapeB(
    t,
    await svc.request('PATCH', `/api/scenarios/${s.id}`, { key: alice.key, body: { prompt: 1 } }),
    B(400, 'Bad Request'),
    'patch: the owner learns of the body',
  );
  isShapeB(
    t,
    await svc.request('POST', `/api/collections/${c.uid}/scenarios/generate`, { key: alice.key, body: { count: 11 } }),
    B(400, 'Bad Request'),
    'count 11',
  );

  // One tool leaves little room: with the check, near-duplicates are refused and in the end dropped.
  const narrow = await collection(alice.key, { name: 'Generate narrow' }, ['slugify']);
  const checked = await svc.request('POST', `/api/collections/${narrow.uid}/scenarios/generate`, { key: alice.key, body: { count: 10 } });
  t.is(checked.status, 201);
  const kept = checked.body.data.scenarios;
  t.true(kept.length < 10, `kept ${kept.length}`);
  t.true(checked.body.data.rejectedAsTooSimilar > 0);
  t.is(checked.body.data.dropped, 10 - kept.length);
  t.true(checked.body.data.rounds <= 4, 'at most 3 regenerations');
  for (const g of kept) t.true(g.similarity.maxSimilarity <= 0.7, String(g.similarity.maxSimilarity));
  const listed = await svc.request('GET', `/api/collections/${narrow.uid}/scenarios?limit=50`);
  t.is(listed.body.data.scenarios.length, kept.length, 'the kept ones are stored, the dropped ones are not');
  const twin = await collection(alice.key, { name: 'Generate narrow twin' }, ['slugify']);
  const skipped = await svc.request('POST', `/api/collections/${twin.uid}/scenarios/generate`, {
    key: alice.key,
    body: { count: 10, skipSimilarityCheck: true },
  });
  t.is(skipped.body.data.scenarios.length, 10, 'skipping the check keeps all');
  t.is(skipped.body.data.rejectedAsTooSimilar, 0);
  t.true(skipped.body.data.scenarios.some((g: any) => g.similarity.maxSimilarity > 0.7));
});
