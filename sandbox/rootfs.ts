/**
 * The read-only root filesystem of gVisor sandboxes, built once per runner (content-addressed under the state dir): only
 * the Node runtime — the node binary, the shared libraries `ldd` lists (and three more of glibc's, for prebuilt native
 * addons), the dynamic loader — a POSIX shell at /bin/sh
 * (the host's, dash on Debian: `child_process.exec` and `spawn(…, { shell: true })` need it, and real tool packages
 * use them; it can do nothing node cannot), the guest (sandbox/guest, its `.cjs` files and warm-up), with its startup
 * snapshot (snapshot.ts), and an /etc of its own.
 * It sits above bundle.ts and snapshot.ts (the snapshot is taken in a sandbox of a bundle), so neither imports the other
 * back.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { GUEST_NODE_FLAGS, GUEST_SOURCE_DIR, IN_SANDBOX, SANDBOX_UID, v8Flags } from './bundle.js';
import { buildGuestSnapshot, type SnapshotOptions } from './snapshot.js';
import { guestVendorStamp, writeGuestVendor } from './guest-vendor.js';

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
/**
 * glibc's own libraries that node does not link but the prebuilt native addons of npm packages do, taken from the
 * directory of the host's libc: sharp's libvips (the most used image library on npm) needs libresolv, and prebuilt
 * binaries commonly link librt and libutil. They are part of the C library node already runs on (no new program, no
 * new service), so the sandbox's reach is the same. Native code that needs libraries outside glibc still fails to load.
 */
const GLIBC_EXTRAS = ['libresolv.so.2', 'librt.so.1', 'libutil.so.1'];
/**
 * OpenSSL 3, which node carries inside its own binary but servers shipped through npm as native programs load from the
 * system: a .NET server (@azure/mcp: "No usable version of libssl was found"), Rust and Go binaries built against the
 * system's OpenSSL. Taken when the host has it (Debian's libssl3); like the libraries above, code and no new reach.
 */
const OPENSSL = ['libssl.so.3', 'libcrypto.so.3'];

/** Host paths of the libraries above, beside the libc among `libs`. */
export function extraLibraries(libs: string[]): string[] {
  const libc = libs.find((l) => path.basename(l) === 'libc.so.6');
  if (!libc) return [];
  return [...GLIBC_EXTRAS, ...OPENSSL].map((name) => path.join(path.dirname(libc), name)).filter((file) => fs.existsSync(file));
}

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
/** The host's POSIX shell, copied to /bin/sh in the rootfs. */
const HOST_SHELL = '/bin/sh';

export function prepareRootfs(stateDir: string, nodeBinary: string, snapshot?: SnapshotOptions): string {
  const linked = [...sharedLibraries(nodeBinary), ...sharedLibraries(fs.realpathSync(HOST_SHELL))];
  const libs = [...new Set([...linked, ...extraLibraries(linked)])];
  const guestFiles = (fs.readdirSync(GUEST_SOURCE_DIR, { recursive: true }) as string[])
    .filter((f) => fs.statSync(path.join(GUEST_SOURCE_DIR, f)).isFile() && path.basename(f) !== 'tsconfig.json')
    .sort();
  const hash = createHash('sha256');
  for (const file of [nodeBinary, HOST_SHELL, ...libs]) {
    const st = fs.statSync(file);
    hash.update(`${file}:${st.size}:${st.mtimeMs}\n`);
  }
  for (const file of guestFiles) hash.update(`${file}\n`).update(fs.readFileSync(path.join(GUEST_SOURCE_DIR, file)));
  hash.update(`etc:${JSON.stringify(ETC_FILES)}\ndirs:${ROOTFS_DIRS.join(',')}\n`);
  hash.update(guestVendorStamp());
  if (snapshot) hash.update(`snapshot:${[...GUEST_NODE_FLAGS, ...v8Flags(snapshot.memoryMb)].join(' ')}\n`);
  const rootfs = path.join(stateDir, `rootfs-${hash.digest('hex').slice(0, 12)}`);
  // The completion marker sits beside the rootfs, not in it: the sandbox sees nothing but the runtime and the guest.
  if (fs.existsSync(`${rootfs}.complete`)) return rootfs;

  const building = `${rootfs}.tmp-${process.pid}`;
  fs.rmSync(building, { recursive: true, force: true });
  for (const dir of ROOTFS_DIRS) fs.mkdirSync(path.join(building, dir), { recursive: true });
  for (const [file, text] of Object.entries(ETC_FILES)) fs.writeFileSync(path.join(building, 'etc', file), text, { mode: 0o644 });
  copyInto(building, nodeBinary, IN_SANDBOX.node);
  copyInto(building, HOST_SHELL, IN_SANDBOX.shell);
  for (const lib of libs) copyInto(building, lib, lib);
  for (const file of guestFiles) {
    const target = path.join(building, 'guest', file);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.copyFileSync(path.join(GUEST_SOURCE_DIR, file), target);
    fs.chmodSync(target, 0o644);
  }
  writeGuestVendor(path.join(building, 'guest'));
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
