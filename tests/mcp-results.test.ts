/**
 * Issue 44, items 4 and 5: an imported MCP server's results reach an MCP client as the server gave them, and the MCP
 * endpoints for browsers and URLs. The real server-everything (a devDependency) imported from node_modules, the real
 * SDK client through the real service; the process sandbox (the sandbox is not the subject).
 */
import test from 'ava';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startService, type Service } from './helpers/service.js';

const MODULES = path.resolve(new URL('../node_modules', import.meta.url).pathname);
const EVERYTHING = '@modelcontextprotocol/server-everything';
const ALLOWED = 'https://app.example';
let svc: Service;
let url: string;

test.before(async () => {
  svc = await startService({ sandbox: 'process', env: { MCP_ALLOWED_ORIGINS: `${ALLOWED}, http://localhost:6274` } });
  const imported = await svc.importPackage(`path:${path.join(MODULES, EVERYTHING)}`);
  if (imported.status !== 201) throw new Error(imported.text);
  const user = await svc.createUser();
  const tools = ['get-tiny-image', 'get-resource-links', 'get-resource-reference', 'get-structured-content', 'echo'].map((n) => `${EVERYTHING}::${n}`);
  const c = await svc.createCollection(user.key, { name: 'Everything results', isPublic: true }, tools);
  url = `${svc.url}/api/mcp/${user.username}/${c.uid}/mcp`;
});
test.after.always(() => svc?.close());

async function connect(at = url): Promise<Client> {
  const client = new Client({ name: 'toolshed-tests', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(at)));
  return client;
}

const rpc = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', ...headers },
    body: JSON.stringify(body),
  });

test("an image comes back as the server's image block, not as JSON text, and no structuredContent without an output schema", async (t) => {
  const client = await connect();
  const r = (await client.callTool({ name: 'get-tiny-image', arguments: {} })) as CallToolResult;
  t.falsy(r.isError, JSON.stringify(r).slice(0, 300));
  t.deepEqual(
    r.content.map((b) => b.type),
    ['text', 'image', 'text'],
  );
  const image = r.content[1] as { type: 'image'; data: string; mimeType: string };
  t.is(image.mimeType, 'image/png');
  t.true(Buffer.from(image.data, 'base64').subarray(1, 4).toString() === 'PNG', 'the PNG bytes as the server sent them');
  t.is(r.structuredContent, undefined, 'get-tiny-image declares no outputSchema');
  t.truthy(r._meta?.['toolshed/executionId']);
  // REST keeps its shape: { content: [...] } as the server gave it.
  const rest = await svc.request('POST', `/api/tools/execute/${EVERYTHING}/get-tiny-image`, { body: { params: {} } });
  t.is(rest.status, 200, rest.text);
  t.deepEqual(
    rest.body.result.content.map((b: { type: string }) => b.type),
    ['text', 'image', 'text'],
  );
  await client.close();
});

test('resource links and embedded resources are passed through as content blocks', async (t) => {
  const client = await connect();
  const links = (await client.callTool({ name: 'get-resource-links', arguments: { count: 2 } })) as CallToolResult;
  t.falsy(links.isError, JSON.stringify(links).slice(0, 300));
  const linked = links.content.filter((b) => b.type === 'resource_link');
  t.is(linked.length, 2, JSON.stringify(links.content).slice(0, 300));
  t.regex((linked[0] as { uri: string }).uri, /^demo:\/\//);
  const ref = (await client.callTool({ name: 'get-resource-reference', arguments: { resourceType: 'Text', resourceId: 1 } })) as CallToolResult;
  t.falsy(ref.isError, JSON.stringify(ref).slice(0, 300));
  const embedded = ref.content.find((b) => b.type === 'resource') as { resource: { uri: string; text?: string } } | undefined;
  t.truthy(embedded, JSON.stringify(ref.content).slice(0, 300));
  t.regex(embedded!.resource.uri, /^demo:\/\//);
  t.is(ref.structuredContent, undefined);
  await client.close();
});

test('a tool that declares an output schema gets structuredContent (checked by the SDK client) beside its JSON text', async (t) => {
  const client = await connect();
  const listed = await client.listTools();
  t.truthy(listed.tools.find((x) => x.name === 'get-structured-content')?.outputSchema);
  t.is(listed.tools.find((x) => x.name === 'get-tiny-image')?.outputSchema, undefined);
  const r = (await client.callTool({ name: 'get-structured-content', arguments: { location: 'Chicago' } })) as CallToolResult;
  t.falsy(r.isError, JSON.stringify(r));
  t.deepEqual(r.structuredContent, { temperature: 36, conditions: 'Light rain / drizzle', humidity: 82 });
  t.deepEqual(JSON.parse((r.content[0] as { text: string }).text), r.structuredContent);
  const echo = (await client.callTool({ name: 'echo', arguments: { message: 'plain' } })) as CallToolResult;
  t.deepEqual(echo.content, [{ type: 'text', text: 'Echo: plain' }], 'a text block as the server gave it, not JSON of { content }');
  t.is(echo.structuredContent, undefined);
  await client.close();
});

test('the /mcp URL and the first /http one serve the same collection', async (t) => {
  for (const at of [url, url.replace(/\/mcp$/, '/http')]) {
    const client = await connect(at);
    const names = (await client.listTools()).tools.map((x) => x.name);
    t.true(names.includes('get-tiny-image'), `${at}: ${names.join(',')}`);
    await client.close();
  }
});

test('Origin: a foreign one is a 403 and gets no CORS; an allowed one gets CORS and its preflight; none is served', async (t) => {
  const list = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
  const evil = await rpc(list, { origin: 'http://evil.example' });
  t.is(evil.status, 403);
  t.is(evil.headers.get('access-control-allow-origin'), null);
  t.is((await evil.json()).error.code, 'FORBIDDEN');
  const evilPreflight = await fetch(url, { method: 'OPTIONS', headers: { origin: 'http://evil.example', 'access-control-request-method': 'POST' } });
  t.is(evilPreflight.status, 403);
  t.is(evilPreflight.headers.get('access-control-allow-origin'), null);

  const preflight = await fetch(url, {
    method: 'OPTIONS',
    headers: {
      origin: ALLOWED,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type, mcp-protocol-version, authorization',
    },
  });
  t.is(preflight.status, 204);
  t.is(preflight.headers.get('access-control-allow-origin'), ALLOWED);
  t.regex(preflight.headers.get('access-control-allow-methods') ?? '', /POST/);
  t.regex(preflight.headers.get('access-control-allow-headers') ?? '', /mcp-protocol-version/);
  const allowed = await rpc(list, { origin: ALLOWED });
  t.is(allowed.status, 200);
  t.is(allowed.headers.get('access-control-allow-origin'), ALLOWED);
  t.regex(allowed.headers.get('access-control-expose-headers') ?? '', /Mcp-Session-Id/i);
  const none = await rpc(list);
  t.is(none.status, 200, 'a client that sends no Origin (every non-browser one) is served');
  t.is(none.headers.get('access-control-allow-origin'), null);
});

test('a bogus tools/list cursor is -32602; tools/call with a 2025-11-25 task is served as a task (api/mcp/tasks.ts), at 2025-06-18 as a plain call', async (t) => {
  const bogus = await rpc({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: { cursor: 'not-a-cursor' } });
  t.is(bogus.status, 200);
  const b = await bogus.json();
  t.is(b.error?.code, -32602, JSON.stringify(b));
  t.regex(b.error.message, /cursor/);
  const task = await rpc({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'echo', arguments: { message: 'as a task' }, task: { ttl: 60_000 } } });
  t.is(task.status, 200);
  const r = await task.json();
  t.falsy(r.error, JSON.stringify(r));
  t.truthy(r.result.task?.taskId, JSON.stringify(r));
  const result = await (await rpc({ jsonrpc: '2.0', id: 9, method: 'tasks/result', params: { taskId: r.result.task.taskId } })).json();
  t.deepEqual(result.result.content, [{ type: 'text', text: 'Echo: as a task' }], JSON.stringify(result));
  const older = await rpc(
    { jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'echo', arguments: { message: 'as a task' }, task: { ttl: 60_000 } } },
    { 'mcp-protocol-version': '2025-06-18' },
  );
  const o = await older.json();
  t.falsy(o.error, JSON.stringify(o));
  t.deepEqual(o.result.content, [{ type: 'text', text: 'Echo: as a task' }]);
});

const INSPECTOR = path.join(MODULES, '@modelcontextprotocol/inspector-cli/build/index.js');
/**
 * The CLI picks its package.json by `fs.existsSync('../package.json')` (relative to the working directory) and then
 * imports that path relative to its module: it runs from its own build folder.
 */
const inspector = async (...args: string[]) =>
  JSON.parse((await promisify(execFile)(process.execPath, [INSPECTOR, url, ...args], { timeout: 60_000, cwd: path.dirname(INSPECTOR) })).stdout);

test('the MCP Inspector CLI lists and calls tools over the /mcp URL (its transport told from the URL alone)', async (t) => {
  const listed = await inspector('--method', 'tools/list');
  t.true(
    listed.tools.some((x: { name: string }) => x.name === 'get-tiny-image'),
    JSON.stringify(listed).slice(0, 300),
  );
  const called = await inspector('--method', 'tools/call', '--tool-name', 'get-tiny-image');
  t.deepEqual(
    called.content.map((b: { type: string }) => b.type),
    ['text', 'image', 'text'],
  );
  const echoed = await inspector('--method', 'tools/call', '--tool-name', 'echo', '--tool-arg', 'message=from the inspector');
  t.deepEqual(echoed.content, [{ type: 'text', text: 'Echo: from the inspector' }]);
});
