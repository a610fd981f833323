/**
 * Env is scoped per package: two fixture packages declare SHARED_SECRET (A requires it, B has it optional) and each
 * tool returns what it received, reversed (past the redaction of exact values). A value given for A never reaches B,
 * on every path that takes env: the MCP endpoint of a collection (tools/call, both header spellings), agent chat,
 * prompt execute and REST execute; the registry names the header per package and shows optional declarations.
 */
import test from 'ava';
import crypto from 'node:crypto';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { FIXTURES_DIR, startService, type Service } from './helpers/service.js';
import { postJson, readSse } from './helpers/sse.js';

type User = { key: string; id: string; username: string };
let svc: Service;
let alice: User;
const A = '@fixtures/env-scope-a';
const B = '@fixtures/env-scope-b';

test.before(async () => {
  svc = await startService({ sandbox: 'process' });
  for (const dir of ['env-scope-a', 'env-scope-b']) {
    const res = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'packages', dir)}`);
    if (res.status !== 201) throw new Error(res.text);
  }
  alice = await svc.createUser();
});
test.after.always(() => svc?.close());

const secret = (label: string) => `${label}-${crypto.randomBytes(8).toString('hex')}`;
const reversed = (v: string) => [...v].reverse().join('');
/** Neither the value nor its reversal anywhere in the text. */
const holds = (text: string, v: string) => text.includes(v) || text.includes(reversed(v));

async function connect(uid: string, headers: Record<string, string>) {
  const client = new Client({ name: 'env-scope-tests', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${svc.url}/api/mcp/${alice.username}/${uid}/http`), { requestInit: { headers } }));
  return client;
}
const textOf = (r: CallToolResult) => (r.content[0] as { type: 'text'; text: string }).text;
const call = async (client: Client, name: string) => (await client.callTool({ name, arguments: {} })) as CallToolResult;

test('MCP: an unscoped header for a name two packages declare reaches neither (both spellings); the refusal names the packages', async (t) => {
  const c = await svc.createCollection(alice.key, { name: 'Env scope unscoped' }, [`${A}::revealA`, `${B}::revealB`]);
  for (const header of ['X-Tool-Env-SHARED_SECRET', 'x-tool-env-shared-secret']) {
    const v = secret('shared');
    const client = await connect(c.uid, { [header]: v });
    for (const tool of ['revealB', 'revealA']) {
      const res = await call(client, tool);
      t.true(res.isError, `${header} ${tool}: ${textOf(res)}`);
      t.false(holds(JSON.stringify(res), v), `${header}: ${tool} got the value`);
      t.regex(textOf(res), /SHARED_SECRET is declared by several packages \(@fixtures\/env-scope-a, @fixtures\/env-scope-b\)/);
      t.regex(textOf(res), /X-Tool-Env-fixtures\.env-scope-a--SHARED_SECRET/);
    }
    await client.close();
  }
});

test('MCP: a header scoped to package A reaches A only (both spellings); an unscoped name only A declares reaches A only', async (t) => {
  const c = await svc.createCollection(alice.key, { name: 'Env scope scoped' }, [`${A}::revealA`, `${B}::revealB`]);
  for (const header of ['X-Tool-Env-fixtures.env-scope-a--SHARED_SECRET', 'x-tool-env-fixtures.env-scope-a--shared-secret']) {
    const v = secret('shared');
    const w = secret('only-a');
    const client = await connect(c.uid, { [header]: v, 'X-Tool-Env-ONLY_A_TOKEN': w });
    const a = await call(client, 'revealA');
    t.falsy(a.isError, textOf(a));
    t.deepEqual(a.structuredContent, { shared: reversed(v), onlyA: reversed(w) }, header);
    const b = await call(client, 'revealB');
    t.falsy(b.isError, textOf(b));
    t.deepEqual(b.structuredContent, { shared: null, onlyA: null }, `${header}: B receives nothing meant for A`);
    await client.close();
  }
  // Scoped to B: B gets its own value, A (which requires the name) is refused naming its scoped header.
  const vb = secret('for-b');
  const client = await connect(c.uid, { 'X-Tool-Env-fixtures.env-scope-b--SHARED_SECRET': vb });
  t.deepEqual((await call(client, 'revealB')).structuredContent, { shared: reversed(vb), onlyA: null });
  const refused = await call(client, 'revealA');
  t.true(refused.isError);
  t.regex(textOf(refused), /X-Tool-Env-fixtures\.env-scope-a--SHARED_SECRET/);
  t.false(holds(textOf(refused), vb));
  await client.close();
});

test('MCP: an unscoped header keeps working where one package of the collection declares the name', async (t) => {
  const c = await svc.createCollection(alice.key, { name: 'Env scope single' }, [`${B}::revealB`]);
  const v = secret('single');
  const client = await connect(c.uid, { 'X-Tool-Env-SHARED_SECRET': v, 'X-Tool-Env-ONLY_A_TOKEN': secret('x') });
  t.deepEqual((await call(client, 'revealB')).structuredContent, { shared: reversed(v), onlyA: null });
  await client.close();
});

test('agent chat: an ambiguous unscoped value is a 400 naming the packages; a value scoped to A never reaches B', async (t) => {
  const c = await svc.createCollection(alice.key, { name: 'Env scope agent' }, [`${A}::revealA`, `${B}::revealB`]);
  const agent = (await svc.request('POST', '/api/agents', { key: alice.key, body: { name: 'Scoped', collectionIds: [c.id] } })).body.data;
  const chat = (body: unknown) => readSse(`${svc.url}/api/agents/${agent.id}/chat`, postJson(alice.key, body));
  const v = secret('agent');
  const ambiguous = await chat({ message: 'Run revealB', env: { SHARED_SECRET: v } });
  t.is(ambiguous.status, 400);
  t.is(ambiguous.json.error.code, 'VALIDATION_ERROR');
  t.regex(ambiguous.json.error.message, /SHARED_SECRET is declared by several packages \(@fixtures\/env-scope-a, @fixtures\/env-scope-b\)/);
  t.false(holds(JSON.stringify(ambiguous.json), v));
  const unknown = await chat({ message: 'Run revealB', env: { '@fixtures/elsewhere': { SHARED_SECRET: v } } });
  t.is(unknown.status, 400);
  t.regex(unknown.json.error.message, /@fixtures\/elsewhere/);

  const env = { [A]: { SHARED_SECRET: v }, ONLY_A_TOKEN: secret('only-a') };
  const toB = await chat({ message: 'Run revealB', env });
  t.is(toB.status, 200);
  const completedB = toB.events.find((e) => e.event === 'tool.completed')!;
  t.like(completedB.data, { name: 'revealB', output: { shared: null, onlyA: null } });
  const toA = await chat({ message: 'Run revealA', env });
  const completedA = toA.events.find((e) => e.event === 'tool.completed')!;
  t.like(completedA.data, { name: 'revealA', output: { shared: reversed(v), onlyA: reversed(env.ONLY_A_TOKEN) } });
});

test('execute (REST and prompt): the named tool gets only the variables its package declares', async (t) => {
  const v = secret('rest');
  const w = secret('only-a');
  const res = await svc.request('POST', `/api/tools/execute/${B}/revealB`, {
    key: alice.key,
    body: { params: {}, env: { SHARED_SECRET: v, ONLY_A_TOKEN: w } },
  });
  t.is(res.status, 200, res.text);
  t.deepEqual(res.body.result, { shared: reversed(v), onlyA: null });
  const prompt = await readSse(
    `${svc.url}/api/tools/execute/${B}/revealB`,
    postJson(alice.key, { prompt: 'Run revealB', env: { SHARED_SECRET: v, ONLY_A_TOKEN: w } }),
  );
  t.like(prompt.events.find((e) => e.event === 'tool.completed')!.data, { output: { shared: reversed(v), onlyA: null } });
});

test('registry: one header per package for a shared name; optional declarations shown per tool', async (t) => {
  const c = await svc.createCollection(alice.key, { name: 'Env scope registry' }, [`${A}::revealA`, `${B}::revealB`]);
  const list = await svc.request('GET', `/v0.1/servers?search=${c.uid}`);
  t.is(list.status, 200, list.text);
  const { server, _meta } = list.body.servers[0];
  const headers = server.remotes[0].headers.filter((h: any) => h.name.startsWith('X-Tool-Env-'));
  t.deepEqual(
    headers.map((h: any) => [h.name, h.isRequired]),
    [
      ['X-Tool-Env-ONLY_A_TOKEN', false],
      // Required by revealA only: a client without it still uses revealB (the entry says which tool needs it).
      ['X-Tool-Env-fixtures.env-scope-a--SHARED_SECRET', false],
      ['X-Tool-Env-fixtures.env-scope-b--SHARED_SECRET', false],
    ],
  );
  t.regex(headers.find((h: any) => h.name === 'X-Tool-Env-fixtures.env-scope-a--SHARED_SECRET').description, /needed by revealA only/);
  const meta = Object.values(_meta)[0] as any;
  t.deepEqual(meta.requiredEnv, ['SHARED_SECRET']);
  const b = meta.tools.find((x: any) => x.name === 'revealB');
  t.deepEqual(b.requiredEnv, []);
  t.deepEqual(b.env, [
    {
      name: 'SHARED_SECRET',
      required: false,
      description: "Optional here: the same name as env-scope-a's secret",
      header: 'X-Tool-Env-fixtures.env-scope-b--SHARED_SECRET',
    },
  ]);
  const detail = (await svc.request('GET', `/api/tools/${B}/revealB`)).body.data;
  t.deepEqual(detail.package.envVars, [{ name: 'SHARED_SECRET', required: false, description: "Optional here: the same name as env-scope-a's secret" }]);
});
