/**
 * Trajectory assertions (toolSequence, toolArgs, maxSteps, maxLatencyMs, maxTokens) on real runs: the real worker,
 * sandbox and offline provider, whose agent calls slugify then convertCase for a two-clause prompt (core/llm/offline/index.ts:
 * one call per clause, arguments from the quoted values). Each kind passes and fails, is reported per assertion with
 * what was seen in the run record and the history, and a bad shape is a 400 in shape B on create and update.
 */
import test from 'ava';
import path from 'node:path';
import { EXAMPLES_DIR, startService, type Service } from './helpers/service.js';

type User = { key: string; id: string; username: string };
let svc: Service;
let owner: User;
let collectionId: string;

/**
 * The offline agent calls slugify { text: "Hello World" } (with its schema's defaults), then convertCase
 * { text: "user account id", to: "camel" }.
 */
const TWO_CALLS = 'Slugify "Hello World" with slugify, then convert "user account id" to camel case with convertCase';

test.before(async () => {
  svc = await startService({ sandbox: 'process' });
  const res = await svc.importPackage(`path:${path.join(EXAMPLES_DIR, 'text-tools')}`);
  if (res.status !== 201) throw new Error(res.text);
  owner = await svc.createUser({ tier: 'pro' });
  const c = await svc.request('POST', '/api/collections', { key: owner.key, body: { name: 'Assertion tests' } });
  collectionId = c.body.data.id;
  for (const tool of res.body.data.tools) await svc.request('POST', `/api/collections/${collectionId}/tools`, { key: owner.key, body: { toolId: tool.id } });
});
test.after.always(() => svc?.close());

const create = (assertions: unknown, prompt = TWO_CALLS) =>
  svc.request('POST', '/api/scenarios', { key: owner.key, body: { collectionId, prompt, assertions } });

/** Runs a scenario with these assertions; the run record and the history item of that run. */
async function runWith(assertions: unknown[]) {
  const s = await create(assertions);
  if (s.status !== 201) throw new Error(s.text);
  const res = await svc.request('POST', `/api/scenarios/${s.body.data.id}/run`, { key: owner.key });
  if (res.status !== 200) throw new Error(res.text);
  const history = await svc.request('GET', `/api/scenarios/${s.body.data.id}/runs`, { key: owner.key });
  return { run: res.body.data, item: history.body.data[0] };
}

test('the offline agent makes the two calls the other tests rely on', async (t) => {
  const { run } = await runWith([]);
  t.deepEqual(
    run.steps.map((s: any) => [s.toolName, s.params]),
    [
      ['slugify', { text: 'Hello World', lowercase: true, separator: '-' }],
      ['convertCase', { text: 'user account id', to: 'camel' }],
    ],
  );
  t.true(run.success, run.evaluator.reason);
});

test('toolSequence, toolArgs and maxSteps that hold: the run passes, each result says what was seen', async (t) => {
  const assertions = [
    { type: 'toolSequence', tools: ['slugify', 'convertCase'] },
    { type: 'toolSequence', tools: ['convertCase'] },
    { type: 'toolArgs', tool: 'convertCase', args: { to: 'camel' } },
    { type: 'toolArgs', tool: 'slugify', args: { text: 'Hello World' } },
    { type: 'maxSteps', max: 2 },
  ];
  const { run, item } = await runWith(assertions);
  t.like(run, { status: 'completed', success: true, evaluator: { verdict: 'pass' } });
  const results = run.evaluator.assertions;
  t.deepEqual(
    results.map((r: any) => r.assertion),
    assertions,
    'one result per assertion, in order',
  );
  t.true(
    results.every((r: any) => r.passed),
    JSON.stringify(results),
  );
  t.is(results[0].detail, 'slugify → convertCase were called in this order (calls: slugify → convertCase)');
  t.is(results[2].detail, 'convertCase was called with arguments holding {"to":"camel"}: {"to":"camel","text":"user account id"}');
  t.is(results[4].detail, '2 tool calls, within the maximum of 2');
  t.deepEqual(item.assertions, results, 'the history reports the same');
  t.regex(run.evaluator.reason, /all 5 assertion\(s\) held/);
});

test('toolSequence, toolArgs and maxSteps that fail: the run fails, each result says what was seen instead', async (t) => {
  const assertions = [
    { type: 'toolSequence', tools: ['convertCase', 'slugify'] },
    { type: 'toolSequence', tools: ['slugify', 'hashText'] },
    { type: 'toolArgs', tool: 'slugify', args: { text: 'Goodbye' } },
    { type: 'toolArgs', tool: 'convertCase', args: { to: 'camel', extra: 1 } },
    { type: 'toolArgs', tool: 'textStatistics', args: {} },
    { type: 'maxSteps', max: 1 },
  ];
  const { run, item } = await runWith(assertions);
  t.like(run, { status: 'completed', success: false, evaluator: { verdict: 'fail' } });
  const results = run.evaluator.assertions;
  t.deepEqual(
    results.map((r: any) => r.passed),
    [false, false, false, false, false, false],
  );
  t.is(results[0].detail, 'convertCase → slugify were not called in this order: slugify was not called after convertCase (calls: slugify → convertCase)');
  t.is(results[1].detail, 'slugify → hashText were not called in this order: hashText was not called after slugify (calls: slugify → convertCase)');
  t.is(
    results[2].detail,
    'no call of slugify had arguments holding {"text":"Goodbye"} (its arguments: {"text":"Hello World","lowercase":true,"separator":"-"})',
  );
  t.regex(results[3].detail, /^no call of convertCase had arguments holding/);
  t.is(results[4].detail, 'textStatistics was not called (calls: slugify → convertCase)');
  t.is(results[5].detail, '2 tool calls, over the maximum of 1');
  t.regex(run.evaluator.reason, /2 tool calls, over the maximum of 1/);
  t.deepEqual(item.assertions, results);
  t.like(item, { success: false });
});

test('maxTokens and maxLatencyMs check the totals the run record shows; over either, the run fails first for it', async (t) => {
  const within = await runWith([
    { type: 'maxTokens', max: 1_000_000 },
    { type: 'toolCalled', tool: 'slugify' },
    { type: 'maxLatencyMs', max: 3_600_000 },
  ]);
  t.true(within.run.success, within.run.evaluator.reason);
  const [tokens, called, latency] = within.run.evaluator.assertions;
  t.true(tokens.passed && called.passed && latency.passed);
  t.is(tokens.detail, `${within.run.usage.totalTokens} tokens used (agent and judge), within the maximum of 1000000`);
  t.is(latency.detail, `the run took ${within.run.usage.executionTimeMs} ms, within the maximum of 3600000 ms`);
  t.true(within.run.usage.totalTokens > 0);

  const over = await runWith([
    { type: 'toolCalled', tool: 'slugify' },
    { type: 'maxTokens', max: 1 },
    { type: 'maxLatencyMs', max: 1 },
  ]);
  t.like(over.run, { status: 'completed', success: false, evaluator: { verdict: 'fail' } });
  const [c, tk, lt] = over.run.evaluator.assertions;
  t.true(c.passed);
  t.false(tk.passed);
  t.false(lt.passed);
  t.is(tk.detail, `${over.run.usage.totalTokens} tokens used (agent and judge), over the maximum of 1`);
  t.is(lt.detail, `the run took ${over.run.usage.executionTimeMs} ms, over the maximum of 1 ms`);
  t.true(over.run.evaluator.reason.startsWith(`Fail: over budget: ${tk.detail}; ${lt.detail}. Apart from that: Pass:`), over.run.evaluator.reason);
  t.deepEqual(over.item.assertions, over.run.evaluator.assertions);
  const detail = (await svc.request('GET', `/api/scenarios/${over.run.scenarioId}`)).body.data;
  t.like(detail, { lastRunStatus: 'fail', consecutiveFails: 1 }, 'the statistics count the budget failure');
});

test('bad assertion shapes are a 400 in shape B on create and update, and change nothing', async (t) => {
  const bad: unknown[] = [
    { type: 'toolSequence', tools: [] },
    { type: 'toolSequence', tools: 'slugify' },
    { type: 'toolSequence', tools: ['slugify', ''] },
    { type: 'toolSequence' },
    { type: 'toolArgs', tool: 'slugify' },
    { type: 'toolArgs', tool: 'slugify', args: ['Hello World'] },
    { type: 'toolArgs', tool: 'slugify', args: 'Hello World' },
    { type: 'toolArgs', args: { text: 'x' } },
    { type: 'toolArgs', tool: 'slugify', args: { text: 'x'.repeat(5000) } },
    { type: 'maxSteps', max: -1 },
    { type: 'maxSteps', max: 1.5 },
    { type: 'maxSteps', max: '3' },
    { type: 'maxLatencyMs', max: 0 },
    { type: 'maxLatencyMs' },
    { type: 'maxTokens', max: 10, unit: 'k' },
    { type: 'maxTokenz', max: 10 },
  ];
  const prompt = 'Slugify "Bad Shapes" with slugify';
  const s = await create([{ type: 'maxSteps', max: 3 }], prompt);
  t.is(s.status, 201, s.text);
  const count = () => svc.api.deps.db('scenarios').where({ prompt }).count('* as n').first();
  const before = await count();
  for (const assertion of bad) {
    const created = await create([assertion], prompt);
    t.is(created.status, 400, `create ${JSON.stringify(assertion)}: ${created.text}`);
    t.like(created.body, { success: false, error: 'Bad Request' });
    t.regex(created.body.message, /assertions\.0/);
    const patched = await svc.request('PATCH', `/api/scenarios/${s.body.data.id}`, { key: owner.key, body: { assertions: [assertion] } });
    t.is(patched.status, 400, `update ${JSON.stringify(assertion)}: ${patched.text}`);
    t.like(patched.body, { success: false, error: 'Bad Request' });
  }
  t.deepEqual(await count(), before, 'no scenario created');
  t.deepEqual((await svc.request('GET', `/api/scenarios/${s.body.data.id}`)).body.data.assertions, [{ type: 'maxSteps', max: 3 }], 'none changed');
});

test('the OpenAPI document describes every assertion kind', async (t) => {
  const doc = (await svc.request('GET', '/api/openapi.json')).body;
  const text = JSON.stringify(doc.paths['/api/scenarios'].post);
  for (const kind of ['toolCalled', 'outputContains', 'noToolErrors', 'toolSequence', 'toolArgs', 'maxSteps', 'maxLatencyMs', 'maxTokens']) {
    t.true(text.includes(`"${kind}"`), kind);
  }
});
