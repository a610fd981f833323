/**
 * LLM cost (item 6) with the OpenAI-compatible provider against the fake vendor: an agent's `model` must be one the
 * operator allowed (LLM_MODELS), and no request field reaches the vendor as a model name; scenario generation (13)
 * consumes the caller's daily scenario quota, one unit per requested scenario, taken before the vendor is called.
 * The offline service is API only (no worker): nothing there runs a tool.
 */
import test from 'ava';
import path from 'node:path';
import { EXAMPLES_DIR, startService, type Service } from '../helpers/service.js';
import { startFakeLlmVendor, type FakeLlmVendor } from '../helpers/fake-llm-vendor.js';
import { postJson, readSse } from '../helpers/sse.js';

const EXPENSIVE = 'gpt-4-expensive';
let vendor: FakeLlmVendor;
let svc: Service;
let offline: Service;
let toolIds: string[];

test.before(async () => {
  vendor = await startFakeLlmVendor();
  svc = await startService({
    sandbox: 'process',
    env: {
      LLM_BASE_URL: vendor.baseUrl,
      LLM_API_KEY: 'sk-quota-test',
      LLM_MODEL: 'fake-chat-1',
      LLM_MODELS: 'fake-chat-1, fake-chat-mini',
      LLM_EMBEDDING_MODEL: 'fake-embed-1',
      SCENARIO_DAILY_QUOTA: '3',
    },
  });
  const res = await svc.importPackage(`path:${path.join(EXAMPLES_DIR, 'text-tools')}`);
  if (res.status !== 201) throw new Error(res.text);
  toolIds = res.body.data.tools.map((x: any) => x.id);
  offline = await startService({ worker: false });
});
test.after.always(async () => {
  await svc?.close();
  await offline?.close();
  await vendor?.close();
});

const namesModel = (model: string) => vendor.requests.some((r) => r.body?.model === model);

test.serial('an agent naming a model outside LLM_MODELS is refused (400 body.model), nothing is created, the vendor never sees it', async (t) => {
  const user = await svc.createUser();
  const refused = await svc.request('POST', '/api/agents', { key: user.key, body: { name: 'Big spender', model: EXPENSIVE } });
  t.is(refused.status, 400);
  t.is(refused.body.error.code, 'VALIDATION_ERROR');
  const detail = refused.body.error.details.find((d: any) => d.path === 'body.model');
  t.truthy(detail, JSON.stringify(refused.body));
  t.regex(detail.message, /fake-chat-1/);
  t.regex(detail.message, /fake-chat-mini/);
  t.deepEqual((await svc.request('GET', '/api/agents', { key: user.key })).body.data, [], 'no agent was created');

  // An allowed model is accepted and is the one the vendor is asked for.
  const ok = await svc.request('POST', '/api/agents', { key: user.key, body: { name: 'Thrifty', model: 'fake-chat-mini' } });
  t.is(ok.status, 201, ok.text);
  vendor.chat.push({ text: 'Hello there.' });
  const chat = await readSse(`${svc.url}/api/agents/${ok.body.data.id}/chat`, postJson(user.key, { message: 'Say hello' }));
  t.is(chat.events.at(-1)?.event, 'done', chat.text);
  t.is(vendor.chatRequests().at(-1)!.body.model, 'fake-chat-mini');

  // No other request field smuggles a model name in: chat and 24 bodies are strict, a run takes no body.
  const smuggled = await readSse(`${svc.url}/api/agents/${ok.body.data.id}/chat`, postJson(user.key, { message: 'hi', model: EXPENSIVE }));
  t.is(smuggled.status, 400);
  const prompt = await readSse(
    `${svc.url}/api/tools/execute/@toolshed-examples/text-tools/slugify`,
    postJson(undefined, { prompt: 'Slugify "a b"', model: EXPENSIVE }),
  );
  t.is(prompt.status, 400);
  t.false(namesModel(EXPENSIVE), 'the vendor never saw the expensive model');
});

test.serial('an agent stored with a model no longer allowed cannot chat with it', async (t) => {
  const user = await svc.createUser();
  // As left by an older version, or by an operator who narrowed LLM_MODELS since.
  const [row] = await svc.api.deps.db('agents').insert({ user_id: user.id, name: 'Legacy', model: EXPENSIVE }).returning('id');
  const before = vendor.requests.length;
  const res = await readSse(`${svc.url}/api/agents/${row.id}/chat`, postJson(user.key, { message: 'Say hello' }));
  t.is(res.status, 409, res.text);
  t.regex(res.json.error.message, /not allowed/);
  t.is(vendor.requests.length, before, 'nothing was sent to the vendor');
  t.false(namesModel(EXPENSIVE));
});

test.serial('with the offline provider only its own model name is accepted', async (t) => {
  const user = await offline.createUser();
  const refused = await offline.request('POST', '/api/agents', { key: user.key, body: { name: 'Pretender', model: 'gpt-4o-mini' } });
  t.is(refused.status, 400);
  t.regex(refused.body.error.details.find((d: any) => d.path === 'body.model').message, /offline-agent-v1/);
  t.is((await offline.request('POST', '/api/agents', { key: user.key, body: { name: 'Honest', model: 'offline-agent-v1' } })).status, 201);
  t.is((await offline.request('POST', '/api/agents', { key: user.key, body: { name: 'Default' } })).status, 201, 'no model: the default');
});

function scriptGeneration(n: number, tag: string) {
  const scenarios = Array.from({ length: n }, (_, i) => ({
    prompt: `Slugify "${tag} number ${i}" please`,
    name: `${tag} ${i}`,
    description: '',
    tags: ['slugify'],
  }));
  vendor.chat.push({ text: JSON.stringify({ scenarios }) });
  vendor.embeddings.push({ vectors: scenarios.map((_, i) => [1, i + 1, 0]) });
}

test.serial('generation consumes the daily scenario quota per requested scenario; past it: 429 shape B, the vendor is not called', async (t) => {
  const user = await svc.createUser();
  const c = (await svc.request('POST', '/api/collections', { key: user.key, body: { name: 'Quota gen' } })).body.data;
  for (const toolId of toolIds) await svc.request('POST', `/api/collections/${c.id}/tools`, { key: user.key, body: { toolId } });
  const generate = (count: number) =>
    svc.request('POST', `/api/collections/${c.id}/scenarios/generate`, { key: user.key, body: { count, skipSimilarityCheck: true } });

  scriptGeneration(2, 'first');
  const first = await generate(2);
  t.is(first.status, 201, first.text);
  t.is(first.body.data.scenarios.length, 2);
  t.is(first.body.data.quotaRemaining, 1);

  const before = vendor.requests.length;
  const tooMany = await generate(2);
  t.is(tooMany.status, 429, tooMany.text);
  // One unit left, two needed: refused whole, with the true remainder.
  t.like(tooMany.body, { success: false, error: 'Rate Limit Exceeded', quotaRemaining: 1 });
  t.true(Date.parse(tooMany.body.resetAt) > Date.now());
  t.is(vendor.requests.length, before, 'a refused generation does not call the vendor');

  scriptGeneration(1, 'second');
  const last = await generate(1);
  t.is(last.status, 201, last.text);
  t.is(last.body.data.quotaRemaining, 0);

  const after = vendor.requests.length;
  const spent = await generate(1);
  t.is(spent.status, 429);
  t.like(spent.body, { error: 'Rate Limit Exceeded', quotaRemaining: 0 });
  t.is(vendor.requests.length, after);
  // The quota is the same one scenario runs use: none left for a run either.
  const scenarioId = first.body.data.scenarios[0].scenario.id;
  t.is((await svc.request('POST', `/api/scenarios/${scenarioId}/run?wait=false`, { key: user.key })).status, 429);
  t.is((await svc.request('GET', `/api/collections/${c.id}/scenarios`, { key: user.key })).body.data.scenarios.length, 3);
});
