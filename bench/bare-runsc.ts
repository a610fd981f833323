/**
 * The physical limit of one-shot isolation: how many bare gVisor sandboxes (`runsc run` of a process that exits at
 * once, or of `node -e 0`) this machine can create and destroy per second. Shared by the sandbox and execute benches.
 */
import fs from 'node:fs';
import path from 'node:path';
import { buildSpec, writeBundle } from '../sandbox/bundle.js';
import { runsc, type RunscOptions } from '../sandbox/runsc.js';

export async function inParallel(total: number, lanes: number, job: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < total) await job(next++);
    }),
  );
  return (performance.now() - started) / 1000;
}

export const CGROUP_PARENT = `toolshed-bench-${process.pid}`;

/** CPU seconds used so far by every sandbox under our cgroup parent (cgroup v1 cpuacct is hierarchical). */
export function sandboxCpuSeconds(): number {
  const own = /^\d+:[^:]*\bcpuacct\b[^:]*:(.*)$/m.exec(fs.readFileSync('/proc/self/cgroup', 'utf8'))?.[1] ?? '/';
  const mount = fs.existsSync('/sys/fs/cgroup/cpuacct') ? '/sys/fs/cgroup/cpuacct' : '/sys/fs/cgroup/cpu,cpuacct';
  try {
    return Number(fs.readFileSync(path.join(mount, own, CGROUP_PARENT, 'cpuacct.usage'), 'utf8')) / 1e9;
  } catch {
    return NaN;
  }
}

export function removeCgroupParent(): void {
  for (const controller of fs.readdirSync('/sys/fs/cgroup')) {
    const own = new RegExp(`^\\d+:[^:]*\\b${controller}\\b[^:]*:(.*)$`, 'm').exec(fs.readFileSync('/proc/self/cgroup', 'utf8'))?.[1];
    if (own === undefined) continue;
    try {
      fs.rmdirSync(path.join('/sys/fs/cgroup', controller, own, CGROUP_PARENT));
    } catch {
      // not created in this controller, or still busy
    }
  }
}

/** `runsc run` of a process that exits at once: a whole sandbox life with (almost) nothing inside. */
export async function bareRate(
  stateDir: string,
  rootfs: string,
  lanes: number,
  total: number,
  argv = ['/lib64/ld-linux-x86-64.so.2', '--version'],
): Promise<number> {
  const o: RunscOptions = { binary: '/usr/bin/runsc', root: path.join(stateDir, 'bare-runsc'), network: 'none', platform: 'ptrace' };
  const bundle = (i: number) => {
    const dir = path.join(stateDir, `bare-bundle-${i}`);
    const spec = buildSpec({ rootfs, memoryMb: 256, pidsLimit: 64, tmpSizeMb: 16, hostname: 'bare', cgroupsPath: `${CGROUP_PARENT}/bare-${i}` });
    (spec.process as { args: string[] }).args = argv;
    writeBundle(dir, spec);
    return dir;
  };
  const seconds = await inParallel(total, lanes, async (i) => {
    const r = await runsc(o, ['run', '--bundle', bundle(i), `bare-${lanes}-${i}`], 30_000);
    if (r.code !== 0) throw new Error(`bare runsc run failed: ${r.stderr}`);
  });
  return total / seconds;
}
