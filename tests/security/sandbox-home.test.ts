/**
 * A sandbox that ordinary packages accept: `os.homedir()`, `os.userInfo()` and `os.tmpdir()` answer (at import and
 * when a tool runs) with a writable home directory inside the sandbox, and nothing of the host. Real runsc: a warm
 * pool, cold one-shot sandboxes, and reuse mode (where the home directory is emptied between executions).
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createGvisorRunner, type GvisorRunner } from '../../sandbox/gvisor-runner.js';
import type { ExecuteOutcome, PackageRef } from '../../sandbox/types.js';
import { FIXTURES_DIR } from '../helpers/service.js';
import { makeStateDir } from '../fixtures/sandbox/make-cache.js';

const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolshed-pkgs-'));
fs.chmodSync(cacheDir, 0o755);
const pkg: PackageRef = { name: '@fixtures/sandbox-home', version: '1.0.0', dir: path.join(cacheDir, '@fixtures+sandbox-home@1.0.0') };
fs.cpSync(path.join(FIXTURES_DIR, 'security', 'sandbox-home'), pkg.dir, { recursive: true });
const stateDirs: string[] = [];
const runners: GvisorRunner[] = [];
function runner(poolSize: number, reuse = false): GvisorRunner {
  const stateDir = makeStateDir();
  stateDirs.push(stateDir);
  const r = createGvisorRunner({
    poolSize,
    network: 'none',
    packageCacheDir: cacheDir,
    stateDir,
    reuse: reuse ? { maxExecutions: 10, maxAgeMs: 60_000, maxSandboxesPerKey: 1 } : undefined,
  });
  runners.push(r);
  return r;
}

test.after.always(async () => {
  await Promise.all(runners.map((r) => r.close()));
  fs.rmSync(cacheDir, { recursive: true, force: true });
  for (const dir of stateDirs) fs.rmSync(dir, { recursive: true, force: true });
});

const HOME = '/tmp/home';
const expected = {
  homedir: HOME,
  userInfo: { uid: 65534, gid: 65534, username: 'nobody', homedir: HOME, shell: '/usr/sbin/nologin' },
  tmpdir: '/tmp',
  HOME,
};

function check(t: import('ava').ExecutionContext, r: ExecuteOutcome) {
  if (r.kind !== 'ok') return t.fail(JSON.stringify(r));
  const out = r.output as Record<string, unknown>;
  t.deepEqual(out.atImport, expected);
  t.deepEqual(out.now, expected);
  t.is(out.wroteHome, 'written by the tool');
  t.is(out.wroteTmp, 'scratch');
  t.is(out.homeMode, '700');
  // The exact values above are the sandbox's own; the host's user and home never show through.
  t.false(JSON.stringify(out).includes(JSON.stringify(os.homedir())));
  return out;
}

const run = (r: GvisorRunner, reuseKey?: string) => r.execute({ pkg, exportName: 'whereAmI', params: {}, env: {}, timeoutMs: 20_000, reuseKey });

test('warm pool: home, user and temp dir work at import and in the tool', async (t) => {
  const pooled = runner(1);
  t.true(await pooled.pool.whenFull(30_000));
  check(t, await run(pooled));
  // The next execution gets a fresh sandbox, with a fresh home.
  t.is(check(t, await run(pooled))?.leftOver, false);
});

test('cold one-shot sandboxes: home, user and temp dir work at import and in the tool; a HOME in the env wins', async (t) => {
  const cold = runner(0);
  check(t, await run(cold));
  const r = await cold.execute({ pkg, exportName: 'whereAmI', params: {}, env: { HOME: '/tmp' }, timeoutMs: 20_000 });
  if (r.kind !== 'ok') return t.fail(JSON.stringify(r));
  t.like(r.output, { atImport: { homedir: '/tmp', HOME: '/tmp' }, now: { homedir: '/tmp', userInfo: { homedir: HOME } } });
});

test('reuse mode: the home directory exists for every execution, emptied in between', async (t) => {
  const reusing = runner(1, true);
  t.is(check(t, await run(reusing, 'caller-a'))?.leftOver, false);
  t.is(reusing.reuse?.idle('caller-a'), 1);
  t.is(check(t, await run(reusing, 'caller-a'))?.leftOver, false);
});
