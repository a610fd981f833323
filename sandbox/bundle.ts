/**
 * OCI bundles for gVisor sandboxes. The root filesystem is built once per runner (content-addressed under the state
 * dir) and holds only the Node runtime — the node binary, the shared libraries `ldd` lists, the dynamic loader — and
 * the guest, with its startup snapshot (snapshot.ts), and an /etc of its own. Each sandbox gets its own bundle dir
 * with a config.json that mounts its package view (package-view.ts: an empty directory of its own, into which the
 * one package it runs is mounted at hand-over) read-only at /pkg, a small tmpfs at /tmp, runs as nobody with no
 * capabilities and HOME on that tmpfs, and carries memory, pids and CPU limits.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildGuestSnapshot, type SnapshotOptions } from './snapshot.js';

export const GUEST_SOURCE_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'guest');
/** Where things appear inside the sandbox. */
export const IN_SANDBOX = { node: '/usr/bin/node', guest: '/guest/main.cjs', snapshot: '/guest/snapshot.blob', pkg: '/pkg', tmp: '/tmp', home: '/tmp/home' };
export const SANDBOX_UID = 65534;
/**
 * The rootfs's /etc: fixed name resolution (resolv.conf is empty unless egress mounts one), and a user and group
 * for uid/gid 65534, so that `os.userInfo()` and `os.homedir()` (getpwuid) answer as they do on any Linux. The home
 * directory is on the sandbox's /tmp tmpfs; the guest creates it (guest/run-op.cjs).
 */
const ETC_FILES = {
  hosts: '127.0.0.1 localhost\n::1 localhost\n',
  'nsswitch.conf': 'passwd: files\ngroup: files\nhosts: files dns\n',
  'resolv.conf': '',
  passwd: `nobody:x:${SANDBOX_UID}:${SANDBOX_UID}:nobody:${IN_SANDBOX.home}:/usr/sbin/nologin\n`,
  group: `nogroup:x:${SANDBOX_UID}:\n`,
};
/** Mount points and other directories of the rootfs. */
const ROOTFS_DIRS = ['proc', 'dev', 'tmp', 'pkg', 'guest', 'etc'];
/** The CFS period of the CPU limit; the quota is SANDBOX_CPUS of it. */
const CPU_PERIOD_US = 100_000;

/** Host paths of the shared libraries and the loader a binary needs. */
export function sharedLibraries(binary: string): string[] {
  const out = execFileSync('ldd', [binary], { encoding: 'utf8' });
  const libs = new Set<string>();
  for (const line of out.split('\n')) {
    const m = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    if (m) libs.add(m[1]);
  }
  return [...libs];
}

function copyInto(rootfs: string, hostPath: string, inside: string): void {
  const target = path.join(rootfs, inside);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  // Always a copy (never a hard link): the sandbox must not share an inode with the host's runtime.
  fs.copyFileSync(fs.realpathSync(hostPath), target, fs.constants.COPYFILE_FICLONE);
  fs.chmodSync(target, 0o555);
}

/**
 * Builds (or reuses) the read-only root filesystem: node, its libraries and the guest, and with `snapshot` the
 * guest's startup snapshot for that memory size. Named by a hash of its inputs, so a new node binary or guest
 * version gets a new rootfs and running sandboxes keep theirs.
 */
export function prepareRootfs(stateDir: string, nodeBinary: string, snapshot?: SnapshotOptions): string {
  const libs = sharedLibraries(nodeBinary);
  const guestFiles = (fs.readdirSync(GUEST_SOURCE_DIR, { recursive: true }) as string[])
    .filter((f) => fs.statSync(path.join(GUEST_SOURCE_DIR, f)).isFile())
    .sort();
  const hash = createHash('sha256');
  for (const file of [nodeBinary, ...libs]) {
    const st = fs.statSync(file);
    hash.update(`${file}:${st.size}:${st.mtimeMs}\n`);
  }
  for (const file of guestFiles) hash.update(`${file}\n`).update(fs.readFileSync(path.join(GUEST_SOURCE_DIR, file)));
  hash.update(`etc:${JSON.stringify(ETC_FILES)}\ndirs:${ROOTFS_DIRS.join(',')}\n`);
  if (snapshot) hash.update(`snapshot:${[...GUEST_NODE_FLAGS, ...v8Flags(snapshot.memoryMb)].join(' ')}\n`);
  const rootfs = path.join(stateDir, `rootfs-${hash.digest('hex').slice(0, 12)}`);
  // The completion marker sits beside the rootfs, not in it: the sandbox sees nothing but the runtime and the guest.
  if (fs.existsSync(`${rootfs}.complete`)) return rootfs;

  const building = `${rootfs}.tmp-${process.pid}`;
  fs.rmSync(building, { recursive: true, force: true });
  for (const dir of ROOTFS_DIRS) fs.mkdirSync(path.join(building, dir), { recursive: true });
  for (const [file, text] of Object.entries(ETC_FILES)) fs.writeFileSync(path.join(building, 'etc', file), text, { mode: 0o644 });
  copyInto(building, nodeBinary, IN_SANDBOX.node);
  for (const lib of libs) copyInto(building, lib, lib);
  for (const file of guestFiles) {
    const target = path.join(building, 'guest', file);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.copyFileSync(path.join(GUEST_SOURCE_DIR, file), target);
    fs.chmodSync(target, 0o644);
  }
  if (snapshot) buildGuestSnapshot(building, snapshot);
  try {
    fs.renameSync(building, rootfs);
  } catch {
    // Another runner built the same rootfs concurrently; theirs is identical.
    fs.rmSync(building, { recursive: true, force: true });
  }
  fs.writeFileSync(`${rootfs}.complete`, '');
  return rootfs;
}

export interface SpecOptions {
  rootfs: string;
  /** The sandbox's package view (package-view.ts), mounted read-only at /pkg: it holds only the package it runs. */
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

const bind = (source: string, destination: string) => ({
  destination,
  type: 'bind',
  source,
  options: ['rbind', 'ro', 'nosuid', 'nodev'],
});

/** The OCI runtime spec of one sandbox. The guest waits on stdin for its request (see guest/main.cjs). */
export function buildSpec(o: SpecOptions): Record<string, unknown> {
  const mounts: Record<string, unknown>[] = [
    { destination: '/proc', type: 'proc', source: 'proc' },
    { destination: '/dev', type: 'tmpfs', source: 'tmpfs', options: ['nosuid', 'noexec', 'mode=755'] },
    { destination: IN_SANDBOX.tmp, type: 'tmpfs', source: 'tmpfs', options: ['nosuid', 'nodev', 'mode=1777', `size=${o.tmpSizeMb}m`] },
  ];
  if (o.pkgView) mounts.push(bind(o.pkgView, IN_SANDBOX.pkg));
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
