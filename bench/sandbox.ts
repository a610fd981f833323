/**
 * Sandbox benchmark (gVisor): the bare `runsc run` rate of a no-op process (the dynamic loader; sequential and 2 in
 * parallel) and of `node -e 0`, the boot time of a pooled sandbox (create → guest ready), warm-pool execution latency
 * for a trivial tool with spaced requests, one-shot saturation with the pool (executions/s with many in flight,
 * against the bare rate), sandbox CPU per execution and of an idle pool (cpuacct of a cgroup parent of our own),
 * cold executions (pool 0), and reuse mode (sequential latency; executions/s and sandbox CPU per execution with
 * several clients on one key), and boot to ready with SANDBOX_NETWORK=egress (`--no-egress` skips it: needs root, ip, nft).
 * Prints one JSON line, with the load average at start and end.
 *   npx tsx bench/sandbox.ts [--pool=2] [--spaced=30] [--saturation=40] [--concurrency=4] [--reuse-concurrency=8]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { prepareRootfs } from '../sandbox/rootfs.js';
import { createGvisorRunner, type GvisorRunner } from '../sandbox/gvisor-runner.js';
import { removeRules, setupEgress } from '../sandbox/egress.js';
import { GvisorSandbox, type SandboxSettings } from '../sandbox/gvisor-sandbox.js';
import { CGROUP_PARENT, bareRate, inParallel, removeCgroupParent, sandboxCpuSeconds } from './bare-runsc.js';
import type { ExecuteRequest } from '../sandbox/types.js';

const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const num = (name: string, def: number) => Number(args.get(name) ?? def);
const POOL = num('pool', 2);
const SPACED = num('spaced', 30);
const SATURATION = num('saturation', 40);
const CONCURRENCY = num('concurrency', 4);
const CONCURRENCY_REUSE = num('reuse-concurrency', 8);
const REUSE_TOTAL = num('reuse-total', 400);
const EGRESS_SUBNET = '10.215.0.0/24';

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] * 10) / 10;
};
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

function trivialCache(): { dir: string; pkg: ExecuteRequest['pkg'] } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolshed-bench-pkgs-'));
  fs.chmodSync(dir, 0o755);
  const pkgDir = path.join(dir, 'bench-trivial@1.0.0');
  fs.mkdirSync(pkgDir);
  fs.writeFileSync(path.join(pkgDir, 'package.json'), JSON.stringify({ name: 'bench-trivial', version: '1.0.0', type: 'module' }));
  fs.writeFileSync(
    path.join(pkgDir, 'index.js'),
    "export const upper = { description: 'Uppercases text', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, execute: ({ text }) => ({ text: text.toUpperCase() }) };\n",
  );
  return { dir, pkg: { name: 'bench-trivial', version: '1.0.0', dir: pkgDir } };
}

async function timedExecute(runner: GvisorRunner, req: ExecuteRequest): Promise<number> {
  const started = performance.now();
  const r = await runner.execute(req);
  if (r.kind !== 'ok') throw new Error(`execution failed: ${JSON.stringify(r)}`);
  return performance.now() - started;
}

/** Milliseconds from creating a sandbox to its guest waiting for a request, one sandbox at a time. */
async function bootTimes(settings: SandboxSettings, n: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    const sandbox = new GvisorSandbox(settings);
    await sandbox.ready;
    times.push(performance.now() - started);
    await sandbox.destroy();
  }
  return times;
}

async function main(): Promise<void> {
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsbench-'));
  const cache = trivialCache();
  const req = (reuseKey?: string): ExecuteRequest => ({
    pkg: cache.pkg,
    exportName: 'upper',
    params: { text: 'hi' },
    env: { K: 'v' },
    timeoutMs: 10_000,
    reuseKey,
  });
  const base = { network: 'none' as const, packageCacheDir: cache.dir, stateDir, cgroupParent: CGROUP_PARENT };
  const out: Record<string, unknown> = { cpus: os.availableParallelism(), pool_size: POOL, platform: 'ptrace', load_start: os.loadavg()[0] };
  try {
    const rootfs = prepareRootfs(stateDir, process.execPath);
    await bareRate(stateDir, rootfs, 1, 3); // warm caches
    out.bare_runsc_seq_per_s = round(await bareRate(stateDir, rootfs, 1, 12));
    out.bare_runsc_par2_per_s = round(await bareRate(stateDir, rootfs, 2, 16));
    let cpu = sandboxCpuSeconds();
    out.bare_runsc_node_par2_per_s = round(await bareRate(stateDir, rootfs, 2, 16, ['/usr/bin/node', '-e', '0']));
    out.bare_node_sandbox_cpu_s = round((sandboxCpuSeconds() - cpu) / 16, 3);

    const runsc = { binary: '/usr/bin/runsc', root: path.join(stateDir, 'boot-runsc'), network: 'none' as const, platform: 'ptrace' };
    const settings = {
      runsc,
      bundlesDir: path.join(stateDir, 'boot-bundles'),
      rootfs: prepareRootfs(stateDir, process.execPath, { runsc, memoryMb: 256, cgroupParent: CGROUP_PARENT }),
      ...{ pkgCacheDir: cache.dir, memoryMb: 256, pidsLimit: 64, tmpSizeMb: 16, cgroupParent: CGROUP_PARENT, snapshot: true },
    };
    fs.mkdirSync(settings.bundlesDir, { recursive: true });
    out.boot_to_ready_p50_ms = pct(await bootTimes(settings, 5), 50);

    // The same boots with SANDBOX_NETWORK=egress (a namespace + veth per sandbox; needs root, ip and nft).
    if (!args.has('no-egress')) {
      const egress = setupEgress({ subnet: EGRESS_SUBNET, stateDir });
      const egressSettings = { ...settings, runsc: { ...runsc, network: 'sandbox' as const, launcher: egress.launcher }, egress };
      out.egress_boot_to_ready_p50_ms = pct(await bootTimes(egressSettings, 5), 50);
    }

    const pooled = createGvisorRunner({ ...base, poolSize: POOL });
    const warm: number[] = [];
    for (let i = 0; i < SPACED; i++) {
      await pooled.pool.whenFull(30_000);
      warm.push(await timedExecute(pooled, req()));
    }
    out.warm_p50_ms = pct(warm, 50);
    out.warm_p99_ms = pct(warm, 99);
    await pooled.pool.whenFull(30_000);
    cpu = sandboxCpuSeconds();
    await new Promise((resolve) => setTimeout(resolve, 3000));
    out.idle_pool_cpu_pct = round(((sandboxCpuSeconds() - cpu) / 3) * 100, 1);
    cpu = sandboxCpuSeconds();
    const seconds = await inParallel(SATURATION, CONCURRENCY, async () => void (await timedExecute(pooled, req())));
    await pooled.pool.whenFull(30_000);
    out.execution_sandbox_cpu_s = round((sandboxCpuSeconds() - cpu) / SATURATION, 3);
    out.saturation_per_s = round(SATURATION / seconds);
    out.saturation_vs_bare = round(SATURATION / seconds / Math.max(out.bare_runsc_seq_per_s as number, out.bare_runsc_par2_per_s as number));
    out.saturation_vs_bare_node = round(SATURATION / seconds / (out.bare_runsc_node_par2_per_s as number));
    await pooled.close();

    const cold = createGvisorRunner({ ...base, poolSize: 0 });
    const colds: number[] = [];
    for (let i = 0; i < 6; i++) colds.push(await timedExecute(cold, req()));
    out.cold_p50_ms = pct(colds, 50);
    await cold.close();

    const reuse = createGvisorRunner({ ...base, poolSize: 2, reuse: { maxExecutions: 1000, maxAgeMs: 600_000 } });
    await reuse.pool.whenFull(30_000);
    await timedExecute(reuse, req('bench-key'));
    const reused: number[] = [];
    for (let i = 0; i < SPACED; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      reused.push(await timedExecute(reuse, req('bench-key')));
    }
    out.reuse_warm_p50_ms = pct(reused, 50);
    await inParallel(40, CONCURRENCY_REUSE, async () => void (await timedExecute(reuse, req('bench-key')))); // bind its sandboxes
    cpu = sandboxCpuSeconds();
    const reuseSeconds = await inParallel(REUSE_TOTAL, CONCURRENCY_REUSE, async () => void (await timedExecute(reuse, req('bench-key'))));
    out[`reuse_c${CONCURRENCY_REUSE}_per_s`] = round(REUSE_TOTAL / reuseSeconds);
    out.reuse_sandbox_cpu_ms = round(((sandboxCpuSeconds() - cpu) / REUSE_TOTAL) * 1000, 1);
    await reuse.close();
  } finally {
    if (!args.has('no-egress')) removeRules(EGRESS_SUBNET);
    removeCgroupParent();
    fs.rmSync(cache.dir, { recursive: true, force: true });
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
  out.load_end = os.loadavg()[0];
  console.log(JSON.stringify(out));
}

await main();
