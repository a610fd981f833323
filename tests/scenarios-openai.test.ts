/**
 * Scenario runs and the agent stream (24) through the OpenAI-compatible provider, against a local server that speaks
 * the chat-completions and embeddings wire protocol with scripted answers (tests/helpers/fake-llm-vendor.ts).
 * Serial: the API and the worker share one queue of scripted replies.
 */
import test from 'ava';
import path from 'node:path';
import { EXAMPLES_DIR, startService, type Service } from './helpers/service.js';
import { startFakeLlmVendor, type FakeLlmVendor } from './helpers/fake-llm-vendor.js';
import { postJson, readSse } from './helpers/sse.js';

const API_KEY = 'sk-vendor-secret-98765';
let vendor: FakeLlmVendor;
let svc: Service;
let user: { key: string; id: string };
let scenarioId: string;

test.before(async () => {
  vendor = await startFakeLlmVendor();
  svc = await startService({
    sandbox: 'process',
    env: { LLM_BASE_URL: vendor.baseUrl, LLM_API_KEY: API_KEY, LLM_MODEL: 'fake-chat-1', LLM_EMBEDDING_MODEL: 'fake-embed-1' },
  });
  const res = await svc.importPackage(`path:${path.join(EXAMPLES_DIR, 'text-tools')}`);
  if (res.status !== 201) throw new Error(res.text);
  user = await svc.createUser({ tier: 'pro' });
  const c = (await svc.request('POST', '/api/collections', { key: user.key, body: { name: 'Vendor runs' } })).body.data;
  for (const tool of res.body.data.tools) await svc.request('POST', `/api/collections/${c.id}/tools`, { key: user.key, body: { toolId: tool.id } });
  vendor.embeddings.push({ vectors: [[0.6, 0.8, 0]] });
  const s = await svc.request('POST', '/api/scenarios', {
    key: user.key,
    body: { collectionId: c.id, prompt: 'Slugify "Hello World" with slugify', assertions: [{ type: 'toolCalled', tool: 'slugify' }] },
  });
  if (s.status !== 201) throw new Error(s.text);
  scenarioId = s.body.data.id;
});
test.after.always(async () => {
  await svc?.close();
  await vendor?.close();
});

test.serial('the scenario embedding comes from the vendor and is stored with its model', async (t) => {
  const row = await svc.api.deps.db('scenarios').where({ id: scenarioId }).first();
  t.is(row.embedding_model, 'fake-embed-1');
  t.deepEqual(row.embedding, [0.6, 0.8, 0]);
  t.is(vendor.requests.find((r) => r.path === '/v1/embeddings')!.headers.authorization, `Bearer ${API_KEY}`);
});

test.serial('a run: the model calls slugify in the sandbox, answers, the judge passes it; the record names the models', async (t) => {
  const before = vendor.chatRequests().length;
  vendor.chat.push(
    { toolCalls: [{ id: 'call_1', name: 'slugify', arguments: { text: 'Hello World' } }], usage: { prompt_tokens: 100, completion_tokens: 20 } },
    { text: 'The slug is hello-world.', usage: { prompt_tokens: 150, completion_tokens: 8 } },
    { text: JSON.stringify({ verdict: 'pass', reason: 'slugify produced the slug' }), usage: { prompt_tokens: 60, completion_tokens: 12 } },
  );
  const res = await svc.request('POST', `/api/scenarios/${scenarioId}/run`, { key: user.key });
  t.is(res.status, 200, res.text);
  const r = res.body.data;
  t.like(r, { status: 'completed', success: true, evaluator: { model: 'fake-chat-1', provider: 'openai-compatible', verdict: 'pass' } });
  t.regex(r.evaluator.reason, /slugify produced the slug; all 1 assertion\(s\) held/);
  t.like(r.agent, { provider: 'openai-compatible', model: 'fake-chat-1', temperature: 0, maxSteps: 10 });
  t.is(r.steps.length, 1);
  t.like(r.steps[0], { toolName: 'slugify', params: { text: 'Hello World' }, output: { slug: 'hello-world' } });
  t.like(r.usage, { inputTokens: 310, outputTokens: 40, totalTokens: 350 });
  t.is(r.finalText, 'The slug is hello-world.');
  const requests = vendor.chatRequests().slice(before);
  t.is(requests.length, 3);
  t.true(
    requests[0].body.tools.some((x: any) => x.function.name === 'slugify'),
    'the collection’s tools are offered',
  );
  t.is(requests[0].body.temperature, 0);
  t.regex(JSON.stringify(requests[1].body.messages), /hello-world/, 'the tool output went back to the model');
  t.like((await svc.request('GET', `/api/scenarios/${scenarioId}`)).body.data, { totalRuns: 1, lastRunStatus: 'pass' });
});

test.serial('a vendor failure makes the run failed (not a verdict); statistics do not move; no key in the error', async (t) => {
  // Three tries (the SDK's retries), asked for after 100 ms (retry-after-ms) rather than the SDK's 2 + 4 s.
  for (let i = 0; i < 3; i++) vendor.chat.push({ error: { status: 500, message: 'the model is overloaded', retryAfterMs: 100 } });
  const res = await svc.request('POST', `/api/scenarios/${scenarioId}/run`, { key: user.key });
  t.is(res.status, 200);
  const r = res.body.data;
  t.like(r, { status: 'failed', success: false, error: { code: 'LLM_ERROR' } });
  t.is(r.error.message, 'LLM provider unavailable (status 500)');
  t.false(JSON.stringify(r).includes(API_KEY));
  const events = await readSse(`${svc.url}/api/scenario-runs/${r.runId}/events`);
  t.deepEqual(
    events.events.map((e) => e.event),
    ['error', 'done'],
  );
  t.like((await svc.request('GET', `/api/scenarios/${scenarioId}`)).body.data, { totalRuns: 1, lastRunStatus: 'pass' });
});

test.serial('24 through the vendor: deltas as the text streams in; a vendor error is an error event, then done', async (t) => {
  vendor.chat.push(
    { toolCalls: [{ id: 'c1', name: 'slugify', arguments: { text: 'Streamed Text', separator: '-' } }] },
    { text: 'Your slug is streamed_text.', chunks: ['Your ', 'slug is ', 'streamed_text.'] },
  );
  const ok = await readSse(
    `${svc.url}/api/tools/execute/@toolshed-examples/text-tools/slugify`,
    postJson(undefined, { prompt: 'Slugify "Streamed Text"', parameters: { separator: '_' } }),
  );
  t.deepEqual(
    ok.events.map((e) => e.event),
    ['tools.discovered', 'tool.started', 'tool.completed', 'message.delta', 'message.delta', 'message.delta', 'done'],
  );
  t.like(ok.events[2].data, { output: { slug: 'streamed_text' } }, 'explicit parameters won over the model');
  t.deepEqual(
    ok.events.slice(3, 6).map((e) => e.data.text),
    ['Your ', 'slug is ', 'streamed_text.'],
  );
  t.like(ok.events[6].data, { provider: 'openai-compatible', model: 'fake-chat-1' });
  for (let i = 0; i < 3; i++) vendor.chat.push({ error: { status: 503, message: 'unavailable', retryAfterMs: 100 } });
  const bad = await readSse(`${svc.url}/api/tools/execute/@toolshed-examples/text-tools/slugify`, postJson(undefined, { prompt: 'Slugify "x y"' }));
  t.is(bad.status, 200);
  t.deepEqual(
    bad.events.map((e) => e.event),
    ['tools.discovered', 'error', 'done'],
  );
  t.is(bad.events[1].data.code, 'LLM_ERROR');
  t.false(bad.text.includes(API_KEY));
});
