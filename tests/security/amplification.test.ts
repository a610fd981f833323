import test from 'ava';
import path from 'node:path';
import { FIXTURES_DIR, startService, type Service } from '../helpers/service.js';
import { waitUntil } from '../helpers/wait.js';
import { postJson, readSse } from '../helpers/sse.js';

// One caller must not be able to multiply its share: JSON-RPC batches, extra keys, and unbounded queued work.
let svc: Service;
let owner: { key: string; username: string };
const MCP_ACCEPT = { accept: 'application/json, text/event-stream' };
const SLOW = '@fixtures/nul-tools/slow';

test.before(async () => {
  svc = await startService({
    sandbox: 'process',
    env: { MAX_KEYS_PER_USER: '3', MAX_ACTIVE_EXECUTIONS: '2', RATE_LIMIT_FREE_MINUTE: '10', WORKER_CONCURRENCY: '2' },
  });
  const res = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'security', 'nul-tools')}`);
  if (res.status !== 201) throw new Error(res.text);
  owner = await svc.createUser({ tier: 'pro' });
  const c = await svc.request('POST', '/api/collections', { key: owner.key, body: { name: 'Slow tools', uid: 'slow-tools', isPublic: true } });
  if (c.status !== 201) throw new Error(c.text);
  const add = await svc.request('POST', '/api/collections/slow-tools/tools', { key: owner.key, body: { toolId: SLOW } });
  if (add.status !== 201) throw new Error(add.text);
});
test.after.always(() => svc?.close());

const executionCount = async () => Number((await svc.api.deps.db('executions').count('* as n'))[0].n);
const executionsOf = async (userId: string) => Number((await svc.api.deps.db('executions').where({ user_id: userId }).count('* as n'))[0].n);
const startSlow = (key: string | undefined, ms = 4000) => svc.request('POST', `/api/tools/execute/${SLOW}?wait=false`, { key, body: { params: { ms } } });
const mcpPath = () => `/api/mcp/${owner.username}/slow-tools/http`;

async function waitUntilIdle(_key: string) {
  await waitUntil(
    async () => Number((await svc.api.deps.db('executions').whereIn('status', ['queued', 'running']).count('* as n'))[0].n),
    (n) => n === 0,
    'no execution to be queued or running',
  );
}

test.serial('an MCP JSON-RPC batch is refused whole and queues nothing', async (t) => {
  const before = await executionCount();
  const batch = Array.from({ length: 200 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'slow', arguments: { ms: 1 } } }));
  const res = await svc.request('POST', mcpPath(), { body: batch, headers: MCP_ACCEPT });
  t.is(res.status, 400);
  t.is(res.body.error.code, -32600);
  t.regex(res.body.error.message, /batch/i);
  t.is(await executionCount(), before, 'not one execution was queued');
  // A single message still works.
  const one = await svc.request('POST', mcpPath(), { body: { jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers: MCP_ACCEPT });
  t.is(one.status, 200);
  t.is(one.body.result.tools[0].name, 'slow');
});

test.serial('a user holds at most MAX_KEYS_PER_USER keys, even when asking in parallel', async (t) => {
  const u = await svc.createUser({ tier: 'pro' }); // comes with its first key
  const burst = await Promise.all(Array.from({ length: 6 }, () => svc.request('POST', '/api/keys', { key: u.key, body: { name: 'extra' } })));
  const statuses = burst.map((r) => r.status).sort();
  t.deepEqual(statuses, [201, 201, 409, 409, 409, 409]);
  const refused = burst.find((r) => r.status === 409)!;
  t.is(refused.body.error.code, 'CONFLICT');
  t.regex(refused.body.error.message, /at most 3/);
  const keys = await svc.request('GET', '/api/keys', { key: u.key });
  t.is(keys.body.data.length, 3);
  const extra = burst.find((r) => r.status === 201)!.body.data;
  t.is((await svc.request('DELETE', `/api/keys/${extra.id}`, { key: u.key })).status, 200);
  t.is((await svc.request('POST', '/api/keys', { key: u.key, body: {} })).status, 201, 'a revoked key frees its place');
});

test.serial("a user's keys share one rate-limit budget", async (t) => {
  const u = await svc.createUser(); // free: 10 a minute in this file
  const keys = [u.key];
  for (let i = 0; i < 2; i++) keys.push((await svc.request('POST', '/api/keys', { key: u.key, body: {} })).body.data.key);
  // The two key creations above cost 2 points; 8 remain, whichever key asks.
  const statuses: number[] = [];
  for (let i = 0; i < 9; i++) statuses.push((await svc.request('GET', '/api/tools', { key: keys[i % 3] })).status);
  t.deepEqual(statuses, [200, 200, 200, 200, 200, 200, 200, 200, 429]);
  const other = await svc.createUser();
  t.is((await svc.request('GET', '/api/tools', { key: other.key })).status, 200, 'another user has its own budget');
});

test.serial('a caller may have at most MAX_ACTIVE_EXECUTIONS queued or running; a burst cannot overshoot', async (t) => {
  const u = await svc.createUser({ tier: 'pro' });
  const burst = await Promise.all(Array.from({ length: 6 }, () => startSlow(u.key, 8000)));
  t.deepEqual(burst.map((r) => r.status).sort(), [202, 202, 429, 429, 429, 429]);
  const refused = burst.find((r) => r.status === 429)!;
  t.is(refused.body.error.code, 'RATE_LIMITED');
  t.is(refused.body.error.message, 'Retry after 1 seconds');
  t.is(refused.headers.get('retry-after'), '1');
  t.is(await executionsOf(u.id), 2, 'refused calls queued nothing');

  const other = await svc.createUser({ tier: 'pro' });
  t.is((await startSlow(other.key, 1)).status, 202, 'another user is not affected');

  // The same cap holds through the collection's MCP endpoint.
  const call = await svc.request('POST', mcpPath(), {
    key: u.key,
    body: { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'slow', arguments: { ms: 1 } } },
    headers: MCP_ACCEPT,
  });
  t.is(call.status, 200);
  t.true(call.body.result.isError);
  t.regex(call.body.result.content[0].text, /Retry after/);

  // And through an agent (an execute with a prompt): its tool call is refused, not queued past the cap.
  const agent = await readSse(`${svc.url}/api/tools/execute/${SLOW}`, postJson(u.key, { prompt: 'Wait with slow for 1 ms', parameters: { ms: 1 } }));
  const completed = agent.events.find((e) => e.event === 'tool.completed');
  t.is(completed?.data.error?.code, 'RATE_LIMITED', JSON.stringify(agent.events.map((e) => e.event)));
  t.is(await executionsOf(u.id), 2, 'the agent queued nothing past the cap');

  await waitUntilIdle(u.key);
  t.is((await startSlow(u.key, 1)).status, 202, 'once they finish, the caller may run again');
  await waitUntilIdle(u.key);
});

test.serial('anonymous callers are capped per client address', async (t) => {
  const burst = await Promise.all(Array.from({ length: 4 }, () => startSlow(undefined, 3000)));
  t.deepEqual(burst.map((r) => r.status).sort(), [202, 202, 429, 429]);
  await waitUntilIdle('anonymous');
});
