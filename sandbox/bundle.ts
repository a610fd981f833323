/**
 * OCI bundles for gVisor sandboxes, over the root filesystem rootfs.ts builds (the Node runtime, the guest and its
 * startup snapshot, an /etc of its own). Each sandbox gets its own bundle dir
 * with a config.json that mounts its package view (package-view.ts: an empty directory of its own, into which the
 * one package it runs is mounted at hand-over, read-only or as an MCP server's overlay) at /pkg, a small tmpfs at /tmp, runs as nobody with no
 * capabilities and HOME on that tmpfs, and carries memory, pids and CPU limits.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const GUEST_SOURCE_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'guest');
/** Where things appear inside the sandbox. */
export const IN_SANDBOX = {
  node: '/usr/bin/node',
  shell: '/bin/sh',
  guest: '/guest/main.cjs',
  snapshot: '/guest/snapshot.blob',
  pkg: '/pkg',
  tmp: '/tmp',
  home: '/tmp/home',
};
export const SANDBOX_UID = 65534;
/** The CFS period of the CPU limit; the quota is SANDBOX_CPUS of it. */
const CPU_PERIOD_US = 100_000;

export interface SpecOptions {
  rootfs: string;
  /** The sandbox's package view (package-view.ts), mounted at /pkg: it holds only the package it runs. */
  pkgView?: string;
  /** Start the guest from the rootfs's startup snapshot (built for this memoryMb). */
  snapshot?: boolean;
  /** Extra guest arguments (e.g. `--warm=none`). */
  guestArgs?: string[];
  memoryMb: number;
  pidsLimit: number;
  /** CPU limit in cores (CFS quota over a 100 ms period); none when undefined (the snapshot build). */
  cpus?: number;
  tmpSizeMb: number;
  hostname: string;
  cgroupsPath: string;
  /** Egress mode: the sandbox's own network namespace (else a new, empty one) and the resolv.conf to mount. */
  netnsPath?: string;
  resolvConf?: string;
}

/** Node flags of the guest: it loads tool packages with vm modules (guest/modules.cjs); its stderr is for crashes. */
export const GUEST_NODE_FLAGS = ['--experimental-vm-modules', '--no-warnings'];

/** V8 heap limit: leave room for Node's own non-heap memory and buffers inside the memory limit. */
export const heapLimitMb = (memoryMb: number): number => Math.max(32, Math.floor(memoryMb * 0.6));

/** The guest's V8 flags; a startup snapshot only loads under the flags it was built with. */
export const v8Flags = (memoryMb: number): string[] => [`--max-old-space-size=${heapLimitMb(memoryMb)}`];

/** The guest's command line: from the startup snapshot, or from its main file. */
export function guestCommand(o: { memoryMb: number; snapshot?: boolean; guestArgs?: string[] }): string[] {
  const start = o.snapshot ? ['--snapshot-blob', IN_SANDBOX.snapshot, '--'] : [IN_SANDBOX.guest];
  return [IN_SANDBOX.node, ...GUEST_NODE_FLAGS, ...v8Flags(o.memoryMb), ...start, '--serve', ...(o.guestArgs ?? [])];
}

const bind = (source: string, destination: string, writable = false) => ({
  destination,
  type: 'bind',
  source,
  options: ['rbind', ...(writable ? [] : ['ro']), 'nosuid', 'nodev'],
});

/** The OCI runtime spec of one sandbox. The guest waits on stdin for its request (see guest/main.cjs). */
export function buildSpec(o: SpecOptions): Record<string, unknown> {
  const mounts: Record<string, unknown>[] = [
    { destination: '/proc', type: 'proc', source: 'proc' },
    { destination: '/dev', type: 'tmpfs', source: 'tmpfs', options: ['nosuid', 'noexec', 'mode=755'] },
    { destination: IN_SANDBOX.tmp, type: 'tmpfs', source: 'tmpfs', options: ['nosuid', 'nodev', 'mode=1777', `size=${o.tmpSizeMb}m`] },
  ];
  // Not read-only in the sandbox: the host decides. The view is root's (the sandbox's user cannot write to it), a package is
  // bound into it read-only, and only an MCP server's package is an overlay whose writes land in a throwaway layer.
  if (o.pkgView) mounts.push(bind(o.pkgView, IN_SANDBOX.pkg, true));
  if (o.resolvConf) mounts.push(bind(o.resolvConf, '/etc/resolv.conf'));
  return {
    ociVersion: '1.0.0',
    process: {
      terminal: false,
      user: { uid: SANDBOX_UID, gid: SANDBOX_UID, additionalGids: [] },
      args: guestCommand(o),
      // Only HOME (gVisor would otherwise add HOME=/); the guest gives each execution exactly its own env plus HOME.
      env: [`HOME=${IN_SANDBOX.home}`],
      cwd: IN_SANDBOX.tmp,
      capabilities: { bounding: [], effective: [], inheritable: [], permitted: [], ambient: [] },
      rlimits: [
        { type: 'RLIMIT_NOFILE', hard: 1024, soft: 1024 },
        { type: 'RLIMIT_NPROC', hard: o.pidsLimit, soft: o.pidsLimit },
      ],
      noNewPrivileges: true,
    },
    root: { path: o.rootfs, readonly: true },
    hostname: o.hostname,
    mounts,
    linux: {
      cgroupsPath: o.cgroupsPath,
      resources: {
        memory: { limit: o.memoryMb * 1024 * 1024, swap: o.memoryMb * 1024 * 1024 },
        // The host pids cgroup also counts the sentry's and gofer's threads and the ptrace stubs, and gVisor crashes
        // when it runs out; it is a backstop for the host. Processes inside are limited by RLIMIT_NPROC below.
        pids: { limit: o.pidsLimit * 4 + 256 },
        // Counts the sentry, the gofer and the ptrace stubs too: all of the sandbox's work, whatever the tool does.
        ...(o.cpus === undefined ? {} : { cpu: { quota: Math.max(1000, Math.round(o.cpus * CPU_PERIOD_US)), period: CPU_PERIOD_US } }),
      },
      namespaces: [
        { type: 'pid' },
        o.netnsPath ? { type: 'network', path: o.netnsPath } : { type: 'network' },
        { type: 'ipc' },
        { type: 'uts' },
        { type: 'mount' },
      ],
      maskedPaths: ['/proc/kcore', '/proc/keys', '/proc/timer_list', '/proc/sched_debug'],
      readonlyPaths: ['/proc/sys', '/proc/sysrq-trigger', '/proc/irq', '/proc/bus'],
    },
  };
}

/** Writes a bundle directory (config.json only; the rootfs is shared by absolute path). */
export function writeBundle(bundleDir: string, spec: Record<string, unknown>): void {
  fs.mkdirSync(bundleDir, { recursive: true });
  fs.writeFileSync(path.join(bundleDir, 'config.json'), JSON.stringify(spec));
}
