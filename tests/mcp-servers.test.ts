/**
 * MCP servers from npm, imported and run: real servers (@modelcontextprotocol/server-everything and server-memory,
 * pinned as devDependencies, imported from node_modules with `path:`), each started in a gVisor sandbox and spoken to
 * with the official MCP client; their tools called through REST and through a collection's MCP endpoint.
 */
import test from 'ava';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { parse as parseYaml } from 'yaml';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { FIXTURES_DIR, startService, type Service } from './helpers/service.js';
import { postJson, readSse } from './helpers/sse.js';

const MODULES = path.resolve(new URL('../node_modules', import.meta.url).pathname);
const EVERYTHING = '@modelcontextprotocol/server-everything';
const MEMORY = '@modelcontextprotocol/server-memory';
let svc: Service;
let everything: { status: number; body: any; text: string };

const importWith = (body: Record<string, unknown>) =>
  svc.request('POST', '/api/admin/packages', { headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` }, body });

test.before(async () => {
  svc = await startService();
  everything = await svc.importPackage(`path:${path.join(MODULES, EVERYTHING)}`);
});
test.after.always(() => svc?.close());

const execute = (slug: string, body: unknown) => svc.request('POST', `/api/tools/execute/${slug}`, { body });

test('a real MCP server imports from its folder: its tools keep their MCP names, schemas and annotations', async (t) => {
  t.is(everything.status, 201, everything.text);
  t.is(everything.body.data.package.name, EVERYTHING);
  t.is(everything.body.data.package.kind, 'mcp');
  const names = everything.body.data.tools.map((x: { name: string }) => x.name);
  t.true(names.includes('echo'), names.join(','));
  t.true(names.includes('get-env'), 'a hyphenated MCP name is kept as is');
  const echo = await svc.request('GET', `/api/tools/${EVERYTHING}/echo`);
  t.is(echo.status, 200, echo.text);
  t.regex(echo.body.data.description, /echo/i);
  t.like(echo.body.data.inputSchema, { type: 'object', properties: { message: { type: 'string' } } });
  const getEnv = await svc.request('GET', `/api/tools/${EVERYTHING}/get-env`);
  t.is(getEnv.status, 200, 'a tool named get-env is found by its slug');
  t.is(getEnv.body.data.healthStatus, 'HEALTHY');
});

test('an MCP tool runs through REST: one tools/call in a sandbox; content blocks come back as { content }', async (t) => {
  const res = await execute(`${EVERYTHING}/echo`, { params: { message: 'hello from a sandbox' } });
  t.is(res.status, 200, res.text);
  t.deepEqual(res.body.result, { content: [{ type: 'text', text: 'Echo: hello from a sandbox' }] });
});

test("an MCP tool gets the caller's env and nothing else; the server sees it in its environment", async (t) => {
  const res = await execute(`${EVERYTHING}/get-env`, { params: {}, env: {} });
  t.is(res.status, 200, res.text);
  const env = JSON.parse(res.body.result.content[0].text);
  t.is(env.DATABASE_URL, undefined, "nothing of the service's environment");
  t.is(env.ADMIN_TOKEN, undefined);
  t.is(env.HOME, '/tmp/home', 'a private home on the sandbox tmpfs');
});

test('an MCP tool is served by a collection MCP endpoint and called with the real MCP client', async (t) => {
  const user = await svc.createUser();
  const c = await svc.createCollection(user.key, { name: 'Everything echo' }, [`${EVERYTHING}::echo`]);
  const client = new Client({ name: 'toolshed-tests', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${svc.url}/api/mcp/${user.username}/${c.uid}/http`)));
  const listed = await client.listTools();
  t.deepEqual(
    listed.tools.map((x) => x.name),
    ['echo'],
  );
  const r = (await client.callTool({ name: 'echo', arguments: { message: 'via MCP' } })) as CallToolResult;
  t.falsy(r.isError, JSON.stringify(r));
  t.true(JSON.stringify(r.content).includes('Echo: via MCP'), JSON.stringify(r.content));
  await client.close();
});

test('an MCP tool runs through every caller of the one path: the agent stream (prompt execute) and a scenario run', async (t) => {
  const stream = await readSse(
    `${svc.url}/api/tools/execute/${EVERYTHING}/echo`,
    postJson(undefined, { prompt: 'Echo this', parameters: { message: 'via the agent' } }),
  );
  const completed = stream.events.find((e) => e.event === 'tool.completed');
  t.truthy(completed, stream.text);
  t.deepEqual(completed!.data.output, { content: [{ type: 'text', text: 'Echo: via the agent' }] });
  const user = await svc.createUser({ tier: 'pro' });
  const c = await svc.createCollection(user.key, { name: 'Echo runs' }, [`${EVERYTHING}::echo`]);
  const s = await svc.request('POST', '/api/scenarios', { key: user.key, body: { collectionId: c.id, prompt: 'Echo the message "hello scenario"' } });
  t.is(s.status, 201, s.text);
  const run = await svc.request('POST', `/api/scenarios/${s.body.data.id}/run`, { key: user.key });
  t.is(run.status, 200, run.text);
  const step = run.body.data.steps[0];
  t.like(step, { toolName: 'echo' }, JSON.stringify(run.body.data));
  t.regex(JSON.stringify(step.output), /Echo: /, JSON.stringify(step));
  const execution = await svc.request('GET', `/api/executions/${step.executionId}`, { key: user.key });
  t.like(execution.body.data, { status: 'succeeded' }, 'the inline call is finished like a queued one');
});

test('server-memory imports with an env variable declared and keeps its store where it is told', async (t) => {
  const res = await importWith({
    source: `path:${path.join(MODULES, MEMORY)}`,
    env: [{ name: 'MEMORY_FILE_PATH', required: false, description: 'Where the knowledge graph is kept' }],
  });
  t.is(res.status, 201, res.text);
  t.is(res.body.data.package.kind, 'mcp');
  t.is(res.body.data.package.category, 'ai-ml', 'inferred from "memory" and "knowledge graph"');
  const names = res.body.data.tools.map((x: { name: string }) => x.name).sort();
  t.true(names.includes('create_entities') && names.includes('read_graph'), names.join(','));
  const created = await execute(`${MEMORY}/create_entities`, {
    params: { entities: [{ name: 'Ada', entityType: 'person', observations: ['wrote the first program'] }] },
    env: { MEMORY_FILE_PATH: '/tmp/memory.jsonl' },
  });
  t.is(created.status, 200, created.text);
  t.like(created.body.result, { entities: [{ name: 'Ada' }] });
});

test('a real MCP server installs from npm with one request (npm: source) and its tool runs', async (t) => {
  const res = await svc.importPackage('npm:@modelcontextprotocol/server-sequential-thinking@2026.8.31');
  t.is(res.status, 201, res.text);
  t.is(res.body.data.package.kind, 'mcp');
  t.deepEqual(
    res.body.data.tools.map((x: { name: string }) => x.name),
    ['sequentialthinking'],
  );
  const run = await execute('@modelcontextprotocol/server-sequential-thinking/sequentialthinking', {
    params: { thought: 'First, look.', thoughtNumber: 1, totalThoughts: 1, nextThoughtNeeded: false },
  });
  t.is(run.status, 200, run.text);
  t.like(run.body.result, { thoughtNumber: 1, totalThoughts: 1, nextThoughtNeeded: false });
});

/** A package holding the fixture MCP server, with the given dependencies. */
async function serverWithDependencies(name: string, dependencies: Record<string, string>): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mcp-deps-'));
  await fs.copyFile(path.join(FIXTURES_DIR, 'mcp-servers', 'server.cjs'), path.join(dir, 'server.cjs'));
  await fs.writeFile(path.join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', bin: 'server.cjs', dependencies }));
  return dir;
}

test('dependencies whose peers conflict at the root (ERESOLVE) install as a plain `npm install <package>` would', async (t) => {
  // react-dom 18 wants react 18 as a peer; a plain install of a package depending on both settles it with a warning.
  const dir = await serverWithDependencies('@fixtures/mcp-peer-conflict', { react: '17.0.2', 'react-dom': '18.2.0' });
  const res = await importWith({ source: `path:${dir}`, kind: 'mcp', args: ['good'] });
  t.is(res.status, 201, res.text);
  t.is(res.body.data.package.kind, 'mcp');
});

test("an install that fails is a 400 with npm's message, not a 500", async (t) => {
  const dir = await serverWithDependencies('@fixtures/mcp-no-such-version', { 'is-number': '99.99.99' });
  const res = await importWith({ source: `path:${dir}`, kind: 'mcp', args: ['good'] });
  t.is(res.status, 400, res.text);
  t.is(res.body.error.code, 'VALIDATION_ERROR');
  t.regex(res.body.error.message, /installing dependencies failed: .*(ETARGET|No matching version).*is-number/);
  t.notRegex(res.body.error.message, /_logs|\/root\//, 'no host paths');
});

test('/v0.1/servers: a collection holding an MCP server tool lists the server as an npm stdio package beside its remote', async (t) => {
  const openapi = parseYaml(await fs.readFile(path.join(FIXTURES_DIR, 'mcp-registry', 'openapi.yaml'), 'utf8'));
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema(openapi, 'registry');
  const validate = ajv.getSchema('registry#/components/schemas/ServerList')!;
  const user = await svc.createUser();
  await svc.createCollection(user.key, { name: 'Registry echo', uid: 'registry-echo' }, [`${EVERYTHING}::echo`]);
  const res = await svc.request('GET', '/v0.1/servers?search=registry-echo');
  t.is(res.status, 200, res.text);
  t.true(validate(res.body), JSON.stringify(validate.errors));
  const server = res.body.servers[0].server;
  t.is(server.remotes[0].type, 'streamable-http');
  t.like(server.packages, [{ registryType: 'npm', identifier: EVERYTHING, version: '2026.8.31', transport: { type: 'stdio' } }]);
});
