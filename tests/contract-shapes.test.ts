/**
 * Contract defects of issue 12, each checked against SPEC.md field by field: `package.env` as names, paging limits
 * clamped on every paged route, long search queries, the scenario's embedded collection, a collection's scenario list,
 * check-similarity items, run history items, and tool output returned exactly as produced.
 */
import test, { type ExecutionContext } from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createApp } from '../api/app.js';
import { EXAMPLES_DIR, startService, type Service, type TestResponse } from './helpers/service.js';

type User = { key: string; id: string; username: string };
let svc: Service;
let alice: User;
let bob: User;
let imported: TestResponse;
let collection: { id: string; uid: string; name: string };
let scenarioId: string;
let toolId: string;

const SIGNER = '@toolshed-examples/webhook-signer';
const PASSING = 'Slugify "Hello World" with slugify';

test.before(async () => {
  svc = await startService({ sandbox: 'process' });
  for (const dir of ['text-tools', 'data-tools']) {
    const res = await svc.importPackage(`path:${path.join(EXAMPLES_DIR, dir)}`);
    if (res.status !== 201) throw new Error(res.text);
  }
  imported = await svc.importPackage(`path:${path.join(EXAMPLES_DIR, 'webhook-signer')}`);
  if (imported.status !== 201) throw new Error(imported.text);
  await svc.api.searchSync.flush();
  alice = await svc.createUser({ tier: 'pro' });
  bob = await svc.createUser();
  const c = await svc.request('POST', '/api/collections', { key: alice.key, body: { name: 'Contract shapes' } });
  collection = c.body.data;
  const slugify = await svc.request('GET', '/api/tools/@toolshed-examples/text-tools/slugify');
  toolId = slugify.body.data.id;
  await svc.request('POST', `/api/collections/${collection.id}/tools`, { key: alice.key, body: { toolId } });
  const s = await svc.request('POST', '/api/scenarios', {
    key: alice.key,
    body: { collectionId: collection.id, prompt: PASSING, tags: ['contract'], assertions: [{ type: 'toolCalled', tool: 'slugify' }] },
  });
  if (s.status !== 201) throw new Error(s.text);
  scenarioId = s.body.data.id;
});
test.after.always(() => svc?.close());

function signerEnv(t: ExecutionContext, items: any[], where: string) {
  const signer = items.filter((x) => x.package.npmPackageName === SIGNER);
  t.true(signer.length > 0, `${where}: the signer is listed`);
  for (const x of signer) t.deepEqual(x.package.env, ['WEBHOOK_SECRET'], where);
  for (const x of items)
    t.true(
      x.package.env.every((e: unknown) => typeof e === 'string'),
      `${where}: env is an array of strings`,
    );
}

test('package.env is the names of the required variables: list, search, trending, import; the detail adds envVars', async (t) => {
  signerEnv(t, imported.body.data.tools, 'import');
  signerEnv(t, (await svc.request('GET', '/api/tools?q=webhook')).body.data, 'list');
  signerEnv(t, (await svc.request('GET', '/api/tools/search?q=sign%20webhook%20payload')).body.results.tools, 'search');
  const sign = imported.body.data.tools.find((x: any) => x.name === 'signPayload');
  await svc.request('POST', `/api/tools/${sign.id}/rate`, { key: bob.key, body: { rating: 5 } });
  signerEnv(t, (await svc.request('GET', '/api/tools/trending?period=day')).body.data, 'trending');
  const detail = (await svc.request('GET', `/api/tools/${sign.id}`)).body.data;
  t.deepEqual(detail.package.env, ['WEBHOOK_SECRET']);
  t.like(detail.package.envVars[0], { name: 'WEBHOOK_SECRET', required: true });
  t.is(typeof detail.package.envVars[0].description, 'string');
});

const PAGED: { path: string; max: number; shape: 'A' | 'B'; pagination: boolean }[] = [
  { path: '/api/tools', max: 100, shape: 'A', pagination: true },
  { path: '/api/tools/search?q=text', max: 100, shape: 'A', pagination: false },
  { path: '/api/tools/trending?period=all', max: 50, shape: 'A', pagination: false },
  { path: '/api/tools/@toolshed-examples/text-tools/slugify/reviews', max: 100, shape: 'A', pagination: true },
  { path: '/api/collections', max: 50, shape: 'A', pagination: true },
  { path: '/api/scenarios', max: 50, shape: 'B', pagination: true },
  { path: '/api/scenarios/featured', max: 20, shape: 'B', pagination: false },
  { path: '/api/collections/{c}/scenarios', max: 50, shape: 'B', pagination: true },
  { path: '/api/scenarios/{s}/runs', max: 50, shape: 'B', pagination: true },
];

test('every paged route: a limit above the maximum is clamped; a non-integer or negative limit or offset is 400', async (t) => {
  for (const route of PAGED) {
    const p = route.path.replace('{c}', collection.uid).replace('{s}', scenarioId);
    const sep = p.includes('?') ? '&' : '?';
    const clamped = await svc.request('GET', `${p}${sep}limit=500`);
    t.is(clamped.status, 200, `${p} limit=500: ${clamped.text.slice(0, 200)}`);
    if (route.pagination) t.is(clamped.body.pagination.limit, route.max, `${p} clamped to ${route.max}`);
    const bad = ['limit=abc', 'limit=-1', 'limit=2.5', 'limit=1e3', ...(route.pagination ? ['offset=-5', 'offset=x'] : [])];
    for (const q of bad) {
      const res = await svc.request('GET', `${p}${sep}${q}`);
      t.is(res.status, 400, `${p} ${q}`);
      if (route.shape === 'A') t.is(res.body.error.code, 'VALIDATION_ERROR', `${p} ${q}`);
      else t.like(res.body, { success: false, error: 'Bad Request' }, `${p} ${q}`);
    }
  }
});

test('search: limit=500 is clamped to 100 (was a 400); limit=0 is below its minimum of 1', async (t) => {
  const res = await svc.request('GET', '/api/tools/search?q=text&limit=500');
  t.is(res.status, 200);
  t.true(res.body.results.tools.length <= 100);
  t.is((await svc.request('GET', '/api/tools/search?q=text&limit=0')).status, 400);
});

test('q of 2,000 characters is accepted by search and the list (was a 400 past 200)', async (t) => {
  const task = 'Turn this title into a URL slug for my blog post about hello world and other things. ';
  const q = encodeURIComponent(task.repeat(Math.ceil(2000 / task.length)).slice(0, 2000));
  const search = await svc.request('GET', `/api/tools/search?q=${q}`);
  t.is(search.status, 200, search.text.slice(0, 200));
  t.true(search.body.results.tools.some((x: any) => x.name === 'slugify'));
  t.is((await svc.request('GET', `/api/tools?q=${q}`)).status, 200);
  t.is((await svc.request('GET', `/api/collections?q=${q}`)).status, 200);
  t.is((await svc.request('GET', `/api/tools/search?q=${'x'.repeat(4001)}`)).status, 400, 'there is still a bound');
});

function embedded(t: ExecutionContext, s: any, where: string) {
  t.like(s.collection, { id: collection.id, name: collection.name, slug: collection.uid, username: alice.username }, where);
}

test('scenarios embed collection { id, name, slug, username }: list, detail, create, featured', async (t) => {
  const created = await svc.request('POST', '/api/scenarios', {
    key: alice.key,
    body: { collectionId: collection.uid, prompt: 'Slugify "Embedded Collection" with slugify' },
  });
  t.is(created.status, 201);
  embedded(t, created.body.data, 'create');
  embedded(t, (await svc.request('GET', `/api/scenarios/${scenarioId}`)).body.data, 'detail');
  const list = (await svc.request('GET', `/api/scenarios?collectionId=${collection.id}`)).body.data;
  t.true(list.length >= 2);
  for (const s of list) embedded(t, s, 'list');
  const featured = (await svc.request('GET', '/api/scenarios/featured')).body.data;
  t.true(featured.length >= 1);
  for (const s of featured.filter((x: any) => x.collectionId === collection.id)) embedded(t, s, 'featured');
});

test("a collection's scenarios (11): data.scenarios with { id, name, prompt, qualityScore, totalRuns, lastRunStatus, tags }", async (t) => {
  const res = await svc.request('GET', `/api/collections/${collection.uid}/scenarios`);
  t.is(res.status, 200);
  t.is(res.body.success, true);
  t.false(Array.isArray(res.body.data));
  const item = res.body.data.scenarios.find((s: any) => s.id === scenarioId);
  t.deepEqual(Object.keys(item).sort(), ['id', 'lastRunStatus', 'name', 'prompt', 'qualityScore', 'tags', 'totalRuns']);
  t.like(item, { prompt: PASSING, totalRuns: 0, lastRunStatus: null, tags: ['contract'] });
  t.like(res.body.pagination, { offset: 0, hasMore: false });
});

test('check-similarity (16): similar items are { id, name, prompt, similarity }', async (t) => {
  const res = await svc.request('POST', '/api/scenarios/check-similarity', {
    key: bob.key,
    body: { prompt: 'Slugify "Hello World" using slugify', collectionId: collection.id },
  });
  t.is(res.status, 200);
  const item = res.body.data.similar.find((s: any) => s.id === scenarioId);
  t.truthy(item, res.text);
  t.deepEqual(Object.keys(item).sort(), ['id', 'name', 'prompt', 'similarity']);
  t.is(item.prompt, PASSING);
});

test('run history (15): items name the run `id` (not runId) and carry assertions', async (t) => {
  const run = await svc.request('POST', `/api/scenarios/${scenarioId}/run`, { key: alice.key });
  t.is(run.status, 200, run.text);
  const res = await svc.request('GET', `/api/scenarios/${scenarioId}/runs`);
  t.is(res.status, 200);
  t.false('success' in res.body);
  const [item] = res.body.data;
  t.is(item.id, run.body.data.runId);
  t.false('runId' in item);
  t.true(Array.isArray(item.assertions));
  t.like(item.assertions[0], { assertion: { type: 'toolCalled', tool: 'slugify' }, passed: true });
  t.like(item, { status: 'completed', success: true, evaluator: { verdict: 'pass' } });
});

test("an execution's result comes back exactly as the tool produced it (key order kept)", async (t) => {
  const res = await svc.request('POST', '/api/tools/execute/@toolshed-examples/data-tools/csvToJson', { body: { params: { csv: 'zeta,a,mm,b\n1,2,3,4\n' } } });
  t.is(res.status, 200, res.text);
  // jsonb would answer {"a","b","mm","zeta"} (shorter keys first); json keeps the tool's own order.
  t.true(res.text.includes('{"zeta":"1","a":"2","mm":"3","b":"4"}'), res.text);
  const again = await svc.request('GET', `/api/executions/${res.body.executionId}`);
  t.true(again.text.includes('{"zeta":"1","a":"2","mm":"3","b":"4"}'), again.text);
});

test('status codes: creating POSTs 201, other POSTs 200, PATCH 200 with the resource, DELETE 200 with message', async (t) => {
  const tool = (await svc.request('GET', '/api/tools/@toolshed-examples/text-tools/convertCase')).body.data;
  const c = await svc.request('POST', '/api/collections', { key: bob.key, body: { name: 'Status codes' } });
  t.is(c.status, 201);
  const add = await svc.request('POST', `/api/collections/${c.body.data.uid}/tools`, { key: bob.key, body: { toolId: tool.id } });
  t.is(add.status, 201);
  t.deepEqual(add.body.data, { collectionId: c.body.data.id, toolId: tool.id, toolCount: 1 });
  t.is((await svc.request('POST', `/api/tools/${tool.id}/reviews`, { key: bob.key, body: { rating: 4, body: 'fine' } })).status, 201);
  t.is((await svc.request('POST', '/api/keys', { key: bob.key, body: { name: 'second' } })).status, 201);
  const s = await svc.request('POST', '/api/scenarios', { key: bob.key, body: { collectionId: c.body.data.id, prompt: 'Convert "hello world" to camelCase' } });
  t.is(s.status, 201);
  t.is((await svc.request('POST', `/api/tools/${tool.id}/rate`, { key: bob.key, body: { rating: 3 } })).status, 200);
  const like = await svc.request('POST', `/api/collections/${c.body.data.uid}/like`, { key: alice.key });
  t.is(like.status, 200);
  t.deepEqual(like.body.data, { liked: true, likeCount: 1 });
  const patched = await svc.request('PATCH', `/api/collections/${c.body.data.uid}`, { key: bob.key, body: { description: 'changed' } });
  t.like(patched, { status: 200, body: { success: true, data: { id: c.body.data.id, description: 'changed' } } });
  const sp = await svc.request('PATCH', `/api/scenarios/${s.body.data.id}`, { key: bob.key, body: { tags: ['x'] } });
  t.like(sp, { status: 200, body: { success: true, data: { id: s.body.data.id, tags: ['x'] } } });
  for (const p of [`/api/scenarios/${s.body.data.id}`, `/api/collections/${c.body.data.uid}/tools/${tool.id}`, `/api/collections/${c.body.data.uid}`]) {
    const del = await svc.request('DELETE', p, { key: bob.key });
    t.is(del.status, 200, p);
    t.deepEqual(Object.keys(del.body).sort(), ['message', 'success'], p);
  }
});

test('GET /health with search down: 200, success true (the envelope), status degraded', async (t) => {
  const search = Object.create(svc.api.deps.search);
  search.status = async () => ({ ok: false, engine: 'embedded', documents: 0, detail: 'down for the test' });
  const app = createApp({ ...svc.api.deps, search });
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/health`);
    const body = await res.json();
    t.is(res.status, 200);
    t.like(body, { success: true, data: { status: 'degraded', database: { ok: true }, search: { ok: false } } });
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
