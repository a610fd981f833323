/**
 * The agent execution stream (24) and agents (create, list, chat) with the offline provider, the real queue and
 * sandbox: event order, explicit parameters, tool errors, refusals before the stream (shape A), env never in events.
 */
import test from 'ava';
import path from 'node:path';
import { EXAMPLES_DIR, FIXTURES_DIR, startService, type Service } from './helpers/service.js';
import { postJson, readSse, type SseEvent } from './helpers/sse.js';

type User = { key: string; id: string; username: string };
let svc: Service;
let alice: User;
let bob: User;
const SECRET = 'echo-secret-value-4711';

test.before(async () => {
  svc = await startService({ sandbox: 'process' });
  for (const source of [
    path.join(EXAMPLES_DIR, 'text-tools'),
    path.join(EXAMPLES_DIR, 'data-tools'),
    path.join(FIXTURES_DIR, 'packages', 'echo-tools'),
    path.join(FIXTURES_DIR, 'packages', 'load-fails'),
  ]) {
    const res = await svc.importPackage(`path:${source}`);
    if (res.status !== 201) throw new Error(res.text);
  }
  alice = await svc.createUser();
  bob = await svc.createUser();
});
test.after.always(() => svc?.close());

const promptExecute = (slug: string, body: unknown, key?: string) => readSse(`${svc.url}/api/tools/execute/${slug}`, postJson(key, body));
const names = (events: SseEvent[]) => events.map((e) => e.event);
/** tools.discovered, then started/completed pairs, then message.delta chunks, then done. */
function assertOrder(t: any, events: SseEvent[], calls: number) {
  const seq = names(events);
  t.is(seq[0], 'tools.discovered');
  t.deepEqual(seq.slice(1, 1 + 2 * calls), Array.from({ length: calls }, () => ['tool.started', 'tool.completed']).flat());
  const rest = seq.slice(1 + 2 * calls);
  t.true(rest.length >= 2);
  t.is(rest.at(-1), 'done');
  t.true(
    rest.slice(0, -1).every((e) => e === 'message.delta'),
    rest.join(','),
  );
  t.deepEqual(
    events.map((e) => e.id),
    events.map((_, i) => i + 1),
    'ids 1..n',
  );
}

test('24: prompt → tools.discovered, tool.started, tool.completed, message.delta chunks, done', async (t) => {
  const res = await promptExecute('@toolshed-examples/text-tools/slugify', { prompt: 'Make a URL slug of "Hello Big World"' });
  t.is(res.status, 200);
  t.is(res.contentType, 'text/event-stream; charset=utf-8');
  assertOrder(t, res.events, 1);
  const [discovered, started, completed] = res.events;
  t.is(discovered.data.tools.length, 1);
  t.like(discovered.data.tools[0], { name: 'slugify' });
  t.like(started.data, { toolId: discovered.data.tools[0].toolId, params: { text: 'Hello Big World' } });
  t.regex(started.data.executionId, /^[0-9a-f-]{36}$/);
  t.like(completed.data, { executionId: started.data.executionId, toolId: started.data.toolId, output: { slug: 'hello-big-world' } });
  t.is(typeof completed.data.executionTimeMs, 'number');
  const deltas = res.events.filter((e) => e.event === 'message.delta');
  t.true(deltas.length >= 2, 'the answer arrives in chunks');
  t.regex(deltas.map((e) => e.data.text).join(''), /hello-big-world/);
  const done = res.events.at(-1)!.data;
  for (const k of ['inputTokens', 'outputTokens', 'totalTokens']) t.is(typeof done.usage[k], 'number');
  const execution = await svc.request('GET', `/api/executions/${started.data.executionId}`);
  t.is(execution.body.data.status, 'succeeded', 'the call went through the queue and the sandbox');
});

test('24: explicit parameters win over what the agent fills in', async (t) => {
  const res = await promptExecute('@toolshed-examples/text-tools/slugify', { prompt: 'Slugify "Hello World"', parameters: { separator: '_' } });
  const completed = res.events.find((e) => e.event === 'tool.completed')!;
  t.like(completed.data, { output: { slug: 'hello_world' } });
});

test('24: a tool error is a tool.completed with error; env values appear in no event', async (t) => {
  const thrown = await promptExecute('@fixtures/echo-tools/failWithSecret', { prompt: 'Run failWithSecret please', env: { ECHO_SECRET: SECRET } });
  assertOrder(t, thrown.events, 1);
  const completed = thrown.events.find((e) => e.event === 'tool.completed')!;
  t.is(completed.data.error.code, 'TOOL_ERROR');
  t.false('output' in completed.data);
  const echoed = await promptExecute('@fixtures/echo-tools/echoSecret', { prompt: 'Echo with prefix "key"', env: { ECHO_SECRET: SECRET } });
  t.like(echoed.events.find((e) => e.event === 'tool.completed')!.data, { output: { message: 'key:[redacted]' } });
  for (const res of [thrown, echoed]) t.false(res.text.includes(SECRET), 'the secret is nowhere in the stream');
});

test('24: refusals before the stream are plain 4xx in shape A', async (t) => {
  const unknown = await promptExecute('@toolshed-examples/text-tools/nope', { prompt: 'Slugify "x"' });
  t.is(unknown.status, 404);
  t.is(unknown.json.error.code, 'NOT_FOUND');
  for (const body of [{ prompt: '' }, { prompt: 'Slugify "x"', params: {} }, { prompt: 42 }, { prompt: 'Slugify "x"', env: { 'bad name': 'x' } }]) {
    const res = await promptExecute('@toolshed-examples/text-tools/slugify', body);
    t.is(res.status, 400, JSON.stringify(body));
    t.is(res.json.error.code, 'VALIDATION_ERROR');
  }
  const broken = await promptExecute('@fixtures/load-fails/doThing', { prompt: 'Do the thing' });
  t.is(broken.status, 422);
  const noEnv = await promptExecute('@fixtures/echo-tools/echoSecret', { prompt: 'Echo with prefix "key"' });
  t.is(noEnv.status, 422);
  t.is(noEnv.json.error.message, 'Missing required env: ECHO_SECRET');
  t.is(
    (await svc.request('POST', '/api/tools/execute/@toolshed-examples/text-tools/slugify', { body: { params: { text: 'A b' } } })).body.result.slug,
    'a-b',
    '25 still answers params bodies',
  );
});

async function collection(key: string, body: Record<string, unknown>, tools: string[]) {
  const c = (await svc.request('POST', '/api/collections', { key, body })).body.data;
  for (const toolId of tools) await svc.request('POST', `/api/collections/${c.uid}/tools`, { key, body: { toolId } });
  return c as { id: string; uid: string; name: string };
}

test('agents: create (201), list the caller’s, collections must be visible, validation', async (t) => {
  const text = await collection(alice.key, { name: 'Agent text' }, ['@toolshed-examples/text-tools/slugify']);
  const hidden = await collection(bob.key, { name: 'Bob hidden', isPublic: false }, []);
  const res = await svc.request('POST', '/api/agents', {
    key: alice.key,
    body: { name: 'Writer', description: 'Writes slugs', systemPrompt: 'Be brief.', collectionIds: [text.uid], model: 'offline-agent-v1' },
  });
  t.is(res.status, 201);
  const a = res.body.data;
  t.like(a, { name: 'Writer', description: 'Writes slugs', systemPrompt: 'Be brief.', model: 'offline-agent-v1' });
  t.deepEqual(a.collections, [{ id: text.id, uid: text.uid, name: text.name }]);
  t.truthy(Date.parse(a.createdAt));
  const bare = await svc.request('POST', '/api/agents', { key: alice.key, body: { name: 'Bare' } });
  t.like(bare.body.data, { description: null, systemPrompt: null, model: null, collections: [] });
  t.is((await svc.request('POST', '/api/agents', { key: alice.key, body: { name: 'Spy', collectionIds: [hidden.id] } })).status, 404);
  t.is((await svc.request('POST', '/api/agents', { key: alice.key, body: { name: '' } })).status, 400);
  t.is((await svc.request('POST', '/api/agents', { key: alice.key, body: { name: 'x', systemPrompt: 'y'.repeat(8001) } })).status, 400);
  t.is((await svc.request('POST', '/api/agents', { body: { name: 'Anon' } })).status, 401);
  const list = await svc.request('GET', '/api/agents', { key: alice.key });
  const mine = list.body.data.map((x: any) => x.id).filter((id: string) => [a.id, bare.body.data.id].includes(id));
  t.deepEqual(mine, [bare.body.data.id, a.id], 'newest first');
  t.deepEqual(
    list.body.data.find((x: any) => x.id === a.id),
    a,
  );
  t.deepEqual((await svc.request('GET', '/api/agents', { key: bob.key })).body.data, []);
  t.is((await svc.request('GET', `/api/agents/${a.id}`, { key: bob.key })).status, 404);
});

test('agents: chat streams like 24 with the tools of the agent’s collections', async (t) => {
  const text = await collection(alice.key, { name: 'Chat text' }, ['@toolshed-examples/text-tools/slugify', '@toolshed-examples/text-tools/textStatistics']);
  const data = await collection(alice.key, { name: 'Chat data' }, ['@toolshed-examples/data-tools/csvToJson']);
  const a = (await svc.request('POST', '/api/agents', { key: alice.key, body: { name: 'Helper', collectionIds: [text.id, data.id] } })).body.data;
  const res = await readSse(`${svc.url}/api/agents/${a.id}/chat`, postJson(alice.key, { message: 'Slugify "Agents Are Here" with slugify' }));
  t.is(res.status, 200);
  assertOrder(t, res.events, 1);
  t.deepEqual(res.events[0].data.tools.map((x: any) => x.name).sort(), ['csvToJson', 'slugify', 'textStatistics']);
  t.like(res.events.find((e) => e.event === 'tool.completed')!.data, { output: { slug: 'agents-are-here' } });
  const other = await readSse(`${svc.url}/api/agents/${a.id}/chat`, postJson(bob.key, { message: 'Slugify "x y" now' }));
  t.is(other.status, 404);
  const empty = await readSse(`${svc.url}/api/agents/${a.id}/chat`, postJson(alice.key, { message: '' }));
  t.is(empty.status, 400);
  const noTools = (await svc.request('POST', '/api/agents', { key: alice.key, body: { name: 'Toolless' } })).body.data;
  const idle = await readSse(`${svc.url}/api/agents/${noTools.id}/chat`, postJson(alice.key, { message: 'Slugify "x y" now' }));
  t.deepEqual(names(idle.events)[0], 'tools.discovered');
  t.is(names(idle.events).at(-1), 'done');
  t.false(names(idle.events).includes('tool.started'));
});

test('agents: a collection its owner made private since is left out of the agent, name and all, until public again', async (t) => {
  const shared = await collection(bob.key, { name: 'Bob shares' }, ['@toolshed-examples/text-tools/slugify']);
  const a = (await svc.request('POST', '/api/agents', { key: alice.key, body: { name: 'Borrower', collectionIds: [shared.id] } })).body.data;
  t.deepEqual(
    a.collections.map((c: any) => c.id),
    [shared.id],
  );
  const hide = await svc.request('PATCH', `/api/collections/${shared.id}`, { key: bob.key, body: { isPublic: false, name: 'Secret Project Name' } });
  t.is(hide.status, 200, hide.text);
  const one = await svc.request('GET', `/api/agents/${a.id}`, { key: alice.key });
  t.deepEqual(one.body.data.collections, []);
  const listed = (await svc.request('GET', '/api/agents', { key: alice.key })).body.data.find((x: any) => x.id === a.id);
  t.deepEqual(listed.collections, []);
  t.false(JSON.stringify(listed).includes('Secret Project Name'));
  const chat = await readSse(`${svc.url}/api/agents/${a.id}/chat`, postJson(alice.key, { message: 'Slugify "x y" now' }));
  t.deepEqual(chat.events[0].data.tools, [], 'no tools from it either');
  await svc.request('PATCH', `/api/collections/${shared.id}`, { key: bob.key, body: { isPublic: true } });
  const back = await svc.request('GET', `/api/agents/${a.id}`, { key: alice.key });
  t.deepEqual(back.body.data.collections, [{ id: shared.id, uid: shared.uid, name: 'Secret Project Name' }]);
});
