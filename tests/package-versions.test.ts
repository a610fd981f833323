/**
 * Versions (issue 24, items 3–4): every imported version stays recorded and runnable; `<package>@<version>/<tool>`
 * (and `::`) pins one wherever a tool reference is read; a breaking new version holds the collections that follow
 * the latest (with a notice), a compatible one moves them; the publisher (or the admin) deprecates a version; the npm
 * poller imports new versions from the registry npm is configured with — here a stand-in registry serving real
 * tarballs packed from tests/fixtures/packages/versioned-v1 and -v2.
 */
import test from 'ava';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { FIXTURES_DIR, startService, type Service } from './helpers/service.js';
import { until } from './helpers/processes.js';
import { startNpmRegistry, type StandInRegistry } from './helpers/npm-registry.js';
import { loadCollectionTools } from '../core/agents/agent-tools.js';

const PKG = 'toolshed-fixture-versioned';
let svc: Service;
let registry: StandInRegistry;
let alice: { id: string; username: string; key: string };
let bob: { id: string; username: string; key: string };

test.before(async () => {
  const folder = (v: number) => path.join(FIXTURES_DIR, 'packages', `versioned-v${v}`);
  registry = await startNpmRegistry(PKG, { '1.0.0': folder(1), '2.0.0': folder(2), '1.1.0': folder(1.1) });
  await registry.publish('1.0.0');
  // The poller runs every 1.2 s; it finds nothing new until the registry publishes 2.0.0.
  svc = await startService({ env: { NPM_USERCONFIG: registry.npmrc, NPM_POLL_INTERVAL_MINUTES: '0.02' } });
  alice = await svc.createUser();
  bob = await svc.createUser();
});
test.after.always(async () => {
  await svc?.close();
  await registry?.close();
});

const run = (ref: string, params: Record<string, unknown>) => svc.request('POST', `/api/tools/execute/${ref}`, { body: { params } });
const collection = async (uid: string) => (await svc.request('GET', `/api/collections/${uid}`, { key: alice.key })).body.data;
const changesOf = (cs: { tool: string; path: string; change: string; breaking: boolean }[]) =>
  cs.map((c) => `${c.breaking ? '!' : ''}${c.tool} ${c.path} ${c.change}`);

let following: { uid: string };
let compatible: { uid: string };
let pinned: { uid: string };

test.serial('the poller imports a new version; both stay runnable; pinned references run the version they name', async (t) => {
  const published = await svc.request('POST', '/api/packages', { key: alice.key, body: { source: `npm:${PKG}@1.0.0` } });
  t.is(published.status, 201, published.text);
  following = await svc.createCollection(alice.key, { name: 'Follows greet' }, [`${PKG}/greet`]);
  compatible = await svc.createCollection(alice.key, { name: 'Follows count' }, [`${PKG}::count`]);
  pinned = await svc.createCollection(alice.key, { name: 'Pins count' }, [`${PKG}@1.0.0/count`]);

  // A new version appears on the registry: the poller (not a request) imports it.
  await registry.publish('2.0.0');
  const polled = await until(
    async () => {
      const row = await svc.api.deps
        .db('package_imports')
        .where({ source: `npm:${PKG}@2.0.0` })
        .first();
      return row?.status === 'succeeded' || row?.status === 'failed' ? row : undefined;
    },
    120_000,
    'the poller to import 2.0.0',
  );
  const detail = (await svc.request('GET', `/api/packages/${PKG}`)).body.data;
  t.is(detail.version, '2.0.0');
  t.like(polled, { polled: true, requested_by: alice.id, status: 'succeeded' }, 'imported like the last import, for its publisher');
  t.deepEqual(
    detail.versions.map((v: { version: string; latest: boolean; publisher: string; tools: { name: string }[] }) => [
      v.version,
      v.latest,
      v.publisher,
      v.tools.map((x) => x.name).sort(),
    ]),
    [
      ['2.0.0', true, alice.username, ['count', 'greet']],
      ['1.0.0', false, alice.username, ['count', 'greet']],
    ],
  );

  const v1 = await run(`${PKG}@1.0.0/greet`, { name: 'Ada' });
  t.is(v1.status, 200, v1.text);
  t.deepEqual(v1.body.result, { text: 'Hello, Ada', version: '1.0.0' }, 'the pinned version runs its own code and schema');
  const v1colons = await run(`${PKG}@1.0.0::greet`, { name: 'Ada' });
  t.is(v1colons.body.result?.version, '1.0.0', v1colons.text);
  const latest = await run(`${PKG}/greet`, { name: 'Ada', lang: 'fr' });
  t.deepEqual(latest.body.result, { text: 'Bonjour, Ada', version: '2.0.0' }, 'unpinned runs the latest');
  t.is((await run(`${PKG}/greet`, { name: 'Ada' })).status, 400, "the latest's schema requires lang");
  const execution = await svc.request('GET', `/api/executions/${v1.body.executionId}`);
  t.is(execution.body.data.packageVersion, '1.0.0', 'the execution records the version that ran');

  const unknown = await run(`${PKG}@9.9.9/greet`, { name: 'Ada' });
  t.is(unknown.status, 404, unknown.text);
  t.is(unknown.body.error.code, 'NOT_FOUND');
  t.is((await svc.request('GET', `/api/packages/${PKG}/versions/9.9.9`)).status, 404);
  t.is((await svc.request('POST', `/api/collections/${following.uid}/tools`, { key: alice.key, body: { toolId: `${PKG}@9.9.9/count` } })).status, 404);
});

test.serial('a version reports its compatibility with the one before it', async (t) => {
  const res = await svc.request('GET', `/api/packages/${PKG}/versions/2.0.0`);
  t.is(res.status, 200, res.text);
  t.like(res.body.data, { name: PKG, version: '2.0.0', latest: true, compatibility: { from: '1.0.0', to: '2.0.0', compatible: false } });
  t.deepEqual(changesOf(res.body.data.compatibility.changes), [
    '!greet input.lang required property added',
    'greet description description changed: "Greets someone by name." → "Greets someone by name, in a language."',
    'count input.trim optional property added',
  ]);
  const first = (await svc.request('GET', `/api/packages/${PKG}/versions/1.0.0`)).body.data;
  t.like(first, { version: '1.0.0', latest: false, compatibility: null });
  t.deepEqual(first.tools.find((x: { name: string }) => x.name === 'greet').package, { npmPackageName: PKG, category: 'text-analysis', env: [] });
});

test.serial('a collection following the latest stays on a version that the new one breaks, and says so; a compatible one moves', async (t) => {
  const held = await collection(following.uid);
  t.like(held.tools[0], { name: 'greet', version: '1.0.0', pinned: false, toolId: `${PKG}@1.0.0::greet` });
  t.is(held.notices.length, 1);
  t.like(held.notices[0], { package: PKG, from: '1.0.0', to: '2.0.0', tools: ['greet'] });
  t.deepEqual(changesOf(held.notices[0].changes), [
    '!greet input.lang required property added',
    'greet description description changed: "Greets someone by name." → "Greets someone by name, in a language."',
  ]);
  const moved = await collection(compatible.uid);
  t.like(moved.tools[0], { name: 'count', version: '2.0.0', pinned: false, toolId: `${PKG}::count` });
  t.deepEqual(moved.notices, []);
  const pins = await collection(pinned.uid);
  t.like(pins.tools[0], { name: 'count', version: '1.0.0', pinned: true });
  t.deepEqual(pins.notices, []);
  // Scenario runs and agents load a collection's tools at the versions its entries are on.
  const forAgents = await loadCollectionTools(svc.api.deps.db, [held.id, moved.id, pins.id]);
  t.deepEqual(
    forAgents.map((x) => `${x.name}@${x.package_version}`),
    ['greet@1.0.0', 'count@2.0.0'],
    'a tool in two collections appears once, at its first entry',
  );

  // Its MCP endpoint serves (and runs) the version it is on.
  const client = new Client({ name: 'toolshed-tests', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${svc.url}/api/mcp/${alice.username}/${following.uid}/http`)));
  try {
    const { tools } = await client.listTools();
    t.deepEqual((tools[0].inputSchema as { required?: string[] }).required, ['name'], "the held version's schema");
    const r = (await client.callTool({ name: 'greet', arguments: { name: 'Ada' } })) as CallToolResult;
    t.falsy(r.isError, JSON.stringify(r));
    t.regex((r.content[0] as { text: string }).text, /"version":\s*"1\.0\.0"/);
  } finally {
    await client.close();
  }
});

test.serial('the publisher or the admin deprecates a version; another user gets a 403; a hidden package runs by pinned reference', async (t) => {
  const path_ = `/api/packages/${PKG}/versions/1.0.0`;
  t.is((await svc.request('PATCH', path_, { body: { deprecated: 'Use 2.x' } })).status, 401);
  const other = await svc.request('PATCH', path_, { key: bob.key, body: { deprecated: 'Use 2.x' } });
  t.is(other.status, 403, other.text);
  t.is((await svc.request('GET', path_)).body.data.deprecated, null, 'a refused change changes nothing');
  t.is((await svc.request('PATCH', path_, { key: alice.key, body: { deprecated: 'x'.repeat(501) } })).status, 400);
  const ok = await svc.request('PATCH', path_, { key: alice.key, body: { deprecated: 'Use 2.x' } });
  t.is(ok.status, 200, ok.text);
  t.is(ok.body.data.deprecated, 'Use 2.x');
  const versions = (await svc.request('GET', `/api/packages/${PKG}`)).body.data.versions;
  t.deepEqual(
    versions.map((v: { version: string; deprecated: string | null }) => [v.version, v.deprecated]),
    [
      ['2.0.0', null],
      ['1.0.0', 'Use 2.x'],
    ],
  );
  const admin = await svc.request('PATCH', path_, { headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` }, body: { deprecated: null } });
  t.is(admin.status, 200, admin.text);
  t.is(admin.body.data.deprecated, null);

  t.is((await svc.request('PATCH', `/api/packages/${PKG}`, { key: alice.key, body: { hidden: true } })).status, 200);
  const hidden = await run(`${PKG}@1.0.0/count`, { text: 'abc' });
  t.deepEqual(hidden.body.result, { length: 3, version: '1.0.0' }, hidden.text);
  t.is((await svc.request('PATCH', `/api/packages/${PKG}`, { key: alice.key, body: { hidden: false } })).status, 200);
});

test.serial('re-importing a known version (the latest or an older one) changes nothing', async (t) => {
  const snapshot = async () => ({
    pkg: await svc.api.deps.db('packages').where({ name: PKG }).first(),
    versions: await svc.api.deps.db('package_versions').orderBy('version'),
    tools: await svc.api.deps.db('tools').orderBy('name').select('id', 'name', 'input_schema', 'updated_at'),
  });
  const before = await snapshot();
  for (const version of ['1.0.0', '2.0.0']) {
    const again = await svc.request('POST', '/api/packages', { key: alice.key, body: { source: `npm:${PKG}@${version}` } });
    t.is(again.status, 201, again.text);
    t.is(again.body.data.importId, null, 'nothing is queued');
    const admin = await svc.importPackage(`npm:${PKG}@${version}`);
    t.is(admin.status, 201, admin.text);
  }
  t.deepEqual(await snapshot(), before);
});

test.serial('the latest is the highest version imported, not the last: an older version imported later is only recorded', async (t) => {
  // 1.1.0 appears on the registry after 2.0.0 (a backport): the poller does not follow it (it is below the latest)…
  await registry.publish('1.1.0');
  const res = await svc.request('POST', '/api/packages', { key: alice.key, body: { source: `npm:${PKG}@1.1.0` } });
  t.is(res.status, 201, res.text);
  t.like(res.body.data.package, { name: PKG, version: '1.1.0' }, 'the answer describes the version published');
  const status = await svc.request('GET', `/api/package-imports/${res.body.data.importId}`, { key: alice.key });
  t.like(status.body.data, { status: 'succeeded', package: { name: PKG, version: '1.1.0' } });
  // …and importing it by hand records it without making it the latest.
  const detail = (await svc.request('GET', `/api/packages/${PKG}`)).body.data;
  t.is(detail.version, '2.0.0');
  t.deepEqual(
    detail.versions.map((v: { version: string; latest: boolean }) => [v.version, v.latest]),
    [
      ['2.0.0', true],
      ['1.1.0', false],
      ['1.0.0', false],
    ],
  );
  t.like(detail.versions[1].compatibility, { from: '1.0.0', to: '1.1.0', compatible: true });
  t.deepEqual((await run(`${PKG}/count`, { text: 'ab' })).body.result, { length: 2, version: '2.0.0' }, 'unpinned still runs 2.0.0');
  t.deepEqual((await run(`${PKG}@1.1.0/count`, { text: 'ab' })).body.result, { length: 2, version: '1.1.0' });
  t.like((await collection(compatible.uid)).tools[0], { version: '2.0.0' }, 'a collection following the latest stays on it');
  t.is((await svc.api.deps.db('package_imports').where({ source: `npm:${PKG}@1.1.0`, polled: true })).length, 0, 'the poller left it alone');
});
