/**
 * Health of MCP servers (worker/health.ts checkMcpServer) on the real worker and sandbox: a check starts the server
 * once per package, whatever its number of tools, and lists them; a tool it no longer lists is BROKEN, and a
 * tools/list that changed within a version flags the package's tools (`toolsChanged`). The server's starts are
 * counted on the host, at the sandbox runner's describe. The fixture server lists the tools named in a tools.json
 * beside it, which the test rewrites between checks; the real server-memory stays healthy.
 */
import test from 'ava';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { enqueue } from '../core/infra/jobs.js';
import type { PackageRef } from '../sandbox/types.js';
import { FIXTURES_DIR, startService, type Service } from './helpers/service.js';
import { until } from './helpers/processes.js';

const MODULES = path.resolve(new URL('../node_modules', import.meta.url).pathname);
const MEMORY = '@modelcontextprotocol/server-memory';
const FIXTURE = '@fixtures/mcp-from-file';
let svc: Service;
let root: string;
/** Server starts by package name, counted where the worker asks the sandbox to start and list a server. */
const starts = new Map<string, number>();

test.before(async () => {
  svc = await startService();
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'mcp-health-'));
  const sandbox = svc.worker!.deps.sandbox;
  const describe = sandbox.describe.bind(sandbox);
  sandbox.describe = (pkg: PackageRef, opts) => {
    starts.set(pkg.name, (starts.get(pkg.name) ?? 0) + 1);
    return describe(pkg, opts);
  };
});
test.after.always(async () => {
  await svc?.close();
  if (root) await fs.rm(root, { recursive: true, force: true });
});

const admin = (body: Record<string, unknown>) =>
  svc.request('POST', '/api/admin/packages', { headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` }, body });

/** Enqueues a health check and waits until each of the tools has a new health_checks row; answers those rows. */
async function checkNow(payload: { toolId?: string; packageId?: string }, toolIds: string[]) {
  const db = svc.api.deps.db;
  const count = async (id: string) => Number((await db('health_checks').where({ tool_id: id }).count('* as n').first())!.n);
  const before = new Map(await Promise.all(toolIds.map(async (id) => [id, await count(id)] as const)));
  await enqueue(db, 'health_check', payload);
  await until(
    async () => {
      for (const id of toolIds) if ((await count(id)) <= before.get(id)!) return false;
      return true;
    },
    180_000,
    'a health check of every tool',
  );
  const latest = async (id: string) =>
    (await db('health_checks').where({ tool_id: id }).orderBy('id', 'desc').first()) as { passed: boolean; error: string | null };
  return Object.fromEntries(await Promise.all(toolIds.map(async (id) => [id, await latest(id)] as const)));
}

const detail = async (tool: string, pkg = FIXTURE) => (await svc.request('GET', `/api/tools/${pkg}/${tool}`)).body.data;

test.serial('a server whose tools/list changes between checks: started once per check; a tool it drops is BROKEN; the package is flagged', async (t) => {
  const dir = path.join(root, 'from-file');
  await fs.mkdir(dir, { recursive: true });
  await fs.copyFile(path.join(FIXTURES_DIR, 'mcp-servers', 'server.cjs'), path.join(dir, 'server.cjs'));
  await fs.writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: FIXTURE, version: '1.0.0', bin: { 'mcp-from-file': 'server.cjs' } }));
  const imported = await admin({ source: `path:${dir}`, args: ['from-file'] });
  t.is(imported.status, 201, imported.text);
  const ids: Record<string, string> = Object.fromEntries(imported.body.data.tools.map((x: { name: string; id: string }) => [x.name, x.id]));
  t.deepEqual(Object.keys(ids).sort(), ['alpha', 'beta', 'gamma']);
  const all = Object.values(ids);

  // The periodic sweep checks the server once for its three tools.
  const startsBefore = starts.get(FIXTURE) ?? 0;
  const first = await checkNow({}, all);
  t.is((starts.get(FIXTURE) ?? 0) - startsBefore, 1, 'one start of the server for its three tools');
  for (const id of all) t.true(first[id].passed, String(first[id].error));
  t.like(await detail('alpha'), { healthStatus: 'HEALTHY', toolsChanged: null });

  // The installed package's tools.json changes what the server lists: gamma gone, beta's schema changed, delta new.
  const pkg = await svc.api.deps.db('packages').where({ name: FIXTURE }).first();
  const installPath = pkg.install_path as string;
  await fs.chmod(installPath, 0o755).catch(() => undefined);
  const listed = [{ name: 'alpha' }, { name: 'beta', inputSchema: { type: 'object', properties: { n: { type: 'number' } } } }, { name: 'delta' }];
  await fs.writeFile(path.join(installPath, 'tools.json'), JSON.stringify(listed));
  // A check asked for one tool checks its whole server, again from one start.
  const second = await checkNow({ toolId: ids.alpha }, all);
  t.is((starts.get(FIXTURE) ?? 0) - startsBefore, 2);
  t.true(second[ids.alpha].passed, String(second[ids.alpha].error));
  t.false(second[ids.beta].passed);
  t.regex(String(second[ids.beta].error), /tools\/list changed for version 1\.0\.0 since it was imported \(input schema\)/);
  const gamma = await detail('gamma');
  t.is(gamma.healthStatus, 'BROKEN', 'a tool the server no longer lists is BROKEN at once');
  t.regex(gamma.healthError, /the MCP server no longer lists the tool 'gamma' \(version 1\.0\.0\)/);
  const flagged = await detail('alpha');
  t.is(flagged.healthStatus, 'HEALTHY', 'a tool still listed as imported stays healthy');
  t.like(flagged.toolsChanged, { version: '1.0.0', added: ['delta'], removed: ['gamma'], changed: [{ tool: 'beta', fields: ['input schema'] }] });
  t.truthy(Date.parse(flagged.toolsChanged.detectedAt));
  t.deepEqual((await detail('beta')).toolsChanged, flagged.toolsChanged, 'every tool of the package carries the flag');

  // The same listing again: nothing new since the last check (the flag stays as it was detected).
  await checkNow({ packageId: pkg.id }, all);
  t.is((starts.get(FIXTURE) ?? 0) - startsBefore, 3);
  t.deepEqual((await detail('alpha')).toolsChanged, flagged.toolsChanged);
});

test.serial('the real server-memory stays healthy: one start per check, the same tools, no flag', async (t) => {
  const imported = await admin({ source: `path:${path.join(MODULES, MEMORY)}`, env: [{ name: 'MEMORY_FILE_PATH', required: false }] });
  t.is(imported.status, 201, imported.text);
  const tools: { id: string; name: string }[] = imported.body.data.tools;
  t.true(tools.length >= 5, tools.map((x) => x.name).join(','));
  const before = starts.get(MEMORY) ?? 0;
  const checks = await checkNow(
    { toolId: tools[0].id },
    tools.map((x) => x.id),
  );
  t.is((starts.get(MEMORY) ?? 0) - before, 1, `one start for its ${tools.length} tools`);
  for (const x of tools) t.true(checks[x.id].passed, `${x.name}: ${checks[x.id].error}`);
  const read = await detail('read_graph', MEMORY);
  t.like(read, { healthStatus: 'HEALTHY', toolsChanged: null });
});
