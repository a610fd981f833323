/**
 * LLM leaks (item 6): whatever the provider answers — a 500 whose body holds internal details, a 401 that echoes the
 * API key, a 400, or no answer at all (closed port) — no run record, run event stream, agent stream (24 anonymous,
 * agent chat) or API error carries the provider's address, its response body or LLM_API_KEY. Users get a stable
 * short message with the code LLM_ERROR; the detail goes to the server log only, without the key.
 * Serial: the API and the worker share one queue of scripted replies.
 */
import test from 'ava';
import path from 'node:path';
import { EXAMPLES_DIR, startService, type Service } from '../helpers/service.js';
import { startFakeLlmVendor, type FakeLlmVendor } from '../helpers/fake-llm-vendor.js';
import { postJson, readSse } from '../helpers/sse.js';

const API_KEY = 'sk-leak-test-0c5e1d9a77';
const MARKER = 'VENDOR-INTERNAL-7f3a';
let vendor: FakeLlmVendor;
let hostPort: string;
let svc: Service;
let user: { key: string; id: string };
let collectionId: string;
let scenarioId: string;
let agentId: string;

test.before(async () => {
  vendor = await startFakeLlmVendor();
  hostPort = new URL(vendor.baseUrl).host;
  svc = await startService({
    sandbox: 'process',
    env: { LLM_BASE_URL: vendor.baseUrl, LLM_API_KEY: API_KEY, LLM_MODEL: 'fake-chat-1', LLM_EMBEDDING_MODEL: 'fake-embed-1' },
  });
  const res = await svc.importPackage(`path:${path.join(EXAMPLES_DIR, 'text-tools')}`);
  if (res.status !== 201) throw new Error(res.text);
  user = await svc.createUser({ tier: 'pro' });
  const c = (await svc.request('POST', '/api/collections', { key: user.key, body: { name: 'Leaky vendor' } })).body.data;
  collectionId = c.id;
  for (const tool of res.body.data.tools) await svc.request('POST', `/api/collections/${c.id}/tools`, { key: user.key, body: { toolId: tool.id } });
  vendor.embeddings.push({ vectors: [[0.6, 0.8, 0]] });
  const s = await svc.request('POST', '/api/scenarios', { key: user.key, body: { collectionId: c.id, prompt: 'Slugify "Hello World" with slugify' } });
  if (s.status !== 201) throw new Error(s.text);
  scenarioId = s.body.data.id;
  const a = await svc.request('POST', '/api/agents', { key: user.key, body: { name: 'Chatty', collectionIds: [c.id] } });
  if (a.status !== 201) throw new Error(a.text);
  agentId = a.body.data.id;
});
test.after.always(async () => {
  await svc?.close();
  await vendor?.close();
});

/** Everything a user can see of one failure, as text: the run record (as returned and as read back), its events, streams and errors. */
async function everythingUsersSee(): Promise<{ texts: string[]; runError: any; streamErrors: any[]; generation: any }> {
  const run = await svc.request('POST', `/api/scenarios/${scenarioId}/run`, { key: user.key });
  const runId = run.body.data.runId;
  const readBack = await svc.request('GET', `/api/scenario-runs/${runId}`, { key: user.key });
  const runEvents = await readSse(`${svc.url}/api/scenario-runs/${runId}/events`, { headers: { authorization: `Bearer ${user.key}` } });
  const history = await svc.request('GET', `/api/scenarios/${scenarioId}/runs`, { key: user.key });
  const anonymous = await readSse(`${svc.url}/api/tools/execute/@toolshed-examples/text-tools/slugify`, postJson(undefined, { prompt: 'Slugify "x y"' }));
  const chat = await readSse(`${svc.url}/api/agents/${agentId}/chat`, postJson(user.key, { message: 'Slugify "x y"' }));
  const generation = await svc.request('POST', `/api/collections/${collectionId}/scenarios/generate`, { key: user.key, body: { count: 1 } });
  return {
    texts: [run.text, readBack.text, runEvents.text, history.text, anonymous.text, chat.text, generation.text],
    runError: readBack.body.data.error,
    streamErrors: [anonymous, chat].map((s) => s.events.find((e) => e.event === 'error')?.data),
    generation,
  };
}

function assertNothingLeaks(t: any, texts: string[]) {
  for (const text of texts) {
    t.false(text.includes(hostPort), `the provider's address leaked: ${text.slice(0, 400)}`);
    t.false(text.includes(MARKER), `the provider's body leaked: ${text.slice(0, 400)}`);
    t.false(text.includes(API_KEY), 'the API key leaked');
  }
}

test.serial('a vendor 500 whose body holds internal details: stable messages, nothing of the vendor reaches users', async (t) => {
  const body = `${MARKER}: upstream 10.20.30.40:8443 refused, key ${API_KEY}`;
  // Each vendor call is tried three times (the SDK's retries); four calls fail: run, 24, chat, generation. The vendor
  // asks for its retries after 100 ms (retry-after-ms), not the SDK's 2 + 4 s per call.
  for (let i = 0; i < 12; i++) vendor.chat.push({ error: { status: 500, message: body, retryAfterMs: 100 } });
  const seen = await everythingUsersSee();
  assertNothingLeaks(t, seen.texts);
  t.deepEqual(seen.runError, { code: 'LLM_ERROR', message: 'LLM provider unavailable (status 500)' });
  for (const e of seen.streamErrors) t.deepEqual(e, { code: 'LLM_ERROR', message: 'LLM provider unavailable (status 500)' });
  t.is(seen.generation.status, 500);
  t.like(seen.generation.body, { success: false, message: 'LLM provider unavailable (status 500)' });
  t.is(vendor.chat.length, 0, 'every scripted failure was consumed');
  // The operator still has the detail, without the key.
  t.true(svc.logs().includes(MARKER), 'the detail is in the server log');
  t.false(svc.logs().includes(API_KEY), 'the key is not in the server log');
});

test.serial('a vendor 401 / 400 echoing the key: "rejected the request (status N)", never a 400 of ours', async (t) => {
  vendor.chat.push({ error: { status: 401, message: `${MARKER} Incorrect API key provided: ${API_KEY}` } });
  const anonymous = await readSse(`${svc.url}/api/tools/execute/@toolshed-examples/text-tools/slugify`, postJson(undefined, { prompt: 'Slugify "x y"' }));
  t.deepEqual(anonymous.events.find((e) => e.event === 'error')?.data, { code: 'LLM_ERROR', message: 'LLM provider rejected the request (status 401)' });
  // A vendor 400 (say, a prompt too long for the model) is not the caller's validation error.
  vendor.chat.push({ error: { status: 400, message: `${MARKER} context length exceeded at ${hostPort}` } });
  const generation = await svc.request('POST', `/api/collections/${collectionId}/scenarios/generate`, { key: user.key, body: { count: 1 } });
  t.is(generation.status, 500, generation.text);
  t.is(generation.body.message, 'LLM provider rejected the request (status 400)');
  assertNothingLeaks(t, [anonymous.text, generation.text]);
  t.is(vendor.chat.length, 0);
});

test.serial('the provider unreachable (closed port): "LLM provider unavailable", no address anywhere', async (t) => {
  await vendor.close();
  const seen = await everythingUsersSee();
  assertNothingLeaks(t, seen.texts);
  t.deepEqual(seen.runError, { code: 'LLM_ERROR', message: 'LLM provider unavailable' });
  for (const e of seen.streamErrors) t.deepEqual(e, { code: 'LLM_ERROR', message: 'LLM provider unavailable' });
  t.like(seen.generation.body, { success: false, message: 'LLM provider unavailable' });
  t.true(svc.logs().includes(hostPort), 'the operator sees which address failed');
});
