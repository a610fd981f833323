import test from 'ava';
import crypto from 'node:crypto';
import { getEventListeners } from 'node:events';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION, McpError, SUPPORTED_PROTOCOL_VERSIONS, type CallToolResult, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parseManifest } from '../core/packages/manifest.js';
import { EXAMPLES_DIR, FIXTURES_DIR, startService, type Service } from './helpers/service.js';
import { until } from './helpers/processes.js';
import { postJson, readSse } from './helpers/sse.js';
import { mcpToolNames } from '../api/mcp/tools.js';
import type { ToolRow } from '../core/repos/tools.js';
import { usageCallerKey } from '../core/repos/search-usage.js';
import { usageTermsOf } from '../core/search/usage.js';

type User = { key: string; id: string; username: string };
let svc: Service;
let alice: User;
let bob: User;
const TEXT = '@toolshed-examples/text-tools';
const SIGNER = '@toolshed-examples/webhook-signer';
const FIX = '@fixtures/mcp-tools';

test.before(async () => {
  svc = await startService();
  for (const source of [
    path.join(EXAMPLES_DIR, 'text-tools'),
    path.join(EXAMPLES_DIR, 'webhook-signer'),
    path.join(FIXTURES_DIR, 'packages', 'mcp-tools'),
    path.join(FIXTURES_DIR, 'packages', 'load-fails'),
  ]) {
    const res = await svc.importPackage(`path:${source}`);
    if (res.status !== 201) throw new Error(`import ${source}: ${res.text}`);
  }
  alice = await svc.createUser({ username: 'ada_mcp' });
  bob = await svc.createUser();
});
test.after.always(() => svc?.close());

const makeCollection = (owner: User, body: Record<string, unknown>, toolRefs: string[] = []) => svc.createCollection(owner.key, body, toolRefs);

const mcpPath = (username: string, uid: string) => `/api/mcp/${username}/${uid}/http`;

async function connect(p: string, headers: Record<string, string> = {}) {
  const client = new Client({ name: 'toolshed-tests', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(svc.url + p), { requestInit: { headers } });
  await client.connect(transport);
  return { client, transport };
}

const textOf = (r: CallToolResult) => (r.content[0] as { type: 'text'; text: string }).text;
const call = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;

test('initialize: the SDK negotiates the protocol; server info names the collection', async (t) => {
  const c = await makeCollection(alice, { name: 'Init check', description: 'Tools for writing slugs' }, [`${TEXT}::slugify`]);
  const { client, transport } = await connect(mcpPath(alice.username, c.uid));
  t.is(transport.protocolVersion, LATEST_PROTOCOL_VERSION);
  t.is(client.getServerVersion()?.name, `toolshed:${alice.username}/${c.uid}`);
  t.is(client.getServerVersion()?.title, 'Init check');
  t.truthy(client.getServerCapabilities()?.tools);
  t.is(client.getInstructions(), 'Tools for writing slugs');
  t.is(transport.sessionId, undefined, 'stateless: no session id');
  await client.close();
});

test("tools/list: tool names, descriptions and the tools' JSON Schemas", async (t) => {
  const c = await makeCollection(alice, { name: 'List check' }, [`${TEXT}::slugify`, `${SIGNER}::signPayload`]);
  const { client } = await connect(mcpPath(alice.username, c.uid));
  const { tools } = await client.listTools();
  t.deepEqual(tools.map((x) => x.name).sort(), ['signPayload', 'slugify']);
  const detail = (await svc.request('GET', `/api/tools/${TEXT}/slugify`)).body.data;
  const slugify = tools.find((x) => x.name === 'slugify')!;
  t.deepEqual(slugify.inputSchema, detail.inputSchema);
  t.is(slugify.description, detail.description);
  t.is(slugify.title, `${TEXT}/slugify`);
  await client.close();
});

test('tools/list: a name clash gets package prefixes, stable across requests', async (t) => {
  const c = await makeCollection(alice, { name: 'Clash check' }, [`${TEXT}::slugify`, `${FIX}::slugify`, `${FIX}::explode`]);
  const { client } = await connect(mcpPath(alice.username, c.uid));
  const names = (await client.listTools()).tools.map((x) => x.name);
  t.deepEqual([...names].sort(), ['explode', 'mcp-tools__slugify', 'text-tools__slugify']);
  t.deepEqual(
    (await client.listTools()).tools.map((x) => x.name),
    names,
    'same names, same order',
  );
  const hyphen = JSON.parse(textOf(await call(client, 'text-tools__slugify', { text: 'Two Words' })));
  const underscore = JSON.parse(textOf(await call(client, 'mcp-tools__slugify', { text: 'Two Words' })));
  t.is(hyphen.slug, 'two-words');
  t.is(underscore.slug, 'two_words');
  await client.close();
});

test('names: deeper clashes fall back to the full package name; the result does not depend on order', (t) => {
  const row = (id: string, packageName: string, name: string) => ({ id, package_name: packageName, name }) as ToolRow;
  const set = [
    row('00000000-0000-4000-8000-000000000001', '@a/tools', 'fetch'),
    row('00000000-0000-4000-8000-000000000002', '@b/tools', 'fetch'),
    row('00000000-0000-4000-8000-000000000003', 'other', 'fetch'),
    row('00000000-0000-4000-8000-000000000004', 'other', 'parse'),
  ];
  const names = (tools: ToolRow[]) => [...mcpToolNames(tools)].map(([name, tool]) => `${name}=${tool.id.slice(-1)}`);
  t.deepEqual(names(set), ['a_tools__fetch=1', 'b_tools__fetch=2', 'other__fetch=3', 'parse=4']);
  t.deepEqual(names([...set].reverse()), names(set));
});

test.serial("tools/call leaves nothing behind on the API's shutdown signal (Node 20's AbortSignal.any kept a reference per call)", async (t) => {
  const shutdown = svc.api.deps.shutdown;
  // Node's own bookkeeping of the signals derived from it (never shrinks in Node 20), and plain listeners.
  const dependants = () => {
    const key = Object.getOwnPropertySymbols(shutdown).find((s) => s.description === 'kDependantSignals');
    return key ? ((shutdown as unknown as Record<symbol, Set<unknown> | undefined>)[key]?.size ?? 0) : 0;
  };
  const held = () => [dependants(), getEventListeners(shutdown, 'abort').length];
  const c = await makeCollection(alice, { name: 'Signal check' }, [`${TEXT}::slugify`]);
  const { client } = await connect(mcpPath(alice.username, c.uid), { authorization: `Bearer ${alice.key}` });
  const before = held();
  for (const text of ['one', 'two', 'three']) t.falsy((await call(client, 'slugify', { text })).isError);
  t.deepEqual(held(), before);
  await client.close();
});

test('tools/call: the output equals what execute (25) returns; the execution is recorded', async (t) => {
  const c = await makeCollection(alice, { name: 'Call check' }, [`${TEXT}::slugify`]);
  const { client } = await connect(mcpPath(alice.username, c.uid), { authorization: `Bearer ${alice.key}` });
  const params = { text: 'Crème Brûlée Recipes', separator: '_' };
  const result = await call(client, 'slugify', params);
  t.falsy(result.isError);
  const viaRest = await svc.request('POST', `/api/tools/execute/${TEXT}/slugify`, { body: { params } });
  t.deepEqual(JSON.parse(textOf(result)), viaRest.body.result);
  t.deepEqual(JSON.parse(textOf(result)), { slug: 'creme_brulee_recipes', length: 20 });
  t.deepEqual(result.structuredContent, { slug: 'creme_brulee_recipes', length: 20 });
  const executionId = result._meta?.['toolshed/executionId'] as string;
  const execution = await svc.request('GET', `/api/executions/${executionId}`, { key: alice.key });
  t.is(execution.body.data.status, 'succeeded');
  const row = await svc.api.deps.db('executions').where({ id: executionId }).first();
  t.is(row.origin, 'mcp');
  t.is(row.user_id, alice.id);
  await client.close();
});

test('tools/call: a throwing tool, invalid params, a BROKEN tool and an unknown name are reported', async (t) => {
  const c = await makeCollection(alice, { name: 'Failure check' }, [`${FIX}::explode`, `${TEXT}::slugify`, '@fixtures/load-fails::doThing']);
  const { client } = await connect(mcpPath(alice.username, c.uid));
  const thrown = await call(client, 'explode', { reason: 'the fuse was lit' });
  t.true(thrown.isError);
  t.regex(textOf(thrown), /exploded because the fuse was lit/);
  const invalid = await call(client, 'slugify', { separator: '_' });
  t.true(invalid.isError);
  t.regex(textOf(invalid), /text/);
  const broken = await call(client, 'doThing', {});
  t.true(broken.isError);
  t.regex(textOf(broken), /BROKEN/);
  const unknown = await t.throwsAsync(call(client, 'noSuchTool', {}), { instanceOf: McpError });
  t.regex(unknown!.message, /noSuchTool/);
  await client.close();
});

test('env: a missing variable is named (never a value); X-Tool-Env-* headers reach the tool and are not stored', async (t) => {
  const c = await makeCollection(alice, { name: 'Env check' }, [`${SIGNER}::signPayload`, `${TEXT}::slugify`]);
  const other = `other-value-${crypto.randomBytes(6).toString('hex')}`;
  const missing = await connect(mcpPath(alice.username, c.uid), { 'X-Tool-Env-OTHER_SECRET': other });
  const refused = await call(missing.client, 'signPayload', { payload: 'hello' });
  t.true(refused.isError);
  t.regex(textOf(refused), /WEBHOOK_SECRET/);
  t.regex(textOf(refused), /X-Tool-Env-WEBHOOK_SECRET/);
  t.false(textOf(refused).includes(other));
  await missing.client.close();

  const secret = `s3cret-${crypto.randomBytes(8).toString('hex')}`;
  const expected = crypto.createHmac('sha256', secret).update('hello').digest('hex');
  for (const header of ['X-Tool-Env-WEBHOOK_SECRET', 'x-tool-env-webhook-secret']) {
    const { client } = await connect(mcpPath(alice.username, c.uid), { [header]: secret });
    const signed = await call(client, 'signPayload', { payload: 'hello' });
    t.falsy(signed.isError, textOf(signed));
    t.is(JSON.parse(textOf(signed)).digest, expected, header);
    await client.close();
  }
  const rows = await svc.api.deps.db('executions').where({ origin: 'mcp' }).select('params', 'result', 'error');
  t.false(JSON.stringify(rows).includes(secret), 'no execution row holds the secret');
  t.false(svc.logs().includes(secret), 'no log line holds the secret');
});

test("private collection: 401 (the OAuth challenge) without credentials, 404 with another user's key; works with the owner's key", async (t) => {
  const c = await makeCollection(alice, { name: 'Private tools', isPublic: false }, [`${TEXT}::slugify`]);
  const p = mcpPath(alice.username, c.uid);
  const anonymous = await t.throwsAsync(connect(p, {}), { instanceOf: StreamableHTTPError });
  t.is(anonymous!.code, 401);
  const other = await t.throwsAsync(connect(p, { authorization: `Bearer ${bob.key}` }), { instanceOf: StreamableHTTPError });
  t.is(other!.code, 404);
  t.regex(other!.message, /not found/);
  const { client } = await connect(p, { authorization: `Bearer ${alice.key}` });
  t.deepEqual(
    (await client.listTools()).tools.map((x) => x.name),
    ['slugify'],
  );
  t.is(JSON.parse(textOf(await call(client, 'slugify', { text: 'Only Mine' }))).slug, 'only-mine');
  await client.close();
  const revoked = await t.throwsAsync(connect(p, { authorization: 'Bearer tsk_not_a_real_key' }), { instanceOf: StreamableHTTPError });
  t.is(revoked!.code, 401);
});

test("unknown user or collection is a 404 to a signed-in caller (401 without credentials, as a private one); the URL's username must own the collection", async (t) => {
  const c = await makeCollection(alice, { name: 'Owned by alice' }, []);
  for (const p of [mcpPath('nobody-here', c.uid), mcpPath(alice.username, 'no-such-collection'), mcpPath(bob.username, c.uid)]) {
    const res = await svc.request('POST', p, {
      key: bob.key,
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      headers: { accept: 'application/json, text/event-stream' },
    });
    t.is(res.status, 404, p);
    t.is(res.body.error.code, 'NOT_FOUND');
    const anonymous = await svc.request('POST', p, {
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      headers: { accept: 'application/json, text/event-stream' },
    });
    t.is(anonymous.status, 401, p);
    t.regex(anonymous.headers.get('www-authenticate') ?? '', /^Bearer resource_metadata="/);
  }
  const upper = await connect(mcpPath(alice.username.toUpperCase(), c.uid));
  t.deepEqual((await upper.client.listTools()).tools, [], 'usernames are case-insensitive');
  await upper.client.close();
});

test('a change to the collection shows in the next tools/list of the same client', async (t) => {
  const c = await makeCollection(alice, { name: 'Changing' }, [`${TEXT}::slugify`]);
  const { client } = await connect(mcpPath(alice.username, c.uid));
  t.deepEqual(
    (await client.listTools()).tools.map((x) => x.name),
    ['slugify'],
  );
  await svc.request('POST', `/api/collections/${c.uid}/tools`, { key: alice.key, body: { toolId: `${TEXT}::convertCase` } });
  t.deepEqual((await client.listTools()).tools.map((x) => x.name).sort(), ['convertCase', 'slugify']);
  await svc.request('DELETE', `/api/collections/${c.uid}/tools/${TEXT}/slugify`, { key: alice.key });
  t.deepEqual(
    (await client.listTools()).tools.map((x) => x.name),
    ['convertCase'],
  );
  await t.throwsAsync(call(client, 'slugify', { text: 'gone' }), { instanceOf: McpError });
  await client.close();
});

test('plain HTTP: rate-limit headers on MCP responses; GET and DELETE are 405 (stateless)', async (t) => {
  const c = await makeCollection(alice, { name: 'Raw http' }, []);
  const p = mcpPath(alice.username, c.uid);
  const init = await svc.request('POST', p, {
    headers: { accept: 'application/json, text/event-stream' },
    body: {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
    },
  });
  t.is(init.status, 200);
  t.is(init.body.result.protocolVersion, LATEST_PROTOCOL_VERSION);
  t.truthy(init.headers.get('x-ratelimit-limit'));
  t.truthy(init.headers.get('x-request-id'));
  for (const method of ['GET', 'DELETE']) {
    const res = await svc.request(method, p, { headers: { accept: 'text/event-stream' } });
    t.is(res.status, 405, method);
  }
});

// --- Protocol versions, annotations, output schemas, on-demand mode (issue 14) ---

/** The official transport, with initialize asking for `version` instead of the SDK's latest. */
class VersionedTransport extends StreamableHTTPClientTransport {
  constructor(
    url: URL,
    private readonly version: string,
    opts?: ConstructorParameters<typeof StreamableHTTPClientTransport>[1],
  ) {
    super(url, opts);
  }
  override send(message: JSONRPCMessage, options?: Parameters<StreamableHTTPClientTransport['send']>[1]) {
    if ('method' in message && message.method === 'initialize' && message.params) {
      return super.send({ ...message, params: { ...message.params, protocolVersion: this.version } }, options);
    }
    return super.send(message, options);
  }
}

test('every protocol version the SDK supports: initialize, tools/list and tools/call with the official Client', async (t) => {
  const c = await makeCollection(alice, { name: 'Versions' }, [`${TEXT}::slugify`]);
  t.is(SUPPORTED_PROTOCOL_VERSIONS[0], LATEST_PROTOCOL_VERSION);
  for (const version of SUPPORTED_PROTOCOL_VERSIONS) {
    const client = new Client({ name: 'toolshed-tests', version: '1.0.0' });
    const transport = new VersionedTransport(new URL(svc.url + mcpPath(alice.username, c.uid)), version);
    await client.connect(transport);
    t.is(transport.protocolVersion, version, `negotiated ${version}`);
    const { tools } = await client.listTools();
    t.deepEqual(
      tools.map((x) => x.name),
      ['slugify'],
      version,
    );
    const r = await call(client, 'slugify', { text: `Version ${version}` });
    t.falsy(r.isError, version);
    t.is(JSON.parse(textOf(r)).slug, `version-${version}`, version);
    await client.close();
  }
});

test('older clients: no MCP-Protocol-Version header is served (2025-03-26 rules); an unknown version is a 400', async (t) => {
  const c = await makeCollection(alice, { name: 'Old clients' }, [`${TEXT}::slugify`]);
  const post = (headers: Record<string, string>) =>
    svc.request('POST', mcpPath(alice.username, c.uid), {
      headers: { accept: 'application/json, text/event-stream', ...headers },
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
    });
  const bare = await post({});
  t.is(bare.status, 200, bare.text);
  t.is(bare.body.result.tools[0].name, 'slugify');
  const unknown = await post({ 'mcp-protocol-version': '1999-01-01' });
  t.is(unknown.status, 400);
  t.regex(unknown.text, /Unsupported protocol version/);
});

test('params that do not fit the method are -32602 Invalid params naming the field, and run nothing', async (t) => {
  // Its own user: the file's other tests run at the same time and queue executions of their own.
  const carol = await svc.createUser();
  const c = await makeCollection(carol, { name: 'Bad params' }, [`${TEXT}::slugify`]);
  const executions = async () => Number((await svc.api.deps.db('executions').where({ user_id: carol.id }).count('* as n'))[0].n);
  const before = await executions();
  const send = (params: unknown, method = 'tools/call') =>
    svc.request('POST', mcpPath(carol.username, c.uid), {
      key: carol.key,
      headers: { accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 9, method, params },
    });
  for (const [params, field] of [
    [{ name: 'slugify', arguments: 'x' }, 'params.arguments'],
    [{ name: 42, arguments: {} }, 'params.name'],
    [{ arguments: {} }, 'params.name'],
  ] as const) {
    const res = await send(params);
    t.is(res.status, 200, res.text);
    t.is(res.body.id, 9);
    t.is(res.body.error.code, -32602, res.text);
    t.true(res.body.error.message.startsWith(`Invalid params: ${field}:`), res.body.error.message);
  }
  t.is((await send({ cursor: 5 }, 'tools/list')).body.error.code, -32602);
  t.is(await executions(), before, 'nothing was queued');
  const good = await send({ name: 'slugify', arguments: { text: 'Still Works' } });
  t.is(JSON.parse(good.body.result.content[0].text).slug, 'still-works', 'a well-formed call still runs');
});

test('a body the transport never sees (not JSON, not UTF-8, another media type, gzip) is a JSON-RPC error an MCP client can read', async (t) => {
  const c = await makeCollection(alice, { name: 'Refusals' }, [`${TEXT}::slugify`]);
  const send = (rawBody: string | Buffer, headers: Record<string, string>) =>
    svc.request('POST', mcpPath(alice.username, c.uid), { rawBody, headers: { accept: 'application/json, text/event-stream', ...headers } });
  const json = { 'content-type': 'application/json' };
  for (const [label, res, status, code] of [
    ['not JSON', await send('{"jsonrpc":"2.0",', json), 400, -32700],
    ['not UTF-8', await send(Buffer.from([0x7b, 0xff, 0x7d]), json), 400, -32700],
    ['a NUL', await send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { cursor: '\u0000' } }), json), 400, -32600],
    ['text/plain', await send('{}', { 'content-type': 'text/plain' }), 415, -32600],
    ['gzip', await send('{}', { ...json, 'content-encoding': 'gzip' }), 415, -32600],
  ] as const) {
    t.is(res.status, status, label);
    t.like(res.body, { jsonrpc: '2.0', id: null, error: { code } }, `${label}: ${res.text}`);
  }
  // What is not about the message stays in the API's shape A: an unknown collection, a bad key.
  const unknown = await svc.request('POST', mcpPath(alice.username, 'no-such-collection'), { rawBody: '{', headers: json });
  t.is(unknown.status, 400, 'the body is read first');
  const missing = await svc.request('POST', mcpPath(alice.username, 'no-such-collection'), {
    key: alice.key,
    headers: { accept: 'application/json, text/event-stream' },
    body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
  });
  t.is(missing.status, 404);
  t.is(missing.body.error.code, 'NOT_FOUND');
  const badKey = await svc.request('POST', mcpPath(alice.username, c.uid), {
    key: 'tsk_not-a-real-key',
    body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
  });
  t.is(badKey.status, 401);
  t.is(badKey.body.error.code, 'UNAUTHORIZED');
});

test('annotations: only what the package declares (nothing declared: no hint), openWorldHint from network', async (t) => {
  const c = await makeCollection(alice, { name: 'Annotated' }, [`${TEXT}::slugify`, `${FIX}::shout`, `${FIX}::explode`]);
  const { client } = await connect(mcpPath(alice.username, c.uid));
  const { tools } = await client.listTools();
  const byName = new Map(tools.map((x) => [x.name, x]));
  t.deepEqual(byName.get('slugify')?.annotations, { readOnlyHint: true, idempotentHint: true, openWorldHint: false }, 'as its manifest declares');
  t.deepEqual(byName.get('explode')?.annotations, { openWorldHint: false }, 'nothing declared: no hint, though it has no network');
  t.deepEqual(byName.get('shout')?.annotations, { readOnlyHint: true, openWorldHint: true }, 'what its manifest declares');
  await client.close();
});

test('REST tool detail shows the declared permissions, the MCP annotations and the output schema', async (t) => {
  const shout = await svc.request('GET', `/api/tools/${FIX}/shout`);
  t.is(shout.status, 200);
  t.deepEqual(shout.body.data.permissions, { network: true, readOnly: true });
  t.deepEqual(shout.body.data.annotations, { readOnlyHint: true, openWorldHint: true });
  t.like(shout.body.data.outputSchema, { type: 'object', required: ['text', 'letters'] });
  const explode = await svc.request('GET', `/api/tools/${FIX}/explode`);
  t.is(explode.body.data.permissions, null, 'nothing declared');
  t.deepEqual(explode.body.data.annotations, { openWorldHint: false });
  t.is(explode.body.data.outputSchema, null);
});

test('output schemas: declared ones are served, and structuredContent validates against them', async (t) => {
  const c = await makeCollection(alice, { name: 'Structured' }, [`${TEXT}::slugify`, `${FIX}::shout`, `${FIX}::explode`]);
  const { client } = await connect(mcpPath(alice.username, c.uid));
  const { tools } = await client.listTools();
  const shout = tools.find((x) => x.name === 'shout')!;
  t.like(shout.outputSchema, { type: 'object', required: ['text', 'letters'] });
  t.like(tools.find((x) => x.name === 'slugify')!.outputSchema, { type: 'object', required: ['slug', 'length'] });
  t.is(tools.find((x) => x.name === 'explode')!.outputSchema, undefined);
  const ajv = new Ajv2020({ strict: false });
  for (const [name, args] of [
    ['shout', { text: 'Hello, wörld' }],
    ['slugify', { text: 'Hello World' }],
  ] as const) {
    // The SDK Client itself checks structuredContent against the listed outputSchema; ajv checks it again here.
    const r = await call(client, name, args);
    t.falsy(r.isError, textOf(r));
    const schema = tools.find((x) => x.name === name)!.outputSchema!;
    t.true(ajv.validate(schema, r.structuredContent), `${name}: ${JSON.stringify(ajv.errors)}`);
    t.deepEqual(JSON.parse(textOf(r)), r.structuredContent);
  }
  t.like((await call(client, 'shout', { text: 'Hello, wörld' })).structuredContent, { text: 'HELLO, WÖRLD', letters: 10 });
  await client.close();
});

test('the server version is the collection revision, as in the registry', async (t) => {
  const c = await makeCollection(alice, { name: 'Revised', uid: 'revised-mcp' }, [`${TEXT}::slugify`]);
  const first = await connect(mcpPath(alice.username, c.uid));
  const v1 = first.client.getServerVersion()?.version;
  t.regex(v1 ?? '', /^1\.0\.\d+$/);
  await first.client.close();
  await svc.request('PATCH', `/api/collections/${c.uid}`, { key: alice.key, body: { description: 'changed' } });
  const second = await connect(mcpPath(alice.username, c.uid));
  t.not(second.client.getServerVersion()?.version, v1);
  await second.client.close();
});

test("search mode: two meta-tools; search_tools ranks the collection's tools; call_tool runs one", async (t) => {
  const c = await makeCollection(alice, { name: 'On demand' }, [`${TEXT}::slugify`, `${TEXT}::convertCase`, `${FIX}::shout`, `${SIGNER}::signPayload`]);
  const { client } = await connect(`${mcpPath(alice.username, c.uid)}?mode=search`);
  const { tools } = await client.listTools();
  t.deepEqual(
    tools.map((x) => x.name),
    ['search_tools', 'call_tool'],
  );
  t.like(tools[0].annotations, { readOnlyHint: true, openWorldHint: false });
  t.like(tools[1].annotations, { openWorldHint: true }, 'shout declares network');

  const found = await call(client, 'search_tools', { query: 'upper-case a text and count its letters', limit: 2 });
  const hits = (found.structuredContent as { tools: { name: string; inputSchema: object; annotations: object }[] }).tools;
  t.is(hits[0].name, 'shout');
  t.true(hits.length <= 2);
  t.like(hits[0].inputSchema, { type: 'object', required: ['text'] });
  t.truthy(hits[0].annotations);
  const slug = await call(client, 'search_tools', { query: 'url slug' });
  t.is((slug.structuredContent as { tools: { name: string }[] }).tools[0].name, 'slugify');

  const r = await call(client, 'call_tool', { name: 'slugify', arguments: { text: 'On Demand' } });
  t.falsy(r.isError, textOf(r));
  t.is(JSON.parse(textOf(r)).slug, 'on-demand');
  t.truthy(r._meta?.['toolshed/executionId'], 'a real execution');
  const missingEnv = await call(client, 'call_tool', { name: 'signPayload', arguments: { payload: 'x' } });
  t.true(missingEnv.isError);
  t.regex(textOf(missingEnv), /X-Tool-Env-WEBHOOK_SECRET/);
  await t.throwsAsync(call(client, 'call_tool', { name: 'nope', arguments: {} }), { instanceOf: McpError, message: /Unknown tool 'nope'; search_tools gives/ });
  // The meta-tools' advertised input schemas are enforced: no other key, the query's length, the limit's range.
  for (const [tool, args, problem] of [
    ['search_tools', { query: 'slug', extra: 1 }, /unknown argument 'extra'/],
    ['search_tools', { query: 'x'.repeat(1001) }, /at most 1000 characters/],
    ['search_tools', { query: 'slug', limit: 21 }, /from 1 to 20/],
    ['call_tool', { name: 'slugify', arguments: { text: 'x' }, x: 1 }, /unknown argument 'x'/],
  ] as const) {
    await t.throwsAsync(call(client, tool, args), { instanceOf: McpError, message: problem }, JSON.stringify(args).slice(0, 60));
  }
  await t.throwsAsync(call(client, 'slugify', { text: 'x' }), { instanceOf: McpError, message: /search mode/ });
  await client.close();

  const bad = await svc.request('POST', `${mcpPath(alice.username, c.uid)}?mode=lazy`, {
    headers: { accept: 'application/json, text/event-stream' },
    body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
  });
  t.is(bad.status, 400);
  t.is(bad.body.error.code, -32600, 'a JSON-RPC error, as an MCP client reads it');
  t.regex(bad.body.error.message, /'mode' must be one of: all, search/);
});

test('one ranker: over the same tools, search_tools finds them in the order of /api/tools/search, and the offline agent runs the first', async (t) => {
  // Every searchable tool of this registry in one collection: then both searches rank the same tools.
  type Listed = { id: string; name: string; healthStatus: string; package: { npmPackageName: string } };
  const settled = await until(
    async () => {
      const all = (await svc.request('GET', '/api/tools?limit=100')).body.data as Listed[];
      // Health checks change what search shows (BROKEN tools never appear): compare once every tool has been checked.
      return all.every((x) => x.healthStatus !== 'UNKNOWN') ? all : undefined;
    },
    60_000,
    'every tool health-checked',
  );
  const searchable = settled.filter((x) => x.healthStatus !== 'BROKEN');
  const c = await makeCollection(
    alice,
    { name: 'Everything' },
    settled.map((x) => `${x.package.npmPackageName}::${x.name}`),
  );
  const { client } = await connect(`${mcpPath(alice.username, c.uid)}?mode=search`);
  const queries = ['sign a text payload', 'convert the case of a text', 'count the letters of text in upper case', 'make a url slug'];
  for (const q of queries) {
    const rest = async () => {
      const res = await svc.request('GET', `/api/tools/search?q=${encodeURIComponent(q)}&limit=20`);
      return (res.body.results.tools as Listed[]).map((x) => `${x.package.npmPackageName}/${x.name}`);
    };
    // The registry's index follows the database by notification: wait until it has every searchable tool.
    await until(
      async () =>
        (await svc.request('GET', `/api/tools/search?q=${encodeURIComponent(searchable.map((x) => x.name).join(' '))}&limit=100`)).body.results.total ===
        searchable.length,
      30_000,
      'search index current',
    );
    const registry = await rest();
    const found = await call(client, 'search_tools', { query: q, limit: 20 });
    const mcp = (found.structuredContent as { tools: { title: string }[] }).tools.map((x) => x.title);
    t.true(registry.length >= 2, q);
    t.deepEqual(mcp, registry, q);
  }
  await client.close();

  const agent = await svc.request('POST', '/api/agents', { key: alice.key, body: { name: 'Everything agent', collectionIds: [c.uid] } });
  t.is(agent.status, 201, agent.text);
  const q = 'count the letters of text in upper case';
  const first = (await svc.request('GET', `/api/tools/search?q=${encodeURIComponent(q)}&limit=1`)).body.results.tools[0] as Listed;
  const chat = await readSse(`${svc.url}/api/agents/${agent.body.data.id}/chat`, postJson(alice.key, { message: `${q}: "Hello"` }));
  const started = chat.events.find((e) => e.event === 'tool.started');
  t.is(started?.data.toolId, first.id, `the agent ran ${started?.data.name}, search put ${first.name} first`);
});

test('search mode as the collection setting: the endpoint serves it without ?mode; ?mode=all overrides', async (t) => {
  const c = await makeCollection(alice, { name: 'Setting' }, [`${TEXT}::slugify`]);
  t.is((await svc.request('GET', `/api/collections/${c.uid}`)).body.data.mcpMode, 'all');
  const bad = await svc.request('PATCH', `/api/collections/${c.uid}`, { key: alice.key, body: { mcpMode: 'lazy' } });
  t.is(bad.status, 400);
  t.is((await svc.request('PATCH', `/api/collections/${c.uid}`, { key: bob.key, body: { mcpMode: 'search' } })).status, 403);
  const patched = await svc.request('PATCH', `/api/collections/${c.uid}`, { key: alice.key, body: { mcpMode: 'search' } });
  t.is(patched.status, 200, patched.text);
  t.is(patched.body.data.mcpMode, 'search');
  const lazy = await connect(mcpPath(alice.username, c.uid));
  t.deepEqual(
    (await lazy.client.listTools()).tools.map((x) => x.name),
    ['search_tools', 'call_tool'],
  );
  await lazy.client.close();
  const eager = await connect(`${mcpPath(alice.username, c.uid)}?mode=all`);
  t.deepEqual(
    (await eager.client.listTools()).tools.map((x) => x.name),
    ['slugify'],
  );
  await eager.client.close();
});

test('manifest permissions are validated at import: a 400 names each field at fault', async (t) => {
  const res = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'packages', 'bad-permissions')}`);
  t.is(res.status, 400, res.text);
  const paths = (res.body.error.details as { path: string }[]).map((d) => d.path);
  t.true(paths.includes('package.json.toolshed.tools.0.permissions.network'), paths.join(', '));
  // Cross-field rules run once the shapes are right: a secret must be declared in env; readOnly excludes destructive.
  const parsed = parseManifest({
    name: 'x',
    version: '1.0.0',
    toolshed: {
      category: 'automation',
      env: ['API_TOKEN'],
      tools: [{ exportName: 'ping', permissions: { readOnly: true, destructive: true, secrets: ['OTHER_TOKEN'] } }],
    },
  });
  t.deepEqual('errors' in parsed ? parsed.errors.map((e) => e.path) : [], [
    'package.json.toolshed.tools.0.permissions.destructive',
    'package.json.toolshed.tools.0.permissions.secrets.0',
  ]);
});

test('declared secrets: a tool gets only the env it declares', async (t) => {
  // webhook-signer declares secrets: [WEBHOOK_SECRET] on each tool; another header is not passed on.
  const c = await makeCollection(alice, { name: 'Secrets' }, [`${SIGNER}::signPayload`]);
  const { client } = await connect(mcpPath(alice.username, c.uid), { 'X-Tool-Env-WEBHOOK_SECRET': 's3cret', 'X-Tool-Env-OTHER': 'nope' });
  const r = await call(client, 'signPayload', { payload: 'hello' });
  t.falsy(r.isError, textOf(r));
  await client.close();
});

test("search mode: an identified caller's search_tools then call_tool is a vote for the tool (learning from use); an anonymous one is not", async (t) => {
  const c = await makeCollection(bob, { name: 'Learning over MCP' }, [`${TEXT}::slugify`, `${TEXT}::convertCase`]);
  // Two packages have a slugify (text-tools and mcp-tools): the one the collection holds is text-tools'.
  const slugId = (
    await svc.api.deps.db('tools as t').join('packages as p', 'p.id', 't.package_id').where({ 't.name': 'slugify', 'p.name': TEXT }).first('t.id')
  ).id as string;
  const votesOf = async (caller: string) => (await svc.api.deps.db('search_usage').where({ tool_id: slugId, caller }).select('term')).map((r) => r.term).sort();

  const { client } = await connect(`${mcpPath(bob.username, c.uid)}?mode=search`, { authorization: `Bearer ${bob.key}` });
  await call(client, 'search_tools', { query: 'web address from a title' });
  t.falsy((await call(client, 'call_tool', { name: 'slugify', arguments: { text: 'Hello World' } })).isError);
  t.deepEqual(await votesOf(usageCallerKey(bob.id)), [...usageTermsOf('web address from a title')].sort());
  await client.close();

  const before = await svc.api.deps.db('search_usage').where({ tool_id: slugId }).count('* as n');
  const anonymous = await connect(`${mcpPath(bob.username, c.uid)}?mode=search`);
  await call(anonymous.client, 'search_tools', { query: 'anonymous flood words' });
  t.falsy((await call(anonymous.client, 'call_tool', { name: 'slugify', arguments: { text: 'x' } })).isError);
  t.deepEqual(await svc.api.deps.db('search_usage').where({ tool_id: slugId }).count('* as n'), before);
  await anonymous.client.close();
});
