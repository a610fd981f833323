/**
 * SANDBOX_CPUS: one sandbox gets at most that much CPU however many threads its tool runs. A tool spins three
 * worker threads and its main thread for 3 s in a real gVisor sandbox made from the configuration (SANDBOX_CPUS=0.5);
 * the host's own accounting of the sandbox's cgroup (cpuacct.usage on cgroup v1, cpu.stat usage_usec on v2) must
 * show at most ~half a core used over that time, and the cgroup must carry the quota, enforced by the kernel.
 * No timing of our own speed is asserted: only how much CPU the host gave the sandbox while the tool spun.
 */
import test from 'ava';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../core/infra/config.js';
import { createSandboxRunner } from '../../sandbox/index.js';
import type { GvisorRunner } from '../../sandbox/gvisor-runner.js';
import type { PackageRef } from '../../sandbox/types.js';
import { FIXTURES_DIR } from '../helpers/service.js';

const CPUS = 0.5;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tscpu-'));
fs.chmodSync(dataDir, 0o755);
const cacheDir = path.join(dataDir, 'packages');
const pkg: PackageRef = { name: '@fixtures/sandbox-cpu', version: '1.0.0', dir: path.join(cacheDir, '@fixtures+sandbox-cpu@1.0.0') };
fs.cpSync(path.join(FIXTURES_DIR, 'security', 'sandbox-cpu'), pkg.dir, { recursive: true });
const config = loadConfig({
  DATA_DIR: dataDir,
  PACKAGE_CACHE_DIR: cacheDir,
  SECRETS_KEY: crypto.randomBytes(32).toString('hex'),
  SANDBOX_POOL_SIZE: '1',
  SANDBOX_CPUS: String(CPUS),
});
const runner = createSandboxRunner(config) as GvisorRunner;

test.after.always(async () => {
  await runner.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const V2 = fs.existsSync('/sys/fs/cgroup/cgroup.controllers');

/** This process's cgroup for a v1 controller (or the v2 one), as a directory under /sys/fs/cgroup. */
function ownCgroup(controller: string): string {
  const lines = fs
    .readFileSync('/proc/self/cgroup', 'utf8')
    .trim()
    .split('\n')
    .map((l) => l.split(':'));
  const line = V2 ? lines.find(([id]) => id === '0') : lines.find(([, names]) => names.split(',').includes(controller));
  if (!line) throw new Error(`no ${controller} cgroup in /proc/self/cgroup`);
  const mount = V2 ? '/sys/fs/cgroup' : fs.existsSync(`/sys/fs/cgroup/${controller}`) ? `/sys/fs/cgroup/${controller}` : `/sys/fs/cgroup/cpu,cpuacct`;
  return path.join(mount, line[2]);
}

/** The sandboxes' parent cgroups (runsc places a relative cgroupsPath under this process's own cgroup). */
const accountingDir = path.join(ownCgroup(V2 ? '' : 'cpuacct'), 'toolshed');
const limitDir = path.join(ownCgroup(V2 ? '' : 'cpu'), 'toolshed');

/** CPU time a sandbox's cgroup has used, in microseconds (undefined once it is gone). */
function usageUs(id: string): number | undefined {
  try {
    if (V2) return Number(/usage_usec (\d+)/.exec(fs.readFileSync(path.join(accountingDir, id, 'cpu.stat'), 'utf8'))?.[1]);
    return Number(fs.readFileSync(path.join(accountingDir, id, 'cpuacct.usage'), 'utf8')) / 1000;
  } catch {
    return undefined;
  }
}

interface Limits {
  quotaUs: number;
  periodUs: number;
  /** Periods in which the kernel enforced the quota on the cgroup, and those in which it had to throttle it. */
  periods: number;
  throttled: number;
}
function limitsOf(id: string): Limits | undefined {
  try {
    const stat = fs.readFileSync(path.join(limitDir, id, 'cpu.stat'), 'utf8');
    const periods = Number(/nr_periods (\d+)/.exec(stat)?.[1] ?? 0);
    const throttled = Number(/nr_throttled (\d+)/.exec(stat)?.[1] ?? 0);
    if (V2) {
      const [quota, period] = fs
        .readFileSync(path.join(limitDir, id, 'cpu.max'), 'utf8')
        .trim()
        .split(' ');
      return { quotaUs: quota === 'max' ? -1 : Number(quota), periodUs: Number(period), periods, throttled };
    }
    const read = (f: string) => Number(fs.readFileSync(path.join(limitDir, id, f), 'utf8'));
    return { quotaUs: read('cpu.cfs_quota_us'), periodUs: read('cpu.cfs_period_us'), periods, throttled };
  } catch {
    return undefined;
  }
}

test('a tool spinning four threads for 3 s gets at most SANDBOX_CPUS of CPU', async (t) => {
  t.true(await runner.pool.whenFull(30_000), 'the pool filled');
  const samples = new Map<string, Array<{ at: number; us: number }>>();
  const limits = new Map<string, Limits>();
  let done = false;
  const execution = runner
    .execute({ pkg, exportName: 'spinThreads', params: { threads: 3, ms: 3000 }, env: {}, timeoutMs: 30_000 })
    .finally(() => (done = true));
  // Sample every sandbox of this runner until the execution ends (bounded by its own time limit).
  while (!done) {
    for (const id of await runner.listContainers()) {
      const us = usageUs(id);
      if (us !== undefined) samples.set(id, [...(samples.get(id) ?? []), { at: Date.now(), us }]);
      const l = limitsOf(id);
      if (l) limits.set(id, l);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const r = await execution;
  if (r.kind !== 'ok') return t.fail(JSON.stringify(r));
  const out = r.output as { startedAt: number; endedAt: number; turns: number[] };
  t.is(out.turns.length, 4);
  t.true(
    out.turns.every((n) => n > 0),
    'every thread spun',
  );

  // The rate of CPU use of each sandbox over the middle of the spinning window; the spinning one is the highest.
  const from = out.startedAt + 200;
  const to = out.endedAt - 200;
  let best: { id: string; cores: number; seconds: number } | undefined;
  for (const [id, series] of samples) {
    const inside = series.filter((s) => s.at >= from && s.at <= to);
    if (inside.length < 2) continue;
    const first = inside[0];
    const last = inside[inside.length - 1];
    const seconds = (last.at - first.at) / 1000;
    if (seconds < 0.8) continue;
    const cores = (last.us - first.us) / 1e6 / seconds;
    if (!best || cores > best.cores) best = { id, cores, seconds };
  }
  if (!best) return t.fail(`no sandbox cgroup sampled while the tool spun (looked in ${accountingDir})`);
  t.log(`sandbox ${best.id} used ${best.cores.toFixed(2)} cores over ${best.seconds.toFixed(1)} s; limits ${JSON.stringify(limits.get(best.id))}`);
  t.true(best.cores <= CPUS * 1.2, `the sandbox used ${best.cores.toFixed(2)} cores (limit ${CPUS})`);
  t.like(limits.get(best.id), { quotaUs: CPUS * 100_000, periodUs: 100_000 });
  // Bandwidth control is active on the cgroup (on a busy machine the sandbox may get less than its quota anyway, so
  // how often it was throttled is logged, not asserted).
  t.true((limits.get(best.id)?.periods ?? 0) > 0, 'the kernel enforced the quota');
});
