/**
 * Scenario runs (14, 15, runs by id and their events) with the real worker, sandbox and offline provider: the run
 * record, statistics after pass and fail sequences, the daily quota under 20 concurrent requests, history, errors.
 */
import test from 'ava';
import path from 'node:path';
import { EXAMPLES_DIR, startService, type Service } from './helpers/service.js';
import { readSse } from './helpers/sse.js';
import { up as recomputeStatistics } from '../migrations/20261126010002_scenario_stats_every_run.js';

type User = { key: string; id: string; username: string };
let svc: Service;
let owner: User;
let collectionId: string;
let toolIds: string[];

const PASSING = 'Slugify "Hello World" with slugify';

test.before(async () => {
  svc = await startService({ sandbox: 'process', env: { SCENARIO_DAILY_QUOTA: '5' } });
  const res = await svc.importPackage(`path:${path.join(EXAMPLES_DIR, 'text-tools')}`);
  if (res.status !== 201) throw new Error(res.text);
  owner = await svc.createUser({ tier: 'pro' });
  const c = await svc.request('POST', '/api/collections', { key: owner.key, body: { name: 'Run tests' } });
  collectionId = c.body.data.id;
  toolIds = res.body.data.tools.map((x: { id: string }) => x.id);
  for (const tool of res.body.data.tools) await svc.request('POST', `/api/collections/${collectionId}/tools`, { key: owner.key, body: { toolId: tool.id } });
});
test.after.always(() => svc?.close());

async function scenario(body: Record<string, unknown>, key = owner.key) {
  const res = await svc.request('POST', '/api/scenarios', { key, body: { collectionId, ...body } });
  if (res.status !== 201) throw new Error(res.text);
  return res.body.data as { id: string };
}
/** A scenario that cannot pass: the slug never contains this text. */
const failing = () => scenario({ prompt: PASSING, assertions: [{ type: 'outputContains', text: 'no such text anywhere' }] });
const run = (id: string, key = owner.key, query = '') => svc.request('POST', `/api/scenarios/${id}/run${query}`, { key });
const detail = async (id: string) => (await svc.request('GET', `/api/scenarios/${id}`)).body.data;

test('a passing run: the judged run record with steps, usage, timestamps, models and tool versions', async (t) => {
  const s = await scenario({ prompt: PASSING, assertions: [{ type: 'toolCalled', tool: 'slugify' }, { type: 'noToolErrors' }] });
  const res = await run(s.id);
  t.is(res.status, 200, res.text);
  const r = res.body.data;
  t.like(r, { scenarioId: s.id, status: 'completed', success: true, evaluator: { model: 'offline-agent-v1', verdict: 'pass' } });
  t.regex(r.runId, /^[0-9a-f-]{36}$/);
  t.regex(r.evaluator.reason, /slugify was called/);
  t.true(r.evaluator.assertions.every((a: any) => a.passed));
  t.is(r.steps.length, 1);
  t.like(r.steps[0], { toolName: 'slugify', params: { text: 'Hello World' }, output: { slug: 'hello-world' } });
  t.is(typeof r.steps[0].executionTimeMs, 'number');
  t.regex(r.steps[0].toolId, /^[0-9a-f-]{36}$/);
  for (const k of ['inputTokens', 'outputTokens', 'totalTokens', 'executionTimeMs']) t.is(typeof r.usage[k], 'number', k);
  for (const k of ['startedAt', 'completedAt', 'createdAt']) t.truthy(Date.parse(r.timestamps[k]), k);
  t.is(typeof r.quotaRemaining, 'number');
  t.like(r.agent, { provider: 'offline', model: 'offline-agent-v1', temperature: 0, maxSteps: 10 });
  t.true(r.agent.tools.some((x: any) => x.name === 'slugify' && x.packageVersion === '1.0.0'));
  const execution = await svc.request('GET', `/api/executions/${r.steps[0].executionId}`, { key: owner.key });
  t.like(execution.body.data, { status: 'succeeded', result: { slug: 'hello-world' } }, 'the tool call is an execution on record');
  t.deepEqual((await svc.request('GET', `/api/scenario-runs/${r.runId}`)).body.data.steps, r.steps);
});

test('a failing verdict: status completed, success false, the reason names the assertion', async (t) => {
  const s = await failing();
  const r = (await run(s.id)).body.data;
  t.like(r, { status: 'completed', success: false, evaluator: { verdict: 'fail' } });
  t.regex(r.evaluator.reason, /no such text anywhere/);
});

test('statistics after pass and fail sequences: totals, last status, consecutive counts, qualityScore', async (t) => {
  const pass = await scenario({ prompt: PASSING });
  const fail = await failing();
  for (let i = 0; i < 3; i++) t.true((await run(pass.id)).body.data.success);
  let d = await detail(pass.id);
  t.like(d, { totalRuns: 3, lastRunStatus: 'pass', consecutivePasses: 3, consecutiveFails: 0, qualityScore: 0.8 });
  t.truthy(Date.parse(d.lastRunAt));
  for (let i = 0; i < 2; i++) t.false((await run(fail.id)).body.data.success);
  d = await detail(fail.id);
  t.like(d, { totalRuns: 2, lastRunStatus: 'fail', consecutivePasses: 0, consecutiveFails: 2, qualityScore: 0.25 });
  // The same scenario flipping: make the failing one pass by dropping its assertion.
  await svc.request('PATCH', `/api/scenarios/${fail.id}`, { key: owner.key, body: { assertions: null } });
  t.true((await run(fail.id)).body.data.success);
  d = await detail(fail.id);
  t.like(d, { totalRuns: 3, lastRunStatus: 'pass', consecutivePasses: 1, consecutiveFails: 0, qualityScore: 0.4 });
  t.true((await run(fail.id)).body.data.success);
  t.like(await detail(fail.id), { totalRuns: 4, consecutivePasses: 2, qualityScore: 0.5 });
});

test('quality is over the newest 20 completed runs', async (t) => {
  const s = await scenario({ prompt: PASSING });
  await svc.api.deps.db('scenario_runs').insert(
    Array.from({ length: 25 }, (_, i) => ({
      scenario_id: s.id,
      user_id: owner.id,
      status: 'completed',
      success: false,
      created_at: new Date(Date.now() - 60_000 + i),
      completed_at: new Date(Date.now() - 60_000 + i),
    })),
  );
  t.true((await run(s.id)).body.data.success);
  t.is((await detail(s.id)).qualityScore, Math.round((2 / 22) * 1e4) / 1e4, '1 pass in the newest 20: (1 + 1) / (20 + 2)');
});

test('quota: 20 concurrent run requests with a quota of 5 — exactly 5 queued, 15 refused in shape B', async (t) => {
  const free = await svc.createUser();
  const c = await svc.request('POST', '/api/collections', { key: free.key, body: { name: 'Quota test' } });
  const s = await svc.request('POST', '/api/scenarios', { key: free.key, body: { collectionId: c.body.data.id, prompt: PASSING } });
  const answers = await Promise.all(Array.from({ length: 20 }, () => run(s.body.data.id, free.key, '?wait=false')));
  const ok = answers.filter((a) => a.status === 202);
  const refused = answers.filter((a) => a.status === 429);
  t.is(ok.length, 5);
  t.is(refused.length, 15);
  t.deepEqual(ok.map((a) => a.body.data.quotaRemaining).sort(), [0, 1, 2, 3, 4]);
  const now = new Date();
  const midnight = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)).toISOString();
  for (const r of refused) {
    t.deepEqual(r.body, { success: false, error: 'Rate Limit Exceeded', message: r.body.message, quotaRemaining: 0, resetAt: midnight });
  }
  const quota = await svc.api.deps.db('scenario_quota').where({ user_id: free.id }).first();
  t.is(quota.used, 5);
  t.is(Number((await svc.api.deps.db('scenario_runs').where({ user_id: free.id }).count('* as n').first())!.n), 5, 'nothing queued beyond the quota');
  const sync = await run(s.body.data.id, free.key);
  t.is(sync.status, 429, 'a sync run is refused too');
});

test('wait=false: 202 with runId; the run completes; its events replay in order and resume after Last-Event-ID', async (t) => {
  const s = await scenario({ prompt: PASSING });
  const res = await run(s.id, owner.key, '?wait=false');
  t.is(res.status, 202);
  t.like(res.body.data, { status: 'queued' });
  const runId = res.body.data.runId;
  const live = await readSse(`${svc.url}/api/scenario-runs/${runId}/events`);
  t.is(live.contentType, 'text/event-stream; charset=utf-8');
  t.deepEqual(
    live.events.map((e) => e.event),
    ['step', 'tool.completed', 'verdict', 'done'],
  );
  t.deepEqual(
    live.events.map((e) => e.id),
    [1, 2, 3, 4],
  );
  t.like(live.events[0].data, { runId, toolName: 'slugify', params: { text: 'Hello World' } });
  t.like(live.events[1].data, { runId, output: { slug: 'hello-world' } });
  t.like(live.events[2].data, { verdict: 'pass', success: true });
  t.like(live.events[3].data, { runId, status: 'completed' });
  const replay = await readSse(`${svc.url}/api/scenario-runs/${runId}/events`);
  t.deepEqual(replay.events, live.events, 'a finished run replays the same events');
  const resumed = await readSse(`${svc.url}/api/scenario-runs/${runId}/events`, { headers: { 'last-event-id': '2' } });
  t.deepEqual(
    resumed.events.map((e) => e.event),
    ['verdict', 'done'],
  );
  const got = await svc.request('GET', `/api/scenario-runs/${runId}`);
  t.like(got.body.data, { runId, status: 'completed', success: true });
});

test('history (15): newest first, limit 10 default, max 50, no success field', async (t) => {
  const s = await scenario({ prompt: PASSING });
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push((await run(s.id)).body.data.runId);
  const res = await svc.request('GET', `/api/scenarios/${s.id}/runs?limit=2`);
  t.is(res.status, 200);
  t.false('success' in res.body);
  t.deepEqual(
    res.body.data.map((r: any) => r.id),
    [ids[2], ids[1]],
  );
  t.deepEqual(res.body.pagination, { limit: 2, offset: 0, hasMore: true });
  const all = await svc.request('GET', `/api/scenarios/${s.id}/runs?limit=500`);
  t.is(all.body.pagination.limit, 50);
  t.deepEqual(
    all.body.data.map((r: any) => r.id),
    [...ids].reverse(),
  );
  t.is((await svc.request('GET', `/api/scenarios/${s.id}/runs`)).body.pagination.limit, 10);
});

test('run errors in shape B: no key 401, private 404, unknown run 404; others cannot see private runs', async (t) => {
  const other = await svc.createUser();
  const priv = await svc.request('POST', '/api/collections', { key: owner.key, body: { name: 'Private runs', isPublic: false } });
  const s = await svc.request('POST', '/api/scenarios', { key: owner.key, body: { collectionId: priv.body.data.id, prompt: PASSING } });
  const r = (await run(s.body.data.id)).body.data;
  const expectB = (res: { status: number; body: any }, status: number, word: string) => {
    t.is(res.status, status);
    t.like(res.body, { success: false, error: word });
  };
  expectB(await svc.request('POST', `/api/scenarios/${s.body.data.id}/run`), 401, 'Unauthorized');
  expectB(await run(s.body.data.id, other.key), 404, 'Not Found');
  expectB(await svc.request('GET', `/api/scenario-runs/${r.runId}`, { key: other.key }), 404, 'Not Found');
  expectB(await svc.request('GET', `/api/scenarios/${s.body.data.id}/runs`), 404, 'Not Found');
  expectB(await svc.request('GET', '/api/scenario-runs/00000000-0000-4000-8000-000000000000'), 404, 'Not Found');
  expectB(await svc.request('POST', `/api/scenarios/${s.body.data.id}/run?wait=maybe`, { key: owner.key }), 400, 'Bad Request');
  t.is((await svc.request('GET', `/api/scenario-runs/${r.runId}`, { key: owner.key })).status, 200);
});

const round4 = (x: number) => Math.round(x * 1e4) / 1e4;

/** The statistics the run history implies (SPEC.md, Scenarios), next to the scenario's own. */
async function statisticsAndHistory(id: string) {
  const d = await detail(id);
  const history = await svc.request('GET', `/api/scenarios/${id}/runs?limit=50`);
  const done: { success: boolean; timestamps: { completedAt: string } }[] = history.body.data.filter((r: { status: string }) => r.status === 'completed');
  const streak = (passed: boolean) => {
    const i = done.findIndex((r) => r.success !== passed);
    return i === -1 ? done.length : i;
  };
  const window = done.slice(0, 20);
  return {
    statistics: {
      totalRuns: d.totalRuns,
      lastRunAt: d.lastRunAt,
      lastRunStatus: d.lastRunStatus,
      consecutivePasses: d.consecutivePasses,
      consecutiveFails: d.consecutiveFails,
      qualityScore: d.qualityScore,
    },
    fromHistory: {
      totalRuns: done.length,
      lastRunAt: done[0]?.timestamps.completedAt ?? null,
      lastRunStatus: done.length === 0 ? null : done[0].success ? 'pass' : 'fail',
      consecutivePasses: streak(true),
      consecutiveFails: streak(false),
      qualityScore: round4((window.filter((r) => r.success).length + 1) / (window.length + 2)),
    },
  };
}

test('every completed run counts, whoever ran it: statistics match the history, and sorting by totalRuns sees them', async (t) => {
  const [bob, carol] = [await svc.createUser({ tier: 'pro' }), await svc.createUser({ tier: 'pro' })];
  const c = await svc.createCollection(owner.key, { name: 'Runs by anyone' }, toolIds);
  const make = async () => {
    const res = await svc.request('POST', '/api/scenarios', { key: owner.key, body: { collectionId: c.id, prompt: PASSING } });
    if (res.status !== 201) throw new Error(res.text);
    return res.body.data.id as string;
  };
  const popular = await make();
  const quiet = await make();
  const assertions = (value: unknown) => svc.request('PATCH', `/api/scenarios/${popular}`, { key: owner.key, body: { assertions: value } });

  // A public scenario run by two users who are not its owner: three passes, then two fails.
  for (let i = 0; i < 3; i++) t.true((await run(popular, bob.key)).body.data.success);
  t.is((await assertions([{ type: 'outputContains', text: 'no such text anywhere' }])).status, 200);
  for (let i = 0; i < 2; i++) t.false((await run(popular, carol.key)).body.data.success);
  let both = await statisticsAndHistory(popular);
  t.like(both.statistics, { totalRuns: 5, lastRunStatus: 'fail', consecutivePasses: 0, consecutiveFails: 2, qualityScore: round4(4 / 7) });
  t.truthy(Date.parse(both.statistics.lastRunAt));
  t.deepEqual(both.statistics, both.fromHistory, 'the statistics describe the runs of the history');

  // The owner's runs count the same way, next to everyone else's.
  t.is((await assertions(null)).status, 200);
  t.true((await run(quiet)).body.data.success);
  t.true((await run(popular, bob.key)).body.data.success);
  both = await statisticsAndHistory(popular);
  t.like(both.statistics, { totalRuns: 6, lastRunStatus: 'pass', consecutivePasses: 1, consecutiveFails: 0, qualityScore: round4(5 / 8) });
  t.deepEqual(both.statistics, both.fromHistory);

  // Sorting by totalRuns sees them: the newer scenario (first by createdAt) has one run, the other six.
  const byRuns = await svc.request('GET', `/api/scenarios?collectionId=${c.id}&sortBy=totalRuns`);
  t.is(byRuns.status, 200, byRuns.text);
  t.deepEqual(
    byRuns.body.data.map((x: { id: string; totalRuns: number }) => [x.id, x.totalRuns]),
    [
      [popular, 6],
      [quiet, 1],
    ],
  );
  const list = await svc.request('GET', `/api/collections/${c.uid}/scenarios`);
  t.like(
    list.body.data.scenarios.find((x: { id: string }) => x.id === popular),
    { totalRuns: 6, lastRunStatus: 'pass', qualityScore: round4(5 / 8) },
  );
});

test.serial('statistics recorded before every run counted are recomputed from the history (migration 20261126010002)', async (t) => {
  const bob = await svc.createUser();
  const c = await svc.createCollection(owner.key, { name: 'Recomputed' }, toolIds);
  const created = await svc.request('POST', '/api/scenarios', { key: owner.key, body: { collectionId: c.id, prompt: PASSING } });
  const id = created.body.data.id;
  // As the old code left it: six completed runs by another user (pass, pass, fail, pass, pass, pass, oldest first)
  // and one run that could not be judged, with statistics that ignore them all.
  const db = svc.api.deps.db;
  const base = Date.now() - 600_000;
  await db('scenario_runs').insert([
    ...[true, true, false, true, true, true].map((success, i) => ({
      scenario_id: id,
      user_id: bob.id,
      status: 'completed',
      success,
      created_at: new Date(base + i * 1000),
      completed_at: new Date(base + i * 1000 + 500),
    })),
    { scenario_id: id, user_id: bob.id, status: 'failed', created_at: new Date(base + 9000), completed_at: new Date(base + 9500) },
  ]);
  t.like((await statisticsAndHistory(id)).statistics, { totalRuns: 0, lastRunStatus: null, qualityScore: 0.5 });

  await recomputeStatistics(db);
  const both = await statisticsAndHistory(id);
  t.like(both.statistics, { totalRuns: 6, lastRunStatus: 'pass', consecutivePasses: 3, consecutiveFails: 0, qualityScore: round4(6 / 8) });
  t.is(both.statistics.lastRunAt, new Date(base + 5500).toISOString());
  t.deepEqual(both.statistics, both.fromHistory);
});
