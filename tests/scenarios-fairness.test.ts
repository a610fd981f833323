/**
 * Fair share for scenario runs (issue 21, item 8): one user's run-all of many slow scenarios does not make another
 * user's single run wait for the whole batch. A run's job priority is the number of runs its user already has queued
 * or running, so the other user's run is taken at the next free worker slot. Real worker (two slots), real sandbox.
 */
import test from 'ava';
import path from 'node:path';
import { FIXTURES_DIR, startService, type Service } from './helpers/service.js';
import { waitUntil as until } from './helpers/wait.js';

let svc: Service;
let toolId: string;

test.before(async () => {
  svc = await startService({ sandbox: 'process', env: { WORKER_CONCURRENCY: '2', MAX_ACTIVE_EXECUTIONS: '1' } });
  const res = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'security', 'nul-tools')}`);
  if (res.status !== 201) throw new Error(res.text);
  toolId = res.body.data.tools.find((t: { name: string }) => t.name === 'slow').id;
});
test.after.always(() => svc?.close());

async function collectionWith(key: string, name: string, prompts: string[]) {
  const c = (await svc.request('POST', '/api/collections', { key, body: { name } })).body.data;
  const added = await svc.request('POST', `/api/collections/${c.id}/tools`, { key, body: { toolId } });
  if (added.status !== 201) throw new Error(added.text);
  const ids: string[] = [];
  for (const prompt of prompts) {
    const res = await svc.request('POST', '/api/scenarios', { key, body: { collectionId: c.id, prompt } });
    if (res.status !== 201) throw new Error(res.text);
    ids.push(res.body.data.id);
  }
  return { ...c, scenarioIds: ids } as { id: string; uid: string; scenarioIds: string[] };
}

const runsOf = (ids: string[]) => svc.api.deps.db('scenario_runs').whereIn('id', ids).select('id', 'status', 'started_at', 'completed_at');

test("one user's single run completes while another user's run-all of slow scenarios still has runs queued", async (t) => {
  const mallory = await svc.createUser({ tier: 'pro' });
  const ada = await svc.createUser({ tier: 'pro' });
  const slow = await collectionWith(
    mallory.key,
    'Slow batch',
    ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel'].map((w) => `Wait 4000 milliseconds with slow (batch item ${w})`),
  );
  const trivial = await collectionWith(ada.key, 'Quick one', ['Wait 1 milliseconds with slow, then answer']);

  const batch = await svc.request('POST', `/api/collections/${slow.uid}/scenarios/run-all`, { key: mallory.key });
  t.is(batch.status, 202, batch.text);
  const backlog: string[] = batch.body.data.runIds;
  t.is(backlog.length, 8);
  // Ada starts her run once Mallory's batch fills both worker slots, with the rest of it queued behind.
  await until(
    () => runsOf(backlog),
    (rows) => rows.filter((r) => r.status === 'running').length === 2,
    'the batch to fill the worker',
  );
  const started = await svc.request('POST', `/api/scenarios/${trivial.scenarioIds[0]}/run?wait=false`, { key: ada.key });
  t.is(started.status, 202, started.text);
  const mine: string = started.body.data.runId;

  const [final] = await until(
    () => runsOf([mine]),
    (rows) => ['completed', 'failed'].includes(rows[0].status),
    "Ada's run",
  );
  const atThatMoment = await runsOf(backlog);
  t.is(final.status, 'completed');
  const steps = (await svc.request('GET', `/api/scenario-runs/${backlog[0]}`, { key: mallory.key })).body.data.steps;
  t.like(steps[0], { params: { ms: 4000 } }, 'the batch runs really are slow');
  t.true(
    atThatMoment.filter((r) => r.status === 'queued').length >= 1,
    `Ada's run finished while Mallory's batch still had runs queued (${atThatMoment.map((r) => r.status).join(', ')})`,
  );
  // Ordering, read back once all is done: some of the batch started only after Ada's run had completed.
  const all = await until(
    () => runsOf(backlog),
    (rows) => rows.every((r) => ['completed', 'failed'].includes(r.status)),
    'the batch to drain',
  );
  t.true(all.some((r) => r.started_at > final.completed_at));
  t.deepEqual(
    all.map((r) => r.status),
    backlog.map(() => 'completed'),
    'the batch still runs, every run once',
  );
});

test("a scenario run's tool calls count against its user's MAX_ACTIVE_EXECUTIONS", async (t) => {
  const ada = await svc.createUser({ tier: 'pro' });
  const c = await collectionWith(ada.key, 'Counted', ['Wait 15000 milliseconds with slow']);
  const started = await svc.request('POST', `/api/scenarios/${c.scenarioIds[0]}/run?wait=false`, { key: ada.key });
  t.is(started.status, 202, started.text);
  await until(
    () => svc.api.deps.db('executions').where({ user_id: ada.id, origin: 'scenario', status: 'running' }).select('id'),
    (rows) => rows.length > 0,
    "the run's tool call",
  );
  // The cap is one active execution (this file's setting): the run's tool call is it.
  const refused = await svc.request('POST', `/api/tools/execute/@fixtures/nul-tools/slow?wait=false`, { key: ada.key, body: { params: { ms: 1 } } });
  t.is(refused.status, 429, refused.text);
  t.is(refused.body.error.code, 'RATE_LIMITED');
});
