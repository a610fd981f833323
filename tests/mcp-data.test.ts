/**
 * Issue 46 item 5 (its MCP forms): a writable data folder per call, and settings that are not credentials reach the
 * server. The real `@modelcontextprotocol/server-memory` (a devDependency) writes its memory.jsonl beside its own
 * dist/index.js: under gVisor its package is an overlay whose writes land in a tmpfs of the sandbox's own
 * (sandbox/package-view.ts), never in the package cache nor in another call's sandbox. Every call runs in a sandbox of
 * its own (the default, no SANDBOX_REUSE), so what a call writes is gone for the next call.
 */
import test from 'ava';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FIXTURES_DIR, startService, type Service } from './helpers/service.js';
import { filesUnder } from './helpers/files.js';

const MODULES = path.resolve(new URL('../node_modules', import.meta.url).pathname);
const MEMORY = '@modelcontextprotocol/server-memory';
let svc: Service;

test.before(async () => {
  svc = await startService({ env: { EXECUTION_TIMEOUT_MS: '30000' } });
  const imported = await svc.importPackage(`path:${path.join(MODULES, MEMORY)}`);
  if (imported.status !== 201) throw new Error(imported.text);
});
test.after.always(() => svc?.close());

const call = (key: string, tool: string, params: unknown) => svc.request('POST', `/api/tools/execute/${MEMORY}/${tool}`, { key, body: { params } });

/** Every memory.jsonl under a directory (the package cache, the installed package). */
const memoryFiles = (dir: string) => filesUnder(dir).filter((f) => path.basename(f).startsWith('memory.json'));

test("server-memory's create_entities writes beside itself and succeeds; nothing reaches the package cache or another caller", async (t) => {
  const alice = await svc.createUser();
  const bob = await svc.createUser();
  const entity = { name: 'Ada', entityType: 'person', observations: ['wrote the first program'] };
  const created = await call(alice.key, 'create_entities', { entities: [entity] });
  t.is(created.status, 200, created.text);
  t.not(created.body.status, 'error', JSON.stringify(created.body).slice(0, 500));
  t.notRegex(JSON.stringify(created.body), /EACCES|EROFS|read-only/i);
  t.regex(JSON.stringify(created.body.result), /Ada/);
  const graph = await call(alice.key, 'read_graph', {});
  t.is(graph.status, 200, graph.text);
  t.not(graph.body.status, 'error', JSON.stringify(graph.body).slice(0, 500));
  // Another caller's call (as every call: a sandbox of its own) does not see Ada.
  const other = await call(bob.key, 'read_graph', {});
  t.is(other.status, 200, other.text);
  t.not(other.body.status, 'error', JSON.stringify(other.body).slice(0, 500));
  t.notRegex(JSON.stringify(other.body.result), /Ada/);
  t.deepEqual(memoryFiles(path.join(MODULES, MEMORY)), [], 'the installed package is unchanged');
  t.deepEqual(memoryFiles(svc.config.PACKAGE_CACHE_DIR), [], 'the package cache is unchanged');
});

/** A package of the fixture server in its `settings` mode (its `settings` tool says whether DATA_DIR reached it). */
function settingsPackage(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-settings-'));
  fs.chmodSync(dir, 0o755);
  fs.copyFileSync(path.join(FIXTURES_DIR, 'mcp-servers', 'server.cjs'), path.join(dir, 'server.cjs'));
  const pkg = { name: '@fixtures/mcp-settings', version: '1.0.0', fixtureMode: 'settings', bin: { 'mcp-settings': 'server.cjs' } };
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify(pkg));
  return dir;
}

const importSettings = (dir: string, env?: unknown[]) =>
  svc.request('POST', '/api/admin/packages', {
    headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` },
    body: { source: `path:${dir}`, ...(env ? { env } : {}) },
  });

/** What the fixture's `settings` tool saw of its settings, called with `env` (none: the caller gives none). */
async function settingsSeen(env?: Record<string, string>, pkg = '@fixtures/mcp-settings'): Promise<{ DATA_DIR: string | null; LOG_LEVEL: string | null }> {
  const res = await svc.request('POST', `/api/tools/execute/${pkg}/settings`, { body: { params: {}, ...(env ? { env } : {}) } });
  if (res.status !== 200 || res.body.success === false) throw new Error(res.text);
  // The server's structuredContent is the result (when it gives one), else its content blocks.
  const r = res.body.result as { DATA_DIR?: string | null; structuredContent?: { DATA_DIR: string | null }; content?: Array<{ text: string }> };
  return r.structuredContent ?? (r.content ? JSON.parse(r.content[0].text) : r);
}
const dataDirSeen = async (env?: Record<string, string>) => (await settingsSeen(env)).DATA_DIR;

test('re-importing a recorded version with a setting (DATA_DIR and its default) declares it on that version', async (t) => {
  const dir = settingsPackage();
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const first = await importSettings(dir);
  t.is(first.status, 201, first.text);
  t.is(await dataDirSeen(), null, 'not declared, not given');
  // Re-importing the same version with the setting declared records it (it answered 201 and changed nothing).
  const again = await importSettings(dir, [{ name: 'DATA_DIR', required: false, default: '/tmp/data' }]);
  t.is(again.status, 201, again.text);
  const row = await svc.worker!.deps.db('packages').where({ name: '@fixtures/mcp-settings' }).first('env');
  t.deepEqual(
    (row.env as Array<{ name: string }>).find((v) => v.name === 'DATA_DIR'),
    { name: 'DATA_DIR', required: false, default: '/tmp/data' },
  );
  // The declaration reaches the server's process: the default when the caller gives none, the caller's value over it,
  // and a variable nobody declared never (before: the tools' `secrets` were those of the first import, so neither).
  t.is(await dataDirSeen(), '/tmp/data', 'the declared default');
  // The caller's own value reaches it too, and, being the caller's env, is never stored: the answer holds it redacted.
  t.deepEqual(await settingsSeen({ DATA_DIR: '/tmp/mine', LOG_LEVEL: 'debug' }), { DATA_DIR: '[redacted]', LOG_LEVEL: null });
  t.falsy(await svc.worker!.deps.db('executions').whereRaw('result::text like ?', ['%/tmp/mine%']).first('id'), 'not in a stored result');
  const tools = await svc
    .worker!.deps.db('tools as t')
    .join('packages as p', 'p.id', 't.package_id')
    .where('p.name', '@fixtures/mcp-settings')
    .select('t.permissions');
  t.true(
    tools.every((r: { permissions: { secrets?: string[] } }) => r.permissions.secrets?.includes('DATA_DIR')),
    'every tool may read it',
  );
  // A file variable declared the same way: its content reaches the server as a file its variable names.
  const withFile = await importSettings(dir, [{ name: 'SETTINGS_FILE', required: false, file: true }]);
  t.is(withFile.status, 201, withFile.text);
  const content = '{"mode":"strict"}';
  const seen = (await settingsSeen({ SETTINGS_FILE: content })) as { SETTINGS_FILE?: string };
  t.is(seen.SETTINGS_FILE, crypto.createHash('sha256').update(content).digest('hex'));
});

test("a setting declared at the first import reaches the server: its default, or the caller's value (redacted in the answer)", async (t) => {
  const dir = settingsPackage();
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  // Another name, so that this package is not the other test's.
  const pkgFile = path.join(dir, 'package.json');
  fs.writeFileSync(pkgFile, JSON.stringify({ ...JSON.parse(fs.readFileSync(pkgFile, 'utf8')), name: '@fixtures/mcp-settings-first' }));
  const first = await importSettings(dir, [{ name: 'DATA_DIR', required: false, default: '/tmp/first' }]);
  t.is(first.status, 201, first.text);
  const seen = (env?: Record<string, string>) => settingsSeen(env, '@fixtures/mcp-settings-first');
  t.deepEqual(await seen(), { DATA_DIR: '/tmp/first', LOG_LEVEL: null });
  t.deepEqual(await seen({ DATA_DIR: '/tmp/given', LOG_LEVEL: 'debug' }), { DATA_DIR: '[redacted]', LOG_LEVEL: null });
});
