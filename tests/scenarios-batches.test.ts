/**
 * Batch evaluation (run-all, progress, events) and featured scenarios (17), with the real worker and sandbox.
 */
import test from 'ava';
import path from 'node:path';
import { EXAMPLES_DIR, startService, type Service } from './helpers/service.js';
import { readSse } from './helpers/sse.js';

type User = { key: string; id: string; username: string };
let svc: Service;
let pro: User;
let toolIds: string[];

const PROMPTS = [
  'Slugify "Hello World" with slugify',
  'Count the words in "the quick brown fox jumps" with textStatistics',
  'Convert "user account id" to camel case with convertCase',
];

test.before(async () => {
  svc = await startService({ sandbox: 'process', env: { SCENARIO_DAILY_QUOTA: '3' } });
  const res = await svc.importPackage(`path:${path.join(EXAMPLES_DIR, 'text-tools')}`);
  if (res.status !== 201) throw new Error(res.text);
  toolIds = res.body.data.tools.map((t: { id: string }) => t.id);
  pro = await svc.createUser({ tier: 'pro' });
});
test.after.always(() => svc?.close());

async function collectionWith(key: string, name: string, prompts: string[], opts: { isPublic?: boolean; failing?: number } = {}) {
  const c = (await svc.request('POST', '/api/collections', { key, body: { name, isPublic: opts.isPublic ?? true } })).body.data;
  for (const toolId of toolIds) await svc.request('POST', `/api/collections/${c.id}/tools`, { key, body: { toolId } });
  const ids: string[] = [];
  for (const [i, prompt] of prompts.entries()) {
    const assertions = i < (opts.failing ?? 0) ? [{ type: 'outputContains', text: 'never in any output' }] : undefined;
    const res = await svc.request('POST', '/api/scenarios', { key, body: { collectionId: c.id, prompt, assertions } });
    if (res.status !== 201) throw new Error(res.text);
    ids.push(res.body.data.id);
  }
  return { ...c, scenarioIds: ids } as { id: string; uid: string; scenarioIds: string[] };
}

test('run-all: 202 with batchId and runIds; events reach done; progress counts every verdict', async (t) => {
  const c = await collectionWith(pro.key, 'Batch all', [...PROMPTS, PROMPTS[0]], { failing: 1 });
  const res = await svc.request('POST', `/api/collections/${c.uid}/scenarios/run-all`, { key: pro.key });
  t.is(res.status, 202);
  const { batchId, runIds, skipped } = res.body.data;
  t.is(runIds.length, 4);
  t.is(skipped, 0);
  const stream = await readSse(`${svc.url}/api/scenario-batches/${batchId}/events`);
  t.deepEqual(
    stream.events.map((e) => e.event),
    ['run.completed', 'run.completed', 'run.completed', 'run.completed', 'done'],
  );
  t.deepEqual(
    stream.events.map((e) => e.id),
    [1, 2, 3, 4, 5],
  );
  t.deepEqual(
    stream.events.slice(0, 4).map((e) => e.data.finished),
    [1, 2, 3, 4],
  );
  t.deepEqual(
    stream.events
      .slice(0, 4)
      .map((e) => e.data.runId)
      .sort(),
    [...runIds].sort(),
  );
  t.like(stream.events[4].data, { batchId, total: 4, completed: 4, failed: 0, passed: 3, failedVerdicts: 1, queued: 0, running: 0, done: true });
  const progress = await svc.request('GET', `/api/scenario-batches/${batchId}`);
  t.like(progress.body.data, { batchId, collectionId: c.id, total: 4, skipped: 0, completed: 4, passed: 3, failedVerdicts: 1, done: true });
  t.truthy(Date.parse(progress.body.data.completedAt));
  const replay = await readSse(`${svc.url}/api/scenario-batches/${batchId}/events`, { headers: { 'last-event-id': '3' } });
  t.deepEqual(
    replay.events.map((e) => e.id),
    [4, 5],
    'resumes after Last-Event-ID',
  );
  const scenario = await svc.request('GET', `/api/scenarios/${c.scenarioIds[1]}`);
  t.is(scenario.body.data.totalRuns, 1, 'batch runs count in the statistics');
});

test('run-all takes the quota per run: what does not fit is skipped; an empty quota is a 429', async (t) => {
  const free = await svc.createUser();
  const c = await collectionWith(free.key, 'Batch quota', [...PROMPTS, 'Slugify "Second One" with slugify', 'Slugify "Third One" with slugify']);
  const res = await svc.request('POST', `/api/collections/${c.id}/scenarios/run-all`, { key: free.key });
  t.is(res.status, 202);
  t.is(res.body.data.runIds.length, 3);
  t.is(res.body.data.skipped, 2);
  t.is(res.body.data.quotaRemaining, 0);
  const again = await svc.request('POST', `/api/collections/${c.id}/scenarios/run-all`, { key: free.key });
  t.is(again.status, 429);
  t.like(again.body, { success: false, error: 'Rate Limit Exceeded', quotaRemaining: 0 });
  const stream = await readSse(`${svc.url}/api/scenario-batches/${res.body.data.batchId}/events`);
  t.like(stream.events.at(-1)!.data, { total: 3, skipped: 2, completed: 3, done: true });
});

test('run-all and batch errors are shape B', async (t) => {
  const other = await svc.createUser();
  const priv = await collectionWith(pro.key, 'Batch private', [PROMPTS[0]], { isPublic: false });
  const empty = await collectionWith(pro.key, 'Batch empty', []);
  const check = (res: { status: number; body: any }, status: number, word: string) => {
    t.is(res.status, status);
    t.like(res.body, { success: false, error: word });
  };
  check(await svc.request('POST', `/api/collections/${priv.id}/scenarios/run-all`), 401, 'Unauthorized');
  check(await svc.request('POST', `/api/collections/${priv.id}/scenarios/run-all`, { key: other.key }), 404, 'Not Found');
  check(await svc.request('POST', `/api/collections/${empty.id}/scenarios/run-all`, { key: pro.key }), 400, 'Bad Request');
  check(await svc.request('GET', '/api/scenario-batches/00000000-0000-4000-8000-000000000000'), 404, 'Not Found');
  const batch = await svc.request('POST', `/api/collections/${priv.id}/scenarios/run-all`, { key: pro.key });
  check(await svc.request('GET', `/api/scenario-batches/${batch.body.data.batchId}`, { key: other.key }), 404, 'Not Found');
  await readSse(`${svc.url}/api/scenario-batches/${batch.body.data.batchId}/events`, { headers: { authorization: `Bearer ${pro.key}` } });
});

test.serial('featured (17): the best of each public collection first, then recent passes; never private; limit', async (t) => {
  const a = await collectionWith(pro.key, 'Featured A', [PROMPTS[0], PROMPTS[1]]);
  const b = await collectionWith(pro.key, 'Featured B', [PROMPTS[2], PROMPTS[0]], { failing: 1 });
  const c3 = await collectionWith(pro.key, 'Featured C', [PROMPTS[1]]);
  const hidden = await collectionWith(pro.key, 'Featured hidden', [PROMPTS[0]], { isPublic: false });
  for (const c of [a, b, c3, hidden]) {
    const res = await svc.request('POST', `/api/collections/${c.id}/scenarios/run-all`, { key: pro.key });
    await readSse(`${svc.url}/api/scenario-batches/${res.body.data.batchId}/events`, { headers: { authorization: `Bearer ${pro.key}` } });
  }
  const res = await svc.request('GET', '/api/scenarios/featured?limit=6');
  t.is(res.status, 200);
  const items = res.body.data;
  t.true(items.length <= 6 && items.length > 0);
  t.false(
    items.some((s: any) => s.collectionId === hidden.id),
    'private collections never appear',
  );
  t.is(new Set(items.map((s: any) => s.id)).size, items.length, 'no duplicates');
  const firsts = items.filter((s: any) => s.featuredBecause === 'bestInCollection');
  t.is(firsts.length, 3, 'half the slots: one best per collection');
  t.is(new Set(firsts.map((s: any) => s.collectionId)).size, firsts.length);
  const scores = firsts.map((s: any) => s.qualityScore);
  t.deepEqual(
    scores,
    [...scores].sort((x: number, y: number) => y - x),
  );
  const passes = items.filter((s: any) => s.featuredBecause === 'recentPass');
  t.true(passes.length > 0);
  t.true(passes.every((s: any) => s.lastRunStatus === 'pass'));
  const times = passes.map((s: any) => Date.parse(s.lastRunAt));
  t.deepEqual(
    times,
    [...times].sort((x: number, y: number) => y - x),
  );
  t.is((await svc.request('GET', '/api/scenarios/featured')).body.data.length <= 10, true);
  t.is((await svc.request('GET', '/api/scenarios/featured?limit=100')).status, 200, 'a limit above 20 is clamped');
  t.like(await svc.request('GET', '/api/scenarios/featured?limit=x'), { status: 400, body: { error: 'Bad Request' } });
});
