/**
 * Warm MCP servers (sandbox/mcp-warm.ts): a call finds its server already started and initialised, each server serves
 * one call, a server only ever serves the env it was started with, and in caller-package mode one server serves one
 * caller's calls in turn. The fixture server's `whoami` tool (fixtures/mcp-servers/server.cjs, mode `instance`) says
 * which start of the server answered, when it started, and the FIXTURE_VAR it got (reversed).
 */
import test from 'ava';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createUserWithKey } from '../core/auth/create-account.js';
import type { GvisorRunner } from '../sandbox/gvisor-runner.js';
import type { PackageRef } from '../sandbox/types.js';
import { FIXTURES_DIR, startService, type Service } from './helpers/service.js';

let root: string;
const services: Service[] = [];

test.before(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'mcp-warm-'));
  const dir = path.join(root, 'instance');
  await fs.mkdir(dir, { recursive: true });
  await fs.copyFile(path.join(FIXTURES_DIR, 'mcp-servers', 'server.cjs'), path.join(dir, 'server.cjs'));
  await fs.writeFile(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: '@fixtures/mcp-instance', version: '1.0.0', bin: { 'mcp-instance': 'server.cjs' } }),
  );
});
test.after.always(async () => {
  await Promise.all(services.map((s) => s.close()));
  if (root) await fs.rm(root, { recursive: true, force: true });
});

async function serviceWith(env: Record<string, string>): Promise<Service> {
  const svc = await startService({ env: { EXECUTION_TIMEOUT_MS: '30000', ...env } });
  services.push(svc);
  const res = await svc.request('POST', '/api/admin/packages', {
    headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` },
    body: {
      source: `path:${path.join(root, 'instance')}`,
      args: ['instance'],
      env: [{ name: 'FIXTURE_VAR', required: false, description: 'echoed back by whoami' }],
    },
  });
  if (res.status !== 201) throw new Error(res.text);
  return svc;
}

const runner = (svc: Service) => svc.worker!.deps.sandbox as GvisorRunner;
async function ref(svc: Service): Promise<PackageRef> {
  const row = await svc.worker!.deps.db('packages').where({ name: '@fixtures/mcp-instance' }).first();
  return { name: row.name, version: row.version, dir: row.install_path, mcp: row.manifest.mcp };
}

interface Who {
  instance: string;
  startedAt: number;
  calls: number;
  var: string | null;
}
async function whoami(svc: Service, o: { env?: Record<string, string>; key?: string } = {}): Promise<Who> {
  const res = await svc.request('POST', '/api/tools/execute/@fixtures/mcp-instance/whoami', {
    ...(o.key ? { headers: { authorization: `Bearer ${o.key}` } } : {}),
    body: { params: {}, ...(o.env ? { env: o.env } : {}) },
  });
  if (res.status !== 200) throw new Error(res.text);
  return res.body.result as Who;
}

test.serial('the import starts a server ahead of the first call; each server serves one call; it runs in the guest', async (t) => {
  const svc = await serviceWith({ SANDBOX_MCP_WARM: '2' });
  const pkg = await ref(svc);
  t.true(pkg.mcp?.inGuest, 'the fixture server loads in the guest process');
  t.true(await runner(svc).mcpWarm.whenWarm({ pkg, env: {} }, 60_000), 'a server waits for the first call');
  const asked = Date.now();
  const first = await whoami(svc);
  t.true(first.startedAt < asked, 'the server that answered was started before the call was made');
  t.is(first.calls, 1);
  t.true(await runner(svc).mcpWarm.whenWarm({ pkg, env: {} }, 60_000), 'a replacement is started after the call');
  const again = Date.now();
  const second = await whoami(svc);
  t.not(second.instance, first.instance, 'a server serves one call');
  t.true(second.startedAt < again);
  t.is(second.calls, 1);
});

test.serial('a warm server only ever serves the env it was started with', async (t) => {
  const svc = await serviceWith({ SANDBOX_MCP_WARM: '4' });
  const pkg = await ref(svc);
  const a = await whoami(svc, { env: { FIXTURE_VAR: 'alice-secret' } });
  t.is(a.var, 'terces-ecila');
  // A server for alice's env is now started ahead of her next call: bob (another value) must not get it.
  t.true(await runner(svc).mcpWarm.whenWarm({ pkg, env: { FIXTURE_VAR: 'alice-secret' } }, 60_000));
  const b = await whoami(svc, { env: { FIXTURE_VAR: 'bob-secret' } });
  t.is(b.var, 'terces-bob');
  const none = await whoami(svc);
  t.is(none.var, null, 'a call without the variable gets a server started without it');
  const a2 = await whoami(svc, { env: { FIXTURE_VAR: 'alice-secret' } });
  t.is(a2.var, 'terces-ecila');
  t.true(a2.startedAt < Date.now());
  t.not(a2.instance, a.instance);
  const stats = runner(svc).mcpWarm.stats();
  t.true(stats.waiting + stats.starting <= 4, `at most SANDBOX_MCP_WARM servers wait (${JSON.stringify(stats)})`);
});

test.serial("caller-package mode: one server serves a caller's calls in turn; other callers and anonymous calls get their own", async (t) => {
  const svc = await serviceWith({ SANDBOX_REUSE: 'caller-package', SANDBOX_MCP_WARM: '4' });
  const db = svc.worker!.deps.db;
  const { secret: alice } = await createUserWithKey(db, { username: 'alice-warm', tier: 'pro' });
  const { secret: bob } = await createUserWithKey(db, { username: 'bob-warm', tier: 'pro' });
  const a1 = await whoami(svc, { key: alice });
  const a2 = await whoami(svc, { key: alice });
  const a3 = await whoami(svc, { key: alice });
  t.is(a2.instance, a1.instance, "alice's second call is served by her server");
  t.is(a3.instance, a1.instance);
  t.deepEqual([a1.calls, a2.calls, a3.calls], [1, 2, 3]);
  const b1 = await whoami(svc, { key: bob });
  t.not(b1.instance, a1.instance, 'bob never gets her server');
  t.is(b1.calls, 1);
  const anon = await whoami(svc);
  t.not(anon.instance, a1.instance);
  t.not(anon.instance, b1.instance);
  // Another env is another server, even for the same caller.
  const withVar = await whoami(svc, { key: alice, env: { FIXTURE_VAR: 'x' } });
  t.not(withVar.instance, a1.instance);
  t.is(withVar.var, 'x');
});
