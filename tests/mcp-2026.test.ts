import test from 'ava';
import crypto from 'node:crypto';
import path from 'node:path';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { EXAMPLES_DIR, startService, type Service } from './helpers/service.js';

/**
 * Both MCP protocol eras on one collection URL, picked per request: the 2.x SDK client at 2026-07-28 (no initialize,
 * server/discover, `_meta` envelope, Mcp-Method headers, resultType, ttlMs) and the 1.x SDK client at each 2025 version.
 */
let svc: Service;
let owner: { key: string; username: string };
let url: URL;
let privateUrl: URL;
const TEXT = '@toolshed-examples/text-tools';
const SIGNER = '@toolshed-examples/webhook-signer';
const MODERN = '2026-07-28';

test.before(async () => {
  svc = await startService({ sandbox: 'process' });
  for (const dir of ['text-tools', 'webhook-signer']) {
    const res = await svc.importPackage(`path:${path.join(EXAMPLES_DIR, dir)}`);
    if (res.status !== 201) throw new Error(`import ${dir}: ${res.text}`);
  }
  owner = await svc.createUser({ username: 'era_owner' });
  const c = await svc.createCollection(owner.key, { name: 'Both eras', description: 'Slugs for every client', isPublic: true }, [`${TEXT}::slugify`]);
  url = new URL(`${svc.url}/api/mcp/${owner.username}/${c.uid}/http`);
  const p = await svc.createCollection(owner.key, { name: 'Private eras', isPublic: false }, [`${TEXT}::slugify`]);
  privateUrl = new URL(`${svc.url}/api/mcp/${owner.username}/${p.uid}/http`);
});
test.after.always(() => svc?.close());

/** Every HTTP exchange a client makes, as sent and as answered. */
type Exchange = { method?: string; headers: Headers; body: any; status: number; response: any };
function recordingFetch(log: Exchange[]): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    const text = await res.clone().text();
    const sent = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
    let response: unknown = text;
    try {
      response = JSON.parse(text);
    } catch {
      /* SSE or empty */
    }
    log.push({ method: init?.method, headers: new Headers(init?.headers), body: sent, status: res.status, response });
    return res;
  };
}

async function modernClient(target: URL, headers: Record<string, string> = {}) {
  const log: Exchange[] = [];
  const client = new ModernClient({ name: 'toolshed-tests-2026', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } });
  const transport = new ModernTransport(target, { fetch: recordingFetch(log), requestInit: { headers } });
  await client.connect(transport);
  return { client, log };
}

const textOf = (r: CallToolResult) => (r.content[0] as { type: 'text'; text: string }).text;

test('2026-07-28: the 2.x client discovers the collection with server/discover (no initialize, no session)', async (t) => {
  const { client, log } = await modernClient(url);
  t.is(client.getProtocolEra(), 'modern');
  t.is(client.getNegotiatedProtocolVersion(), MODERN);
  t.is(client.getServerVersion()?.name?.startsWith(`toolshed:${owner.username}/`), true);
  t.truthy(client.getServerCapabilities()?.tools);
  t.is(client.getInstructions(), 'Slugs for every client');
  const methods = log.map((e) => e.body?.method);
  t.true(methods.includes('server/discover'));
  t.false(methods.includes('initialize'));
  const discover = log.find((e) => e.body?.method === 'server/discover')!;
  t.is(discover.status, 200);
  t.is(discover.headers.get('mcp-method'), 'server/discover');
  t.true(discover.response.result.supportedVersions.includes(MODERN));
  t.is(discover.response.result.resultType, 'complete');
  t.is(discover.response.result.ttlMs, 60_000);
  t.is(discover.response.result.cacheScope, 'public');
  t.is(
    log.every((e) => !e.headers.has('mcp-session-id')),
    true,
  );
  await client.close();
});

test('2026-07-28: tools/list carries resultType and ttlMs, the same tools as the 2025 era', async (t) => {
  const { client, log } = await modernClient(url);
  const { tools } = await client.listTools();
  t.deepEqual(
    tools.map((x) => x.name),
    ['slugify'],
  );
  const detail = (await svc.request('GET', `/api/tools/${TEXT}/slugify`)).body.data;
  t.deepEqual(tools[0].inputSchema, detail.inputSchema);
  const list = log.find((e) => e.body?.method === 'tools/list')!;
  t.is(list.headers.get('mcp-method'), 'tools/list');
  t.is(list.body.params._meta['io.modelcontextprotocol/protocolVersion'], MODERN);
  t.is(list.response.result.resultType, 'complete');
  t.is(list.response.result.ttlMs, 60_000);
  t.is(list.response.result.cacheScope, 'public');
  // The list is one page: a cursor it never gave is invalid params.
  const bogus = await t.throwsAsync(client.listTools({ cursor: 'bogus' }));
  t.regex(bogus!.message, /cursor/);
  await client.close();
});

test("2026-07-28: tools/call runs the collection's tool in the sandbox", async (t) => {
  const { client, log } = await modernClient(url);
  const result = (await client.callTool({ name: 'slugify', arguments: { text: 'Hello Both Eras' } })) as CallToolResult;
  t.falsy(result.isError);
  t.regex(textOf(result), /hello-both-eras/);
  const call = log.find((e) => e.body?.method === 'tools/call')!;
  t.is(call.headers.get('mcp-name'), 'slugify');
  t.is(call.response.result.resultType, 'complete');
  // An unknown tool is the same JSON-RPC error as in the 2025 era.
  const err = await t.throwsAsync(client.callTool({ name: 'nope', arguments: {} }));
  t.regex(err!.message, /Unknown tool 'nope'/);
  await client.close();
});

test('2026-07-28: the X-Tool-Env-* headers give a tool its env, as in the 2025 era; without them the error names the header', async (t) => {
  const c = await svc.createCollection(owner.key, { name: 'Signer eras', isPublic: true }, [`${SIGNER}::signPayload`]);
  const signer = new URL(`${svc.url}/api/mcp/${owner.username}/${c.uid}/http`);
  const bare = await modernClient(signer);
  const refused = (await bare.client.callTool({ name: 'signPayload', arguments: { payload: 'hello' } })) as CallToolResult;
  t.true(refused.isError);
  t.regex(textOf(refused), /X-Tool-Env-WEBHOOK_SECRET/);
  await bare.client.close();
  const secret = 'era-secret-value';
  const given = await modernClient(signer, { 'X-Tool-Env-WEBHOOK_SECRET': secret });
  const signed = (await given.client.callTool({ name: 'signPayload', arguments: { payload: 'hello' } })) as CallToolResult;
  t.falsy(signed.isError, textOf(signed));
  t.is(JSON.parse(textOf(signed)).digest, crypto.createHmac('sha256', secret).update('hello').digest('hex'));
  await given.client.close();
});

test('2026-07-28: a private collection needs its key in this era too; the cache scope is private', async (t) => {
  await t.throwsAsync(modernClient(privateUrl));
  const { client, log } = await modernClient(privateUrl, { Authorization: `Bearer ${owner.key}` });
  const { tools } = await client.listTools();
  t.deepEqual(
    tools.map((x) => x.name),
    ['slugify'],
  );
  t.is(log.find((e) => e.body?.method === 'tools/list')!.response.result.cacheScope, 'private');
  await client.close();
});

test('2026-07-28 on the wire: server/discover with the version header and envelope; a header/body mismatch is refused', async (t) => {
  const envelope = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };
  const post = (body: unknown, headers: Record<string, string>) =>
    fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': MODERN, ...headers },
      body: JSON.stringify(body),
    });
  const ok = await post({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: envelope } }, { 'Mcp-Method': 'server/discover' });
  t.is(ok.status, 200);
  const discovered = (await ok.json()) as any;
  t.deepEqual(discovered.result.supportedVersions, [MODERN]);
  t.is(discovered.result.resultType, 'complete');
  const mismatch = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: envelope } }, { 'Mcp-Method': 'tools/call' });
  t.is(mismatch.status, 400);
  t.truthy(((await mismatch.json()) as any).error);
  // The 2026 header without the envelope: invalid params, not the old "Unsupported protocol version".
  const bare = await post({ jsonrpc: '2.0', id: 3, method: 'server/discover', params: {} }, { 'Mcp-Method': 'server/discover' });
  t.is(bare.status, 400);
  const bareBody = (await bare.json()) as any;
  t.is(bareBody.error.code, -32602);
  t.notRegex(bareBody.error.message, /Unsupported protocol version/);
});

for (const version of ['2025-03-26', '2025-06-18', '2025-11-25']) {
  test(`${version}: the 1.x client initializes, lists and calls on the same URL, beside a 2026-07-28 client`, async (t) => {
    const client = new LegacyClient({ name: 'toolshed-tests-2025', version: '1.0.0' });
    const transport = new LegacyTransport(url);
    // The 1.x client offers its latest version in initialize; a client of an older release offers its own.
    const sent: string[] = [];
    const send = transport.send.bind(transport);
    transport.send = async (message, options) => {
      const m = message as { method?: string; params?: { protocolVersion?: string } };
      if (m.method === 'initialize' && m.params) m.params.protocolVersion = version;
      if (m.method) sent.push(m.method);
      return send(message, options);
    };
    await client.connect(transport);
    t.is(transport.protocolVersion, version);
    t.true(sent.includes('initialize'));
    t.is(client.getServerVersion()?.title, 'Both eras');
    const listed = await client.listTools();
    t.deepEqual(
      listed.tools.map((x) => x.name),
      ['slugify'],
    );
    t.false('resultType' in listed || 'ttlMs' in listed, 'no 2026 fields on a 2025 answer');
    const result = (await client.callTool({ name: 'slugify', arguments: { text: `Era ${version}` } })) as CallToolResult;
    t.falsy(result.isError);
    t.regex(textOf(result), new RegExp(`era-${version}`));
    // A 2026-07-28 client on the same URL meanwhile, and the 2025 client still served after it.
    const modern = await modernClient(url);
    t.regex(textOf((await modern.client.callTool({ name: 'slugify', arguments: { text: 'Modern Too' } })) as CallToolResult), /modern-too/);
    t.deepEqual(
      (await client.listTools()).tools.map((x) => x.name),
      ['slugify'],
    );
    await modern.client.close();
    await client.close();
  });
}
