/**
 * Imported MCP servers in the MCP Registry read API (api/registry/routes.ts): each is a server of its own beside the
 * collections, in the official server.json shape (validated with the registry's own OpenAPI document), with one npm
 * stdio `packages[]` entry carrying the import's arguments and declared environment variables; listed, searched,
 * paged and read by name and version like the collections.
 */
import test from 'ava';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { EXAMPLES_DIR, FIXTURES_DIR, startService, type Service } from './helpers/service.js';

const MODULES = path.resolve(new URL('../node_modules', import.meta.url).pathname);
const EVERYTHING = '@modelcontextprotocol/server-everything';
const FIXTURE = '@fixtures/mcp-registry-good';
const RDNS = 'test.example.tools';
let svc: Service;
let root: string;
let serverList: ValidateFunction;
let serverResponse: ValidateFunction;

const admin = (body: Record<string, unknown>) =>
  svc.request('POST', '/api/admin/packages', { headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` }, body });

test.before(async () => {
  const openapi = parseYaml(await fs.readFile(path.join(FIXTURES_DIR, 'mcp-registry', 'openapi.yaml'), 'utf8'));
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema(openapi, 'registry');
  serverList = ajv.getSchema('registry#/components/schemas/ServerList')!;
  serverResponse = ajv.getSchema('registry#/components/schemas/ServerResponse')!;
  svc = await startService({ sandbox: 'process', env: { REGISTRY_NAMESPACE: 'tools.example.test' } });
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'mcp-registry-'));
  const everything = await admin({ source: `path:${path.join(MODULES, EVERYTHING)}` });
  if (everything.status !== 201) throw new Error(everything.text);
  // The hand-written fixture server (its mode is its first argument), imported with arguments and declared env.
  const dir = path.join(root, 'good');
  await fs.mkdir(dir, { recursive: true });
  await fs.copyFile(path.join(FIXTURES_DIR, 'mcp-servers', 'server.cjs'), path.join(dir, 'server.cjs'));
  await fs.writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: FIXTURE, version: '1.2.3', bin: { 'mcp-good': 'server.cjs' } }));
  const fixture = await admin({
    source: `path:${dir}`,
    args: ['good', '--verbose', `--key=\${FIXTURE_API_KEY}`],
    env: [
      { name: 'FIXTURE_API_KEY', required: true, secret: true, description: 'The key of the fixture service' },
      { name: 'FIXTURE_REGION', required: false },
    ],
  });
  if (fixture.status !== 201) throw new Error(fixture.text);
  const text = await svc.importPackage(`path:${path.join(EXAMPLES_DIR, 'text-tools')}`);
  if (text.status !== 201) throw new Error(text.text);
  const user = await svc.createUser();
  await svc.createCollection(user.key, { name: 'Registry mix', uid: 'registry-mix', isPublic: true }, ['@toolshed-examples/text-tools::slugify']);
});
test.after.always(async () => {
  await svc?.close();
  if (root) await fs.rm(root, { recursive: true, force: true });
});

const list = (query = '') => svc.request('GET', `/v0.1/servers${query}`);
const packageOf = (s: any) => s.server.packages?.[0];

test('an imported MCP server is a registry server of its own: server.json shape, one npm stdio package', async (t) => {
  const res = await list();
  t.is(res.status, 200, res.text);
  t.true(serverList(res.body), JSON.stringify(serverList.errors));
  const everything = res.body.servers.find((s: any) => s.server.name === `${RDNS}.npm.modelcontextprotocol/server-everything`);
  t.truthy(everything, JSON.stringify(res.body.servers.map((s: any) => s.server.name)));
  t.falsy(everything.server.remotes, 'a package server is run by the client, not called remotely');
  t.like(everything.server, { version: '2026.8.31', title: EVERYTHING });
  t.deepEqual(everything.server.packages, [
    { registryType: 'npm', identifier: EVERYTHING, version: '2026.8.31', transport: { type: 'stdio' }, environmentVariables: [] },
  ]);
  const meta = everything._meta[`${RDNS}/toolshed`];
  t.like(meta, { status: 'active', isLatest: true, package: { name: EVERYTHING, kind: 'mcp' } });
  t.true(
    meta.tools.some((x: any) => x.name === 'echo' && x.toolId === `${EVERYTHING}::echo`),
    'its tools are named',
  );
  t.is(meta.toolCount, meta.tools.length);
  const collection = res.body.servers.find((s: any) => s.server.remotes);
  t.truthy(collection, 'collections stay listed beside them');
});

test("the server's arguments and declared environment variables are its package's packageArguments and environmentVariables", async (t) => {
  const res = await svc.request('GET', `/v0.1/servers/${encodeURIComponent(`${RDNS}.npm.fixtures/mcp-registry-good`)}/versions/latest`);
  t.is(res.status, 200, res.text);
  t.true(serverResponse(res.body), JSON.stringify(serverResponse.errors));
  t.deepEqual(packageOf(res.body), {
    registryType: 'npm',
    identifier: FIXTURE,
    version: '1.2.3',
    transport: { type: 'stdio' },
    packageArguments: [
      { type: 'positional', value: 'good' },
      { type: 'positional', value: '--verbose' },
      // An argument naming a variable (each caller's value there) is the registry's placeholder, described under `variables`.
      {
        type: 'positional',
        value: '--key={FIXTURE_API_KEY}',
        variables: { FIXTURE_API_KEY: { isRequired: true, isSecret: true, description: 'The key of the fixture service' } },
      },
    ],
    environmentVariables: [
      { name: 'FIXTURE_API_KEY', description: 'The key of the fixture service', isRequired: true, isSecret: true },
      { name: 'FIXTURE_REGION', isRequired: false, isSecret: false },
      // Named in the server's code, read when a tool runs (worker/env-named.ts).
      { name: 'FIXTURE_LAZY_TOKEN', description: "Named in the package's code (process.env); read when a tool runs", isRequired: false, isSecret: true },
      // Settings of the same service its code reads: declared, not secret (else they would never reach it).
      ...['FIXTURE_VAR', 'FIXTURE_ORG_URL', 'FIXTURE_STRING_INPUT'].map((name) => ({
        name,
        description: "Named in the package's code (process.env); read when a tool runs",
        isRequired: false,
        isSecret: false,
      })),
    ],
  });
  t.regex(res.body.server.description, /mcp-registry-good: an MCP server of 3 tools/);
});

test('read by name: versions, an exact version, latest, the split form; another version or name is a 404', async (t) => {
  const name = `${RDNS}.npm.modelcontextprotocol/server-everything`;
  const versions = await svc.request('GET', `/v0.1/servers/${encodeURIComponent(name)}/versions`);
  t.is(versions.status, 200, versions.text);
  t.true(serverList(versions.body), JSON.stringify(serverList.errors));
  t.deepEqual(
    versions.body.servers.map((s: any) => s.server.version),
    ['2026.8.31'],
  );
  const exact = await svc.request('GET', `/v0.1/servers/${encodeURIComponent(name)}/versions/2026.8.31`);
  t.is(exact.status, 200, exact.text);
  t.is(exact.body.server.name, name);
  const split = await svc.request('GET', `/v0.1/servers/${name}/versions/latest`);
  t.is(split.status, 200, split.text);
  t.deepEqual(split.body, exact.body);
  t.deepEqual((await svc.request('GET', `/v0.1/servers/${encodeURIComponent(name)}/versions/1.0.0`)).body, { error: 'Server version not found' });
  const unknown = await svc.request('GET', `/v0.1/servers/${encodeURIComponent(`${RDNS}.npm/no-such-server`)}/versions`);
  t.is(unknown.status, 404);
  const notMcp = await svc.request('GET', `/v0.1/servers/${encodeURIComponent(`${RDNS}.npm.toolshed-examples/text-tools`)}/versions`);
  t.is(notMcp.status, 404, 'a package of plain tools is no MCP server');
});

test('search and paging include the MCP servers: one page at a time, every server once, in name order', async (t) => {
  const found = await list('?search=server-everything');
  t.is(found.status, 200, found.text);
  t.deepEqual(
    found.body.servers.map((s: any) => s.server.name),
    [`${RDNS}.npm.modelcontextprotocol/server-everything`],
  );
  const byVersion = await list('?version=1.2.3');
  t.deepEqual(
    byVersion.body.servers.map((s: any) => packageOf(s)?.identifier),
    [FIXTURE],
  );
  const all = (await list('?limit=100')).body.servers.map((s: any) => s.server.name);
  t.true(all.length >= 3, all.join(', '));
  const paged: string[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 10; i++) {
    const page = await list(`?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    t.is(page.status, 200, page.text);
    t.true(serverList(page.body), JSON.stringify(serverList.errors));
    paged.push(...page.body.servers.map((s: any) => s.server.name));
    cursor = page.body.metadata.nextCursor;
    if (!cursor) break;
  }
  t.deepEqual(paged, all);
  t.deepEqual(
    all.slice(0, 2),
    [`${RDNS}.npm.fixtures/mcp-registry-good`, `${RDNS}.npm.modelcontextprotocol/server-everything`],
    'the MCP servers first, by name',
  );
  t.regex(all.at(-1), new RegExp(`^${RDNS.replace(/\./g, '\\.')}/`), 'then the collections');
});

test.serial("a page's servers are read together: its packages' tools in one query, each server as read alone", async (t) => {
  // Collections of two owners sharing tools, beside the two MCP servers: one page carries them all.
  const [ann, ben] = [await svc.createUser(), await svc.createUser()];
  const TEXT = '@toolshed-examples/text-tools';
  await svc.createCollection(ann.key, { name: 'Page one', uid: 'page-one', isPublic: true }, [`${TEXT}::slugify`, `${TEXT}::convertCase`]);
  await svc.createCollection(ann.key, { name: 'Page two', uid: 'page-two', isPublic: true }, [`${TEXT}::convertCase`, `${EVERYTHING}::echo`]);
  await svc.createCollection(ben.key, { name: 'Page three', uid: 'page-three', isPublic: true }, [`${EVERYTHING}::echo`, `${TEXT}::slugify`]);
  const sqls: string[] = [];
  const onQuery = (q: { sql: string }) => sqls.push(q.sql);
  svc.api.deps.db.on('query', onQuery);
  const res = await list('?limit=100');
  svc.api.deps.db.off('query', onQuery);
  t.is(res.status, 200, res.text);
  t.true(serverList(res.body), JSON.stringify(serverList.errors));
  const names: string[] = res.body.servers.map((s: any) => s.server.name);
  t.true(names.length >= 6, names.join(', '));
  t.is(sqls.filter((s) => /where "t"\."package_id" (=|in)/.test(s)).length, 1, `the packages' tools in one read:\n${sqls.join('\n')}`);
  t.true(sqls.filter((s) => s.includes('"t"."id" in')).length <= 1, `the collections' tools in at most one read:\n${sqls.join('\n')}`);
  for (const s of res.body.servers) {
    const alone = await svc.request('GET', `/v0.1/servers/${encodeURIComponent(s.server.name)}/versions/latest`);
    t.is(alone.status, 200, alone.text);
    t.deepEqual(s, alone.body, s.server.name);
  }
  const two = res.body.servers.find((s: any) => s.server.name.endsWith('.page-two'));
  t.deepEqual(
    two._meta[`${RDNS}/toolshed`].tools.map((x: any) => x.toolId),
    [`${TEXT}::convertCase`, `${EVERYTHING}::echo`],
    'each collection keeps its own tools in their order',
  );
});
