import test from 'ava';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { FIXTURES_DIR, startService, type Service } from './helpers/service.js';
import { waitFor, waitUntil } from './helpers/wait.js';

/**
 * MCP cancellation and 2025-11-25 tasks (api/mcp/tasks.ts), with the 1.x SDK's own client: `notifications/cancelled`
 * cancels the execution of the call it names, a client that goes away cancels nothing, and a task-augmented
 * tools/call is the execution as a task (tasks/get, tasks/result, tasks/cancel). A client that asks nothing is served
 * as before.
 */
let svc: Service;
let owner: { key: string; username: string; id: string };
let other: { key: string; username: string; id: string };
let url: URL;
const SLEEPY = '@fixtures/echo-tools::sleepy';
const ENV = { 'X-Tool-Env-ECHO_SECRET': 's3cret' };

test.before(async () => {
  svc = await startService({ sandbox: 'process', env: { EXECUTION_TIMEOUT_MS: '120000' } });
  const res = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'packages', 'echo-tools')}`);
  if (res.status !== 201) throw new Error(res.text);
  owner = await svc.createUser({ username: 'tasks_owner' });
  other = await svc.createUser({ username: 'tasks_other' });
  const c = await svc.createCollection(owner.key, { name: 'Sleepers', isPublic: true }, [SLEEPY]);
  url = new URL(`${svc.url}/api/mcp/${owner.username}/${c.uid}/http`);
});
test.after.always(() => svc?.close());

async function connect(key: string, protocolVersion?: string) {
  const client = new Client({ name: 'toolshed-tests-tasks', version: '1.0.0' }, protocolVersion ? {} : {});
  const headers: Record<string, string> = { authorization: `Bearer ${key}`, ...ENV };
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers } });
  if (protocolVersion) transport.setProtocolVersion?.(protocolVersion);
  await client.connect(transport);
  return client;
}

const db = () => svc.api.deps.db;
/** The newest execution of the sleepy tool by this user: what an MCP client's call queued. */
const newest = async (userId: string, after: Date) =>
  db()('executions').where({ user_id: userId, origin: 'mcp' }).where('created_at', '>', after).orderBy('created_at', 'desc').first();
const untilStatus = (id: string, done: (e: any) => boolean, what: string) => waitUntil(() => db()('executions').where({ id }).first(), done, what);
const textOf = (r: CallToolResult) => (r.content[0] as { type: 'text'; text: string }).text;

test.serial('2025 era: notifications/cancelled with the requestId of a running tools/call cancels its execution (failed, CANCELLED)', async (t) => {
  const client = await connect(owner.key);
  const since = new Date(Date.now() - 1000);
  const abort = new AbortController();
  const call = client.callTool({ name: 'sleepy', arguments: { ms: 60_000 } }, CallToolResultSchema, { signal: abort.signal, timeout: 300_000 });
  call.catch(() => undefined);
  const e = await waitFor(async () => {
    const row = await newest(owner.id, since);
    return row?.status === 'running' ? row : undefined;
  }, 'the call running');
  // The SDK sends notifications/cancelled naming the request's id.
  abort.abort('the user pressed stop');
  await t.throwsAsync(call);
  const final = await untilStatus(e.id, (r) => r.status !== 'running', 'the execution stopped');
  t.is(final.status, 'failed');
  t.is(final.error.code, 'CANCELLED');
  t.true(final.execution_time_ms < 60_000);
  await client.close();
});

test.serial('2025 era: a client that goes away cancels nothing: its execution runs to the end and stays pollable', async (t) => {
  const since = new Date(Date.now() - 1000);
  const abort = new AbortController();
  const call = fetch(url, {
    method: 'POST',
    signal: abort.signal,
    headers: { authorization: `Bearer ${owner.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...ENV },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'sleepy', arguments: { ms: 2500 } } }),
  });
  call.catch(() => undefined);
  const e = await waitFor(async () => {
    const row = await newest(owner.id, since);
    return row?.status === 'running' ? row : undefined;
  }, 'the call running');
  abort.abort();
  const final = await untilStatus(e.id, (r) => r.status !== 'running', 'the execution ended');
  t.is(final.status, 'succeeded');
  const polled = await svc.request('GET', `/api/executions/${e.id}`, { key: owner.key });
  t.like(polled.body.data, { status: 'succeeded', result: { slept: 2500 } });
});

test.serial('2025-11-25 tasks: a task-augmented tools/call is the execution as a task; tasks/get polls it, tasks/result gives the result', async (t) => {
  const client = await connect(owner.key);
  t.truthy(client.getServerCapabilities()?.tasks?.requests?.tools?.call, 'the capability is advertised');
  const listed = await client.listTools();
  t.is(listed.tools.find((x) => x.name === 'sleepy')?.execution?.taskSupport, 'optional');
  const seen: string[] = [];
  let taskId = '';
  let result: CallToolResult | undefined;
  for await (const m of client.experimental.tasks.callToolStream({ name: 'sleepy', arguments: { ms: 1500 } }, CallToolResultSchema, {
    task: { ttl: 60_000 },
  })) {
    seen.push(m.type);
    if (m.type === 'taskCreated') taskId = m.task.taskId;
    if (m.type === 'result') result = m.result as CallToolResult;
    if (m.type === 'error') t.fail(String(m.error));
  }
  t.is(seen[0], 'taskCreated');
  t.true(seen.includes('taskStatus'));
  // The task is the execution: its id polls over REST too.
  const polled = await svc.request('GET', `/api/executions/${taskId}`, { key: owner.key });
  t.like(polled.body.data, { id: taskId, status: 'succeeded', result: { slept: 1500 } });
  t.deepEqual(JSON.parse(textOf(result!)), { slept: 1500 });
  t.is((await client.experimental.tasks.getTask(taskId)).status, 'completed');
  await client.close();
});

test.serial('2025-11-25 tasks: tasks/cancel stops a working task; another caller cannot see or cancel it', async (t) => {
  const client = await connect(owner.key);
  const created = await client.request(
    { method: 'tools/call', params: { name: 'sleepy', arguments: { ms: 60_000 }, task: { ttl: 60_000 } } },
    (await import('@modelcontextprotocol/sdk/experimental/tasks/types.js')).CreateTaskResultSchema,
  );
  const taskId = created.task.taskId;
  t.is(created.task.status, 'working');
  await untilStatus(taskId, (r) => r.status === 'running', 'the task running');
  const stranger = await connect(other.key);
  await t.throwsAsync(stranger.experimental.tasks.getTask(taskId), { message: /not found/i });
  await t.throwsAsync(stranger.experimental.tasks.cancelTask(taskId), { message: /not found/i });
  t.is((await db()('executions').where({ id: taskId }).first()).status, 'running', "the stranger's cancel changed nothing");
  const cancelled = await client.experimental.tasks.cancelTask(taskId);
  t.is(cancelled.status, 'cancelled');
  const final = await untilStatus(taskId, (r) => r.status !== 'running', 'the task stopped');
  t.like(final, { status: 'failed', error: { code: 'CANCELLED' } });
  await t.throwsAsync(client.experimental.tasks.cancelTask(taskId), { message: /terminal/ });
  await client.close();
  await stranger.close();
});

test.serial('a client that asks for no task gets the result as before; one of 2025-06-18 is offered no tasks', async (t) => {
  const client = await connect(owner.key);
  const plain = (await client.callTool({ name: 'sleepy', arguments: { ms: 1 } })) as CallToolResult;
  t.deepEqual(JSON.parse(textOf(plain)), { slept: 1 });
  await client.close();
  const res = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${owner.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'old', version: '1' } },
    }),
  });
  const body = await res.json();
  t.is(body.result.protocolVersion, '2025-06-18');
  t.is(body.result.capabilities.tasks, undefined);
  // A 2025-06-18 call carrying `task` is served as a plain call (the task dropped), as before.
  const call = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${owner.key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
      ...ENV,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'sleepy', arguments: { ms: 1 }, task: { ttl: 1000 } } }),
  });
  const answered = await call.json();
  t.deepEqual(JSON.parse(answered.result.content[0].text), { slept: 1 });
});

// ---- 2026-07-28: the io.modelcontextprotocol/tasks extension ----

const MODERN = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
let rpcId = 100;

/** One 2026-07-28 request as the wire has it (envelope in `_meta`, Mcp-Method / Mcp-Name headers). */
async function modern(key: string, method: string, params: Record<string, unknown>, o: { tasks?: boolean; name?: string } = {}) {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': { name: 'toolshed-tests-2026', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': o.tasks === false ? {} : { extensions: { [TASKS]: {} } },
  };
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': method,
      ...(o.name ? { 'mcp-name': o.name } : {}),
      ...ENV,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method, params: { ...params, _meta: meta } }),
  });
  return res.json();
}

test.serial('2026-07-28: server/discover advertises the tasks extension (the 2.x client reads it)', async (t) => {
  const { Client: ModernClient, StreamableHTTPClientTransport: ModernTransport } = await import('@modelcontextprotocol/client');
  const client = new ModernClient({ name: 'toolshed-tests-2026', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } });
  await client.connect(new ModernTransport(url, { requestInit: { headers: { authorization: `Bearer ${owner.key}` } } }));
  t.deepEqual((client.getServerCapabilities() as { extensions?: Record<string, unknown> })?.extensions?.[TASKS], {});
  await client.close();
});

test.serial('2026-07-28 tasks: a long call is a task (the execution); tasks/get polls it to its result inline', async (t) => {
  const created = await modern(owner.key, 'tools/call', { name: 'sleepy', arguments: { ms: 4000 } }, { name: 'sleepy' });
  t.is(created.result?.resultType, 'task', JSON.stringify(created));
  const taskId = created.result.taskId;
  t.is(created.result.status, 'working');
  t.like(await db()('executions').where({ id: taskId }).first(), { origin: 'mcp', user_id: owner.id }, 'the task id is the execution id');
  const done = await waitUntil(
    () => modern(owner.key, 'tasks/get', { taskId }, { name: taskId }),
    (r) => r.result?.status !== 'working',
    'the task completed',
  );
  t.is(done.result.status, 'completed', JSON.stringify(done));
  t.is(done.result.resultType, 'complete');
  t.deepEqual(JSON.parse(done.result.result.content[0].text), { slept: 4000 });
  // A short call is answered with its result, as before, even to a client that takes tasks.
  const quick = await modern(owner.key, 'tools/call', { name: 'sleepy', arguments: { ms: 1 } }, { name: 'sleepy' });
  t.is(quick.result.resultType, 'complete');
  t.deepEqual(JSON.parse(quick.result.content[0].text), { slept: 1 });
  // A client that does not declare the extension never gets a task.
  const plain = await modern(owner.key, 'tools/call', { name: 'sleepy', arguments: { ms: 2500 } }, { name: 'sleepy', tasks: false });
  t.is(plain.result.resultType, 'complete', JSON.stringify(plain));
  t.deepEqual(JSON.parse(plain.result.content[0].text), { slept: 2500 });
});

test.serial("2026-07-28 tasks: tasks/cancel cancels the caller's own task; a stranger's get is an error and its cancel changes nothing", async (t) => {
  const created = await modern(owner.key, 'tools/call', { name: 'sleepy', arguments: { ms: 60_000 } }, { name: 'sleepy' });
  const taskId = created.result.taskId;
  await untilStatus(taskId, (r) => r.status === 'running', 'the task running');
  const peek = await modern(other.key, 'tasks/get', { taskId }, { name: taskId });
  t.is(peek.error?.code, -32602, JSON.stringify(peek));
  const strangerCancel = await modern(other.key, 'tasks/cancel', { taskId }, { name: taskId });
  t.is(strangerCancel.result?.resultType, 'complete', 'acknowledged, as the extension says');
  t.is((await db()('executions').where({ id: taskId }).first()).status, 'running');
  const ack = await modern(owner.key, 'tasks/cancel', { taskId }, { name: taskId });
  t.is(ack.result?.resultType, 'complete', JSON.stringify(ack));
  const cancelled = await waitUntil(
    () => modern(owner.key, 'tasks/get', { taskId }, { name: taskId }),
    (r) => r.result?.status !== 'working',
    'the task cancelled',
  );
  t.is(cancelled.result.status, 'cancelled');
  t.like(await db()('executions').where({ id: taskId }).first(), { status: 'failed', error: { code: 'CANCELLED' } });
});

test.serial('2026-07-28: a client that closes its response stream cancels the call (the transport says a disconnect is the cancel)', async (t) => {
  const since = new Date(Date.now() - 1000);
  const abort = new AbortController();
  const meta = {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': { name: 'toolshed-tests-2026', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  const call = fetch(url, {
    method: 'POST',
    signal: abort.signal,
    headers: {
      authorization: `Bearer ${owner.key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': 'tools/call',
      'mcp-name': 'sleepy',
      ...ENV,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method: 'tools/call', params: { name: 'sleepy', arguments: { ms: 60_000 }, _meta: meta } }),
  });
  call.catch(() => undefined);
  const e = await waitFor(async () => {
    const row = await newest(owner.id, since);
    return row?.status === 'running' ? row : undefined;
  }, 'the call running');
  abort.abort();
  const final = await untilStatus(e.id, (r) => r.status !== 'running', 'the execution stopped');
  t.like(final, { status: 'failed', error: { code: 'CANCELLED' } });
  t.true(final.execution_time_ms < 60_000);
});
