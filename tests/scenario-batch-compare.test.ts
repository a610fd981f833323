/**
 * A collection's batch history and the comparison of two batches (issue 25 item 4), with the real worker and sandbox
 * on the offline provider: a scenario is made to fail deterministically by an `outputContains` assertion no output
 * holds, and to pass again by dropping it.
 */
import test from 'ava';
import path from 'node:path';
import { EXAMPLES_DIR, startService, type Service } from './helpers/service.js';
import { readSse } from './helpers/sse.js';

let svc: Service;
let pro: { key: string; id: string };
let toolIds: string[];

const FAILING = [{ type: 'outputContains', text: 'never in any output' }];

test.before(async () => {
  svc = await startService({ sandbox: 'process' });
  const res = await svc.importPackage(`path:${path.join(EXAMPLES_DIR, 'text-tools')}`);
  if (res.status !== 201) throw new Error(res.text);
  toolIds = res.body.data.tools.map((t: { id: string }) => t.id);
  pro = await svc.createUser({ tier: 'pro' });
});
test.after.always(() => svc?.close());

async function scenario(key: string, collectionId: string, prompt: string, assertions?: unknown) {
  const res = await svc.request('POST', '/api/scenarios', { key, body: { collectionId, prompt, assertions } });
  if (res.status !== 201) throw new Error(res.text);
  return res.body.data.id as string;
}

/** Runs every scenario of the collection and waits for the batch to complete. */
async function batch(key: string, collectionId: string): Promise<string> {
  const res = await svc.request('POST', `/api/collections/${collectionId}/scenarios/run-all`, { key });
  if (res.status !== 202) throw new Error(res.text);
  const stream = await readSse(`${svc.url}/api/scenario-batches/${res.body.data.batchId}/events`, { headers: { authorization: `Bearer ${key}` } });
  if (stream.events.at(-1)?.event !== 'done') throw new Error(stream.text);
  return res.body.data.batchId;
}

test('compare: regression, improvement, unchanged and added per scenario, with totals; reversed, added is removed; threshold', async (t) => {
  const c = await svc.createCollection(pro.key, { name: 'Compare', isPublic: true }, toolIds);
  const steady = await scenario(pro.key, c.id, 'Slugify "Hello World" with slugify');
  const breaks = await scenario(pro.key, c.id, 'Count the words in "the quick brown fox jumps" with textStatistics');
  const mends = await scenario(pro.key, c.id, 'Convert "user account id" to camel case with convertCase', FAILING);
  const base = await batch(pro.key, c.id);

  t.is((await svc.request('PATCH', `/api/scenarios/${breaks}`, { key: pro.key, body: { assertions: FAILING } })).status, 200);
  t.is((await svc.request('PATCH', `/api/scenarios/${mends}`, { key: pro.key, body: { assertions: null } })).status, 200);
  const added = await scenario(pro.key, c.id, 'Slugify "Second Title" with slugify');
  const head = await batch(pro.key, c.id);

  const res = await svc.request('GET', `/api/scenario-batches/${base}/compare/${head}`);
  t.is(res.status, 200, res.text);
  const d = res.body.data;
  t.like(d, { base: { id: base }, head: { id: head }, threshold: 0 });
  t.is(d.base.passRate, 2 / 3);
  t.is(d.head.passRate, 3 / 4);
  const byId = Object.fromEntries(d.scenarios.map((s: any) => [s.scenarioId, s]));
  t.like(byId[steady], { basePassRate: 1, headPassRate: 1, change: 'unchanged', name: 'Slugify "Hello World" with slugify' });
  t.like(byId[breaks], { basePassRate: 1, headPassRate: 0, change: 'regression' });
  t.like(byId[mends], { basePassRate: 0, headPassRate: 1, change: 'improvement' });
  t.like(byId[added], { basePassRate: null, headPassRate: 1, change: 'added' });
  t.is(d.scenarios[0].scenarioId, breaks, 'regressions first');
  t.deepEqual(d.totals, { regressions: 1, improvements: 1, unchanged: 1, flaky: 0, added: 1, removed: 0 });

  const reversed = (await svc.request('GET', `/api/scenario-batches/${head}/compare/${base}`)).body.data;
  t.deepEqual(reversed.totals, { regressions: 1, improvements: 1, unchanged: 1, flaky: 0, added: 0, removed: 1 });
  t.like(
    reversed.scenarios.find((s: any) => s.scenarioId === added),
    { change: 'removed', basePassRate: 1, headPassRate: null },
  );
  t.like(
    reversed.scenarios.find((s: any) => s.scenarioId === mends),
    { change: 'regression' },
  );

  const lenient = (await svc.request('GET', `/api/scenario-batches/${base}/compare/${head}?threshold=1`)).body.data;
  t.is(lenient.threshold, 1);
  t.deepEqual(lenient.totals, { regressions: 0, improvements: 0, unchanged: 3, flaky: 0, added: 1, removed: 0 }, 'a fall of 1 is not more than 1');

  // The history: newest first, pass rate over time, paged.
  const history = await svc.request('GET', `/api/collections/${c.uid}/scenario-batches`);
  t.is(history.status, 200, history.text);
  t.deepEqual(
    history.body.data.map((b: any) => [b.id, b.total, b.passed, b.failed, b.passRate]),
    [
      [head, 4, 3, 1, 3 / 4],
      [base, 3, 2, 1, 2 / 3],
    ],
  );
  t.truthy(Date.parse(history.body.data[0].completedAt));
  t.deepEqual(history.body.pagination, { limit: 20, offset: 0, hasMore: false });
  const first = await svc.request('GET', `/api/collections/${c.id}/scenario-batches?limit=1`);
  t.deepEqual(
    first.body.data.map((b: any) => b.id),
    [head],
  );
  t.deepEqual(first.body.pagination, { limit: 1, offset: 0, hasMore: true });
  const second = await svc.request('GET', `/api/collections/${c.id}/scenario-batches?limit=1&offset=1`);
  t.deepEqual(
    second.body.data.map((b: any) => b.id),
    [base],
  );
  t.false(second.body.pagination.hasMore);
  t.is((await svc.request('GET', `/api/collections/${c.id}/scenario-batches?limit=500`)).body.pagination.limit, 100, 'limit clamped');
});

test('compare and history errors are shape B: unknown or invisible 404, other collection 400, bad threshold or paging 400', async (t) => {
  const other = await svc.createUser();
  const priv = await svc.createCollection(pro.key, { name: 'Compare private', isPublic: false }, toolIds);
  await scenario(pro.key, priv.id, 'Slugify "Private Thing" with slugify');
  const pub = await svc.createCollection(pro.key, { name: 'Compare public', isPublic: true }, toolIds);
  await scenario(pro.key, pub.id, 'Slugify "Public Thing" with slugify');
  const [p1, p2, q1] = [await batch(pro.key, priv.id), await batch(pro.key, priv.id), await batch(pro.key, pub.id)];
  const check = (res: { status: number; body: any; text: string }, status: number, word: string, says?: RegExp) => {
    t.is(res.status, status, res.text);
    t.like(res.body, { success: false, error: word });
    if (says) t.regex(res.body.message, says);
  };
  const missing = '00000000-0000-4000-8000-000000000000';
  check(await svc.request('GET', `/api/scenario-batches/${missing}/compare/${q1}`), 404, 'Not Found');
  check(await svc.request('GET', `/api/scenario-batches/${q1}/compare/${missing}`), 404, 'Not Found');
  check(await svc.request('GET', `/api/scenario-batches/not-a-uuid/compare/${q1}`), 404, 'Not Found');
  check(await svc.request('GET', `/api/scenario-batches/${p1}/compare/${p2}`, { key: other.key }), 404, 'Not Found');
  check(await svc.request('GET', `/api/scenario-batches/${p1}/compare/${p2}`), 404, 'Not Found');
  t.is((await svc.request('GET', `/api/scenario-batches/${p1}/compare/${p2}`, { key: pro.key })).status, 200, 'the owner sees it');
  check(await svc.request('GET', `/api/scenario-batches/${p1}/compare/${q1}`, { key: pro.key }), 400, 'Bad Request', /different collections/);
  for (const bad of ['-0.1', '1.5', 'abc', '']) {
    check(await svc.request('GET', `/api/scenario-batches/${p1}/compare/${p2}?threshold=${bad}`, { key: pro.key }), 400, 'Bad Request', /threshold/);
  }
  check(await svc.request('GET', `/api/collections/${priv.id}/scenario-batches`, { key: other.key }), 404, 'Not Found');
  check(await svc.request('GET', `/api/collections/${priv.id}/scenario-batches`), 404, 'Not Found');
  check(await svc.request('GET', `/api/collections/${missing}/scenario-batches`), 404, 'Not Found');
  check(await svc.request('GET', `/api/collections/${pub.id}/scenario-batches?limit=-1`), 400, 'Bad Request');
  check(await svc.request('GET', `/api/collections/${pub.id}/scenario-batches?offset=x`), 400, 'Bad Request');
  const own = await svc.request('GET', `/api/collections/${priv.uid}/scenario-batches`, { key: pro.key });
  t.deepEqual(
    own.body.data.map((b: any) => b.id),
    [p2, p1],
  );
});

test('compare refuses a batch still running with a 409 that says so', async (t) => {
  // No worker: the batches stay queued, deterministically.
  const idle = await startService({ worker: false });
  t.teardown(() => idle.close());
  const user = await idle.createUser({ tier: 'pro' });
  const c = await idle.createCollection(user.key, { name: 'Running', isPublic: true });
  const created = await idle.request('POST', '/api/scenarios', { key: user.key, body: { collectionId: c.id, prompt: 'Slugify "Queued Thing" with slugify' } });
  t.is(created.status, 201, created.text);
  const a = (await idle.request('POST', `/api/collections/${c.id}/scenarios/run-all`, { key: user.key })).body.data.batchId;
  const b = (await idle.request('POST', `/api/collections/${c.id}/scenarios/run-all`, { key: user.key })).body.data.batchId;
  const res = await idle.request('GET', `/api/scenario-batches/${a}/compare/${b}`);
  t.is(res.status, 409, res.text);
  t.like(res.body, { success: false, error: 'Conflict' });
  t.regex(res.body.message, new RegExp(`${a} is still running`));
  const history = await idle.request('GET', `/api/collections/${c.id}/scenario-batches`);
  t.deepEqual(
    history.body.data.map((x: any) => [x.id, x.completedAt, x.total, x.passed, x.failed, x.passRate]),
    [
      [b, null, 1, 0, 0, null],
      [a, null, 1, 0, 0, null],
    ],
    'running batches are listed, with no pass rate yet',
  );
});

test("history of a long-lived collection: each page counts only its batches' runs, the same figures as from every run", async (t) => {
  // 45 batches over 45 days, with runs of every status and verdict, and ties in created_at (ordered by id then).
  const c = await svc.createCollection(pro.key, { name: 'Long history', isPublic: true }, toolIds);
  const s = await scenario(pro.key, c.id, 'Slugify "Long History" with slugify');
  const db = svc.api.deps.db;
  await db.raw(
    `with b as (insert into scenario_batches (collection_id, user_id, total, created_at, completed_at)
                select ?, ?, 4, now() - make_interval(days => g / 2), now() - make_interval(days => g / 2) from generate_series(1, 45) g
                returning id, user_id, created_at)
     insert into scenario_runs (scenario_id, user_id, batch_id, status, success, verdict, steps, created_at, completed_at)
     select ?, b.user_id, b.id, st, ok, case when ok then 'pass' else 'fail' end, '[]'::json, b.created_at, b.created_at
       from b cross join lateral (select (array['completed','completed','failed','queued'])[1 + (k + abs(hashtext(b.id::text))) % 4] as st,
                                         (k + abs(hashtext(b.id::text))) % 3 = 0 as ok
                                    from generate_series(1, 4) k) r`,
    [c.id, pro.id, s],
  );
  const raw = (
    await db.raw(
      `select b.id, count(r.id) filter (where r.status = 'completed' and r.success)::int as passed,
              count(r.id) filter (where r.status = 'failed' or (r.status = 'completed' and not coalesce(r.success, false)))::int as failed
         from scenario_batches b left join scenario_runs r on r.batch_id = b.id
        where b.collection_id = ? group by b.id order by b.created_at desc, b.id desc`,
      [c.id],
    )
  ).rows.map((r: { id: string; passed: number; failed: number }) => [r.id, r.passed, r.failed]);
  t.is(raw.length, 45);
  const listed: unknown[] = [];
  for (let offset = 0; ; offset += 20) {
    const res = await svc.request('GET', `/api/collections/${c.uid}/scenario-batches?limit=20&offset=${offset}`);
    t.is(res.status, 200, res.text);
    listed.push(...res.body.data.map((b: any) => [b.id, b.passed, b.failed]));
    if (!res.body.pagination.hasMore) break;
  }
  t.deepEqual(listed, raw, 'every page, newest first, with its own runs counted');
});
