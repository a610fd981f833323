/**
 * A tool sees its own package and nothing of any other: not the package cache, not another imported package (here a
 * private `path:` one holding secret.txt), in every sandbox mode. Through the real API, the real Graphile Worker and
 * real gVisor sandboxes: the warm pool, cold one-shot sandboxes, reuse mode and egress mode.
 */
import test, { type ExecutionContext } from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { removeRules } from '../../sandbox/egress.js';
import { FIXTURES_DIR, startService, type Service } from '../helpers/service.js';

const SNOOP = path.join(FIXTURES_DIR, 'security', 'sandbox-snoop');
const SECRET = path.join(FIXTURES_DIR, 'security', 'sandbox-secret');
const MARKER = fs.readFileSync(path.join(SECRET, 'secret.txt'), 'utf8').trim();
const EGRESS_SUBNET = '10.215.0.0/24';

async function withService(env: Record<string, string>, body: (svc: Service) => Promise<void>): Promise<void> {
  const svc = await startService({ env: { EXECUTION_TIMEOUT_MS: '20000', ...env } });
  try {
    for (const dir of [SECRET, SNOOP]) {
      const res = await svc.importPackage(`path:${dir}`);
      if (res.status !== 201) throw new Error(`import of ${dir} failed: ${res.status} ${res.text}`);
    }
    await body(svc);
  } finally {
    await svc.close();
  }
}

/** The cache directory names of the victim package (the host's view). */
function victimDirs(svc: Service): string[] {
  const names = fs.readdirSync(svc.config.PACKAGE_CACHE_DIR).filter((n) => n.includes('sandbox-secret'));
  if (names.length === 0) throw new Error('the victim package is not in the cache');
  return names;
}

async function snoop(t: ExecutionContext, svc: Service, key?: string) {
  const victims = victimDirs(svc);
  const read = victims.flatMap((v) => [`/pkgs/${v}/secret.txt`, `/pkg/${v}/secret.txt`, `/pkg/../pkgs/${v}/secret.txt`, `/${v}/secret.txt`]);
  const res = await svc.request('POST', '/api/tools/execute/@fixtures/sandbox-snoop/snoop', {
    key,
    body: { params: { list: ['/', '/pkgs', '/pkg', '/pkg/..'], read } },
  });
  t.is(res.status, 200, res.text);
  t.true(res.body.success, res.text);
  const out = res.body.result as {
    list: Record<string, { ok?: string[]; error?: string }>;
    read: Record<string, { ok?: string; error?: string }>;
    mounts: { ok?: string };
    seen: string[];
  };
  // Nothing of the other package anywhere: not by listing, not by path, not in the mount table, not on a walk.
  t.false(res.text.includes(MARKER), 'the secret file was read');
  const found = JSON.stringify({ list: out.list, reads: Object.values(out.read), mounts: out.mounts, seen: out.seen });
  for (const v of victims) t.false(found.includes(v), `the other package ${v} is visible`);
  for (const p of read) t.is(out.read[p].error, 'ENOENT', p);
  t.is(out.list['/pkgs'].error, 'ENOENT');
  t.false(out.list['/'].ok?.includes('pkgs'));
  t.deepEqual(out.list['/pkg/..'].ok, out.list['/'].ok);
  // /pkg holds exactly one package: this one.
  const own = out.list['/pkg'].ok ?? [];
  t.is(own.length, 1, JSON.stringify(out.list['/pkg']));
  t.true(own[0].includes('sandbox-snoop'), own[0]);
  const packageDirs = out.seen.filter((p) => /^\/pkg\/[^/]+$/.test(p));
  t.deepEqual(packageDirs, [`/pkg/${own[0]}`]);
  return out;
}

test.serial('warm pool: a tool sees only its own package', async (t) => {
  await withService({ SANDBOX_POOL_SIZE: '2' }, async (svc) => {
    // The victim runs first, so that its package has been served by the same pool.
    const hello = await svc.request('POST', '/api/tools/execute/@fixtures/sandbox-secret/hello', { body: { params: {} } });
    t.true(hello.body.success, hello.text);
    await snoop(t, svc);
    await snoop(t, svc);
  });
});

test.serial('cold one-shot sandboxes (pool off): a tool sees only its own package', async (t) => {
  await withService({ SANDBOX_POOL_SIZE: '0' }, async (svc) => {
    await snoop(t, svc);
  });
});

test.serial('reuse mode: a sandbox bound to one caller and package sees only that package, execution after execution', async (t) => {
  await withService({ SANDBOX_REUSE: 'caller-package', SANDBOX_POOL_SIZE: '1' }, async (svc) => {
    const { key } = await svc.createUser();
    const secret = await svc.request('POST', '/api/tools/execute/@fixtures/sandbox-secret/hello', { key, body: { params: {} } });
    t.true(secret.body.success, secret.text);
    await snoop(t, svc, key);
    await snoop(t, svc, key);
  });
});

test.serial('egress mode: a tool sees only its own package', async (t) => {
  try {
    await withService({ SANDBOX_NETWORK: 'egress', SANDBOX_EGRESS_SUBNET: EGRESS_SUBNET, SANDBOX_DNS: '192.0.2.53', SANDBOX_POOL_SIZE: '1' }, async (svc) => {
      await snoop(t, svc);
    });
  } finally {
    removeRules(EGRESS_SUBNET);
  }
});
