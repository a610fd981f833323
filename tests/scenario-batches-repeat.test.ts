/**
 * Batches a team can gate a release on (issue 25 items 1, 5, 8): repeats with pass@k, pass^k and flakiness per
 * scenario, a chosen subset of scenarios, a scenario run repeated, the quota taken for the whole batch or the batch
 * refused whole, bad input refused with nothing recorded, and the batch's token usage and cost at LLM_PRICES. The real
 * worker and sandbox; the offline provider, and for a flaky scenario and paid tokens a stand-in vendor speaking the
 * chat-completions wire protocol whose judge alternates its verdicts (tests/helpers/fake-llm-vendor.ts).
 */
import test from 'ava';
import path from 'node:path';
import { loadConfig } from '../core/infra/config.js';
import { JUDGE_SYSTEM } from '../core/llm/prompts.js';
import { EXAMPLES_DIR, startService, type Service } from './helpers/service.js';
import { startFakeLlmVendor, type FakeLlmVendor } from './helpers/fake-llm-vendor.js';
import { readSse } from './helpers/sse.js';

type User = { key: string; id: string; username: string };
let svc: Service;
let pro: User;
let toolIds: string[];

const PASSING = ['Slugify "Hello World" with slugify', 'Count the words in "the quick brown fox jumps" with textStatistics'];

test.before(async () => {
  // A price for another model only: the offline agent's tokens have none, so its batches show no cost (and say why).
  svc = await startService({
    sandbox: 'process',
    env: { SCENARIO_DAILY_QUOTA: '5', LLM_PRICES: JSON.stringify({ 'gpt-4o': { inputPerMTok: 2.5, outputPerMTok: 10 } }) },
  });
  const res = await svc.importPackage(`path:${path.join(EXAMPLES_DIR, 'text-tools')}`);
  if (res.status !== 201) throw new Error(res.text);
  toolIds = res.body.data.tools.map((t: { id: string }) => t.id);
  pro = await svc.createUser({ tier: 'pro' });
});
test.after.always(() => svc?.close());

async function collectionWith(s: Service, key: string, name: string, scenarios: { prompt: string; failing?: boolean }[], tools = toolIds) {
  const c = (await s.request('POST', '/api/collections', { key, body: { name } })).body.data;
  for (const toolId of tools) await s.request('POST', `/api/collections/${c.id}/tools`, { key, body: { toolId } });
  const ids: string[] = [];
  for (const { prompt, failing } of scenarios) {
    const assertions = failing ? [{ type: 'outputContains', text: 'never in any output' }] : undefined;
    const res = await s.request('POST', '/api/scenarios', { key, body: { collectionId: c.id, prompt, assertions } });
    if (res.status !== 201) throw new Error(res.text);
    ids.push(res.body.data.id);
  }
  return { id: c.id as string, uid: c.uid as string, scenarioIds: ids };
}

/** The batch's `done` event (the stream ends after it). */
async function done(s: Service, batchId: string, key: string) {
  const stream = await readSse(`${s.url}/api/scenario-batches/${batchId}/events`, { headers: { authorization: `Bearer ${key}` } });
  const last = stream.events.at(-1)!;
  if (last.event !== 'done') throw new Error(`stream ended with ${last.event}: ${stream.text}`);
  return { done: last.data, events: stream.events };
}

const quotaUsed = async (userId: string) => Number((await svc.api.deps.db('scenario_quota').where({ user_id: userId }).first())?.used ?? 0);
const batchCount = async (userId: string) => Number((await svc.api.deps.db('scenario_batches').where({ user_id: userId }).count('* as n').first())!.n);
const runCount = async (userId: string) => Number((await svc.api.deps.db('scenario_runs').where({ user_id: userId }).count('* as n').first())!.n);

test('run-all with repeat 3: k runs per scenario, pass@k and pass^k per scenario, usage summed; GET and done agree', async (t) => {
  const c = await collectionWith(svc, pro.key, 'Repeat three', [{ prompt: PASSING[0] }, { prompt: PASSING[1], failing: true }]);
  const res = await svc.request('POST', `/api/collections/${c.uid}/scenarios/run-all`, { key: pro.key, body: { repeat: 3 } });
  t.is(res.status, 202, res.text);
  t.like(res.body.data, { skipped: 0, repeat: 3 });
  t.is(res.body.data.runIds.length, 6);
  const { done: d, events } = await done(svc, res.body.data.batchId, pro.key);
  t.is(events.filter((e) => e.event === 'run.completed').length, 6);
  t.like(d, { total: 6, completed: 6, passed: 3, failedVerdicts: 3, repeat: 3, passRate: 0.5, flakyCount: 0, done: true });
  const [first, second] = d.scenarios;
  // Not flaky either: by name ("Count…" before "Slugify…").
  t.like(first, { scenarioId: c.scenarioIds[1], runs: 3, completed: 3, passes: 0, passRate: 0, passAtK: false, passHatK: false, flaky: false });
  t.deepEqual(first.verdicts, ['fail', 'fail', 'fail']);
  t.like(second, { scenarioId: c.scenarioIds[0], runs: 3, completed: 3, passes: 3, passRate: 1, passAtK: true, passHatK: true, flaky: false });
  t.deepEqual(second.verdicts, ['pass', 'pass', 'pass']);
  for (const id of c.scenarioIds) {
    t.deepEqual(
      d.runs
        .filter((r: any) => r.scenarioId === id)
        .map((r: any) => r.repeatIndex)
        .sort(),
      [1, 2, 3],
    );
  }
  // Usage: the offline agent's word counts summed over the six runs; the offline judge spends nothing.
  const runs = await Promise.all(res.body.data.runIds.map(async (id: string) => (await svc.request('GET', `/api/scenario-runs/${id}`)).body.data));
  const sum = (k: 'inputTokens' | 'outputTokens') => runs.reduce((n, r) => n + r.usage[k], 0);
  t.true(sum('inputTokens') > 0);
  t.deepEqual(d.usage.agent, { inputTokens: sum('inputTokens'), outputTokens: sum('outputTokens'), totalTokens: sum('inputTokens') + sum('outputTokens') });
  t.deepEqual(d.usage.judge, { inputTokens: 0, outputTokens: 0, totalTokens: 0 });
  t.deepEqual(d.usage.total, d.usage.agent);
  t.is(d.cost, null, 'LLM_PRICES has no price for the offline agent');
  t.is(d.costNote, "No price for model 'offline-agent-v1' in LLM_PRICES");
  const got = (await svc.request('GET', `/api/scenario-batches/${res.body.data.batchId}`)).body.data;
  t.deepEqual(got.scenarios, d.scenarios);
  t.deepEqual(got.usage, d.usage);
  t.like(got, { repeat: 3, passRate: 0.5, flakyCount: 0 });
});

test('a chosen subset runs only those scenarios; a scenario of another collection is a 400 naming it', async (t) => {
  const c = await collectionWith(svc, pro.key, 'Subset', [{ prompt: PASSING[0] }, { prompt: PASSING[1] }]);
  const other = await collectionWith(svc, pro.key, 'Subset other', [{ prompt: PASSING[0] }]);
  const res = await svc.request('POST', `/api/collections/${c.id}/scenarios/run-all`, { key: pro.key, body: { scenarioIds: [c.scenarioIds[1]], repeat: 2 } });
  t.is(res.status, 202, res.text);
  t.is(res.body.data.runIds.length, 2);
  const { done: d } = await done(svc, res.body.data.batchId, pro.key);
  t.is(d.scenarios.length, 1);
  t.like(d.scenarios[0], { scenarioId: c.scenarioIds[1], runs: 2, passes: 2, passHatK: true });
  // Counted for these two collections only: the other tests of this file run scenarios of the same user meanwhile.
  const recorded = async () => {
    const db = svc.api.deps.db;
    const ids = [c.id, other.id];
    const batches = Number((await db('scenario_batches').whereIn('collection_id', ids).count('* as n').first())!.n);
    const runs = Number(
      (await db('scenario_runs')
        .whereIn('scenario_id', [...c.scenarioIds, ...other.scenarioIds])
        .count('* as n')
        .first())!.n,
    );
    return [batches, runs];
  };
  const before = await recorded();
  const bad = await svc.request('POST', `/api/collections/${c.id}/scenarios/run-all`, {
    key: pro.key,
    body: { scenarioIds: [c.scenarioIds[0], other.scenarioIds[0]] },
  });
  t.is(bad.status, 400);
  t.like(bad.body, { success: false, error: 'Bad Request' });
  t.true(bad.body.message.includes(other.scenarioIds[0]), bad.body.message);
  const twice = await svc.request('POST', `/api/collections/${c.id}/scenarios/run-all`, {
    key: pro.key,
    body: { scenarioIds: [c.scenarioIds[0], c.scenarioIds[0]] },
  });
  t.is(twice.status, 400);
  t.deepEqual(await recorded(), before, 'nothing recorded');
});

test('a scenario run with repeat 2 is a batch of that scenario (202 with batchId and runIds); without it, unchanged', async (t) => {
  const c = await collectionWith(svc, pro.key, 'Run repeat', [{ prompt: PASSING[0] }]);
  const res = await svc.request('POST', `/api/scenarios/${c.scenarioIds[0]}/run`, { key: pro.key, body: { repeat: 2 } });
  t.is(res.status, 202, res.text);
  t.is(res.body.data.runIds.length, 2);
  const { done: d } = await done(svc, res.body.data.batchId, pro.key);
  t.like(d, { collectionId: c.id, total: 2, repeat: 2, passRate: 1 });
  t.like(d.scenarios[0], { scenarioId: c.scenarioIds[0], verdicts: ['pass', 'pass'], passAtK: true, passHatK: true });
  const single = await svc.request('POST', `/api/scenarios/${c.scenarioIds[0]}/run`, { key: pro.key });
  t.is(single.status, 200);
  t.like(single.body.data, { status: 'completed', success: true, batchId: null });
});

test('repeats take the quota for the whole batch or refuse it whole: 5 left, 2 scenarios × 3 is a 429 and nothing recorded', async (t) => {
  const free = await svc.createUser();
  const c = await collectionWith(svc, free.key, 'Quota whole', [{ prompt: PASSING[0] }, { prompt: PASSING[1] }]);
  const res = await svc.request('POST', `/api/collections/${c.id}/scenarios/run-all`, { key: free.key, body: { repeat: 3 } });
  t.is(res.status, 429);
  t.like(res.body, { success: false, error: 'Rate Limit Exceeded', quotaRemaining: 5 });
  t.is(res.body.resetAt, new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1)).toISOString());
  t.is(await quotaUsed(free.id), 0, 'no quota taken');
  t.is(await batchCount(free.id), 0, 'no batch');
  t.is(await runCount(free.id), 0, 'no run');
  const chosen = await svc.request('POST', `/api/collections/${c.id}/scenarios/run-all`, { key: free.key, body: { scenarioIds: c.scenarioIds, repeat: 3 } });
  t.is(chosen.status, 429);
  t.like(chosen.body, { error: 'Rate Limit Exceeded', quotaRemaining: 5 });
  t.regex(chosen.body.message, /6 needed, 5 left/);
  const single = await svc.request('POST', `/api/scenarios/${c.scenarioIds[0]}/run`, { key: free.key, body: { repeat: 6 } });
  t.is(single.status, 429);
  t.like(single.body, { quotaRemaining: 5 });
  const fits = await svc.request('POST', `/api/collections/${c.id}/scenarios/run-all`, { key: free.key, body: { repeat: 2 } });
  t.is(fits.status, 202, fits.text);
  t.like(fits.body.data, { skipped: 0, quotaRemaining: 1 });
  t.is(fits.body.data.runIds.length, 4);
  t.is(await quotaUsed(free.id), 4);
  // Without a body, run-all is as before: one take per run, what does not fit is skipped.
  const legacy = await svc.request('POST', `/api/collections/${c.id}/scenarios/run-all`, { key: free.key });
  t.is(legacy.status, 202);
  t.like(legacy.body.data, { skipped: 1, quotaRemaining: 0, repeat: 1 });
  t.is(legacy.body.data.runIds.length, 1);
  await done(svc, fits.body.data.batchId, free.key);
  await done(svc, legacy.body.data.batchId, free.key);
});

test('bad input: repeat 0, 11, "3", 1.5, an unknown field: 400 in shape B naming `repeat`, nothing recorded, no quota taken', async (t) => {
  const free = await svc.createUser();
  const c = await collectionWith(svc, free.key, 'Bad input', [{ prompt: PASSING[0] }]);
  t.is((await svc.request('POST', `/api/scenarios/${c.scenarioIds[0]}/run`, { key: free.key })).status, 200);
  const used = await quotaUsed(free.id);
  const batches = await batchCount(free.id);
  const runs = await runCount(free.id);
  t.is(used, 1);
  for (const repeat of [0, 11, '3', 1.5, -1, null]) {
    for (const p of [`/api/collections/${c.id}/scenarios/run-all`, `/api/scenarios/${c.scenarioIds[0]}/run`]) {
      const res = await svc.request('POST', p, { key: free.key, body: { repeat } });
      t.is(res.status, 400, `${p} repeat ${JSON.stringify(repeat)}`);
      t.like(res.body, { success: false, error: 'Bad Request' });
      t.regex(res.body.message, /repeat/);
    }
  }
  const unknown = await svc.request('POST', `/api/collections/${c.id}/scenarios/run-all`, { key: free.key, body: { repeats: 3 } });
  t.is(unknown.status, 400);
  t.regex(unknown.body.message, /repeats/);
  const notList = await svc.request('POST', `/api/collections/${c.id}/scenarios/run-all`, { key: free.key, body: { scenarioIds: c.scenarioIds[0] } });
  t.is(notList.status, 400);
  t.regex(notList.body.message, /scenarioIds/);
  t.is(await quotaUsed(free.id), used, 'the quota used is unchanged');
  t.is(await batchCount(free.id), batches);
  t.is(await runCount(free.id), runs);
});

test('LLM_PRICES is validated: not JSON, a negative price or an unknown field refuse to start', (t) => {
  t.throws(() => loadConfig({ LLM_PRICES: '{not json' }), { message: /LLM_PRICES: must be JSON/ });
  t.throws(() => loadConfig({ LLM_PRICES: '{"m": {"inputPerMTok": -1, "outputPerMTok": 1}}' }), { message: /LLM_PRICES/ });
  t.throws(() => loadConfig({ LLM_PRICES: '{"m": {"inputPerMTok": 1, "outputPerMTok": 1, "per": 2}}' }), { message: /LLM_PRICES/ });
  t.deepEqual(loadConfig({ LLM_PRICES: '{"m": {"inputPerMTok": 1, "outputPerMTok": 2.5}}' }).LLM_PRICES, { m: { inputPerMTok: 1, outputPerMTok: 2.5 } });
  t.is(loadConfig({}).LLM_PRICES, undefined);
});

test.serial('through a vendor: a judge whose verdicts alternate makes a flaky scenario; tokens and cost, agent and judge apart', async (t) => {
  const vendor: FakeLlmVendor = await startFakeLlmVendor();
  let judged = 0;
  // Deterministic: the agent answers without tools; the judge passes its 1st and 3rd call and fails the 2nd.
  vendor.respond = (body) => {
    const system = body?.messages?.[0]?.content;
    if (system === JUDGE_SYSTEM) {
      judged++;
      const verdict = judged % 2 === 1 ? 'pass' : 'fail';
      return { text: JSON.stringify({ verdict, reason: `call ${judged}` }), usage: { prompt_tokens: 60, completion_tokens: 12 } };
    }
    return { text: 'The answer.', usage: { prompt_tokens: 100, completion_tokens: 20 } };
  };
  const prices = { 'fake-chat-1': { inputPerMTok: 2.5, outputPerMTok: 10 } };
  // One worker slot: the runs go in the order they were queued, so the verdicts in repeat order are pass, fail, pass.
  const s = await startService({
    sandbox: 'process',
    env: {
      LLM_BASE_URL: vendor.baseUrl,
      LLM_API_KEY: 'sk-fake',
      LLM_MODEL: 'fake-chat-1',
      LLM_EMBEDDING_MODEL: 'fake-embed-1',
      LLM_PRICES: JSON.stringify(prices),
      WORKER_CONCURRENCY: '1',
    },
  });
  try {
    const user = await s.createUser({ tier: 'pro' });
    vendor.embeddings.push({ vectors: [[1, 0, 0]] });
    const c = await collectionWith(s, user.key, 'Flaky', [{ prompt: 'Say something useful about the weather today' }], []);
    const res = await s.request('POST', `/api/collections/${c.id}/scenarios/run-all`, { key: user.key, body: { repeat: 3 } });
    t.is(res.status, 202, res.text);
    const { done: d } = await done(s, res.body.data.batchId, user.key);
    t.like(d, { total: 3, completed: 3, passed: 2, failedVerdicts: 1, passRate: 0.6667, flakyCount: 1 });
    t.like(d.scenarios[0], { runs: 3, completed: 3, passes: 2, passRate: 0.6667, passAtK: true, passHatK: false, flaky: true });
    t.deepEqual(d.scenarios[0].verdicts, ['pass', 'fail', 'pass']);
    t.deepEqual(d.usage, {
      agent: { inputTokens: 300, outputTokens: 60, totalTokens: 360 },
      judge: { inputTokens: 180, outputTokens: 36, totalTokens: 216 },
      total: { inputTokens: 480, outputTokens: 96, totalTokens: 576 },
    });
    // Agent: (300 × 2.5 + 60 × 10) / 1e6; judge: (180 × 2.5 + 36 × 10) / 1e6.
    t.deepEqual(d.cost, { currency: 'USD', agent: 0.00135, judge: 0.00081, total: 0.00216 });
    t.is(d.costNote, null);
  } finally {
    await s.close();
    await vendor.close();
  }
});
