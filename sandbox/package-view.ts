/**
 * Package views: what a sandbox sees at /pkg. Every sandbox boots with an empty host directory of its own (its view)
 * mounted read-only at /pkg. When it is handed its first request, the one package it is to run is bind-mounted
 * read-only on the host into that directory (`/pkg/<cache dir name>` inside); the mount goes when the sandbox is
 * destroyed. So a sandbox never sees the package cache or another package, and a warm pool still serves any package.
 *
 * Why a mount made after boot reaches the sandbox: the views' root is a shared mount point on the host, and runsc's
 * gofer starts in a mount namespace of its own whose mounts are slaves of the host's (runsc makes them so), so the
 * bind propagates to the gofer that serves /pkg; gVisor revalidates files of bind mounts (`--file-access-mounts`
 * defaults to shared) and finds it. Egress mode's launcher keeps its namespace a slave too (egress.ts).
 *
 * Never `rm -r` here: a view may still hold a mount of a cache directory. Directories are removed one by one with
 * rmdir, which fails rather than deletes through a mount.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { IN_SANDBOX, SANDBOX_UID } from './bundle.js';
import { runCommand, systemBinary } from './command.js';
import { createMounter } from './mounter.js';

export interface PackageViews {
  /** Creates a sandbox's empty view; returns its host path (mounted at /pkg by the sandbox's spec). */
  create(id: string): string;
  /**
   * Mounts `hostDir` read-only into the sandbox's view; returns the package's path inside the sandbox. With
   * `writable`, the package is an overlay instead (see `attachWritable`): a server can write beside itself.
   */
  attach(id: string, hostDir: string, writable?: WritableOptions): Promise<string>;
  /** Unmounts and removes a sandbox's view (once the sandbox is gone). */
  remove(id: string): Promise<void>;
  /** Removes every view left and the views' root. */
  close(): Promise<void>;
}

/** A writable layer over a package (MCP servers that write beside themselves, e.g. server-memory's memory.jsonl). */
export interface WritableOptions {
  /** Files (relative to the package dir, e.g. the server's bin) whose own package's directories become writable. */
  beside: string[];
  /** Size of the sandbox's throwaway layer (a tmpfs), in MB. */
  sizeMb: number;
}

/** At most this many directories are made writable per sandbox (a mkdir and a chown each, on the host). */
const MAX_WRITABLE_DIRS = 2000;

/**
 * The package's directories made writable by the sandbox's user: the package root's own tree and the tree of each
 * `beside` file's package (the nearest ancestor with a package.json), with their ancestors, never into a nested
 * node_modules. Relative paths, parents first.
 */
export function writableDirs(hostDir: string, beside: string[]): string[] {
  const dirs = new Set<string>(['']);
  const walk = (rel: string) => {
    if (dirs.size >= MAX_WRITABLE_DIRS) return;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(path.join(hostDir, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (!e.isDirectory() || e.name === 'node_modules' || dirs.size >= MAX_WRITABLE_DIRS) continue;
      const child = rel ? `${rel}/${e.name}` : e.name;
      dirs.add(child);
      walk(child);
    }
  };
  walk('');
  for (const file of beside) {
    const rel = path.posix.normalize(file);
    if (rel.startsWith('..') || path.posix.isAbsolute(rel)) continue;
    let dir = path.posix.dirname(rel);
    while (dir !== '.' && !fs.existsSync(path.join(hostDir, dir, 'package.json'))) dir = path.posix.dirname(dir);
    if (dir === '.') continue;
    for (let up = dir; up !== '.'; up = path.posix.dirname(up)) dirs.add(up);
    walk(dir);
  }
  return [...dirs].sort((a, b) => a.split('/').length - b.split('/').length);
}

function binary(name: string): string {
  const found = systemBinary(name);
  if (!found) throw new Error(`the sandbox needs ${name} (util-linux) to give each sandbox its package`);
  return found;
}

/** Mount points (from /proc/self/mountinfo) at or below `dir`, deepest first. */
function mountsUnder(dir: string): string[] {
  const unescape = (s: string) => s.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
  return fs
    .readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => unescape(line.split(' ')[4] ?? ''))
    .filter((p) => p === dir || p.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
}

/** rmdir of a view's directories, two levels deep (view/<package>); leaves whatever is not empty. */
function removeDirs(dir: string): void {
  try {
    for (const entry of fs.readdirSync(dir)) fs.rmdirSync(path.join(dir, entry));
    fs.rmdirSync(dir);
  } catch {
    // still mounted or already gone: left for the next start's clean-up
  }
}

/** A process's start time (clock ticks after boot, /proc/<pid>/stat field 22), or undefined when it is gone. */
function startTimeOf(pid: number | 'self'): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count fields after its closing one.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/**
 * Whether the runner that made a views directory is still alive. Its name is `<pid>-<start time>-<random>`: a pid
 * alone is not enough, since after a restart (a container above all) the dead runner's pid is often another live
 * process's, and its mounts were then kept for ever. A name of the older `<pid>-<random>` form goes by the pid alone.
 */
function ownerAlive(name: string): boolean {
  const [pidText, started, random] = name.split('-');
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return true; // not ours: leave it
  if (random === undefined) return startTimeOf(pid) !== undefined;
  return startTimeOf(pid) === started;
}

/** Lazily unmounts every mount at or below `dir` (the mounts stay usable by whoever still holds them). */
function detachAll(dir: string, umount: string): void {
  for (const mountPoint of mountsUnder(dir)) {
    try {
      execFileSync(umount, ['-l', mountPoint], { stdio: 'ignore', env: {} });
    } catch {
      // already gone
    }
  }
}

/** Unmounts and removes the views of runners that died without closing (a crash, `kill -9`). */
function cleanStale(viewsDir: string, umount: string): void {
  for (const name of fs.readdirSync(viewsDir)) {
    if (ownerAlive(name)) continue;
    const root = path.join(viewsDir, name);
    detachAll(root, umount);
    if (fs.existsSync(root)) {
      for (const view of fs.readdirSync(root)) removeDirs(path.join(root, view));
      removeDirs(root);
    }
  }
}

/** What the live runners' views must undo if the process exits before they close: one `exit` listener for them all. */
const exitCleanups = new Set<() => void>();
let listeningForExit = false;

function atExit(cleanup: () => void): void {
  if (!listeningForExit) {
    process.on('exit', () => {
      for (const each of exitCleanups) each();
    });
    listeningForExit = true;
  }
  exitCleanups.add(cleanup);
}

/**
 * The package views of one runner, under `<stateDir>/views/<pid>-<start time>-<random>` (one per runner, so that
 * runners sharing a state dir never touch each other's mounts). Needs root, like runsc.
 */
export function createPackageViews(stateDir: string): PackageViews {
  const mount = binary('mount');
  const umount = binary('umount');
  const viewsDir = path.join(stateDir, 'views');
  fs.mkdirSync(viewsDir, { recursive: true, mode: 0o700 });
  cleanStale(viewsDir, umount);
  const root = path.join(viewsDir, `${process.pid}-${startTimeOf('self')}-${randomBytes(3).toString('hex')}`);
  fs.mkdirSync(root);
  fs.chmodSync(root, 0o755);
  execFileSync(mount, ['--bind', root, root], { stdio: 'ignore', env: {} });
  execFileSync(mount, ['--make-rshared', root], { stdio: 'ignore', env: {} });
  const mounter = createMounter();
  const attached = new Map<string, string>();
  /** Sandboxes whose package is an overlay: the tmpfs holding its throwaway layer. */
  const scratch = new Map<string, string>();
  // However the process ends short of close() (a stop deadline's exit, an uncaught error), its mounts go with it;
  // only SIGKILL leaves them, for the next start's cleanStale.
  const onExit = () => detachAll(root, umount);
  atExit(onExit);

  async function remove(id: string): Promise<void> {
    const target = attached.get(id);
    attached.delete(id);
    // Lazy: the sandbox has ended, but its gofer may still be letting go of its copy of the mount.
    if (target) await mounter.detach(target).catch(() => {});
    const layer = scratch.get(id);
    scratch.delete(id);
    if (layer) {
      await mounter.detach(layer).catch(() => {});
      removeDirs(layer);
    }
    removeDirs(path.join(root, id));
  }

  /**
   * An overlay of the package for one sandbox: the package (read-only, untouched) below, and above it a tmpfs of
   * the sandbox's own (`<root>/<id>.w`, outside its view, so never seen as such) holding the package's directories
   * again, owned by the sandbox's user. So the server can create files beside itself (existing files stay the
   * package's, read-only for it); what it writes lives in that tmpfs, bounded by `sizeMb`, and goes with the sandbox.
   */
  async function attachWritable(id: string, hostDir: string, target: string, o: WritableOptions): Promise<void> {
    if (/[,:\\\s]/.test(hostDir) || /[,:\\\s]/.test(root)) throw new Error(`cannot overlay a path with , : \\ or spaces: ${hostDir}`);
    const layer = path.join(root, `${id}.w`);
    fs.mkdirSync(layer);
    scratch.set(id, layer);
    const run = async (args: string[], what: string) => {
      const r = await runCommand(mount, args);
      if (r.code !== 0) throw new Error(`${what} failed: ${r.stderr.trim().slice(0, 300)}`);
    };
    await run(['-t', 'tmpfs', '-o', `nosuid,nodev,mode=0700,size=${Math.max(1, Math.round(o.sizeMb))}m`, 'tmpfs', layer], 'mounting a writable layer');
    const upper = path.join(layer, 'upper');
    const work = path.join(layer, 'work');
    fs.mkdirSync(work);
    for (const rel of writableDirs(hostDir, o.beside)) {
      const dir = path.join(upper, rel);
      fs.mkdirSync(dir, { recursive: true });
      fs.chmodSync(dir, 0o755);
      fs.chownSync(dir, SANDBOX_UID, SANDBOX_UID);
    }
    await run(['-t', 'overlay', '-o', `nosuid,nodev,lowerdir=${hostDir},upperdir=${upper},workdir=${work}`, 'overlay', target], `overlaying ${hostDir}`);
  }

  return {
    create(id) {
      const view = path.join(root, id);
      fs.mkdirSync(view);
      // The sandbox's user must be able to enter /pkg whatever this process's umask.
      fs.chmodSync(view, 0o755);
      return view;
    },
    async attach(id, hostDir, writable) {
      if (attached.has(id)) throw new Error(`sandbox ${id} already has its package`);
      const name = path.basename(hostDir);
      if (!name || name === '.' || name === '..') throw new Error(`not a package directory: ${hostDir}`);
      const target = path.join(root, id, name);
      fs.mkdirSync(target);
      attached.set(id, target);
      if (writable) await attachWritable(id, hostDir, target, writable);
      else await mounter.bindReadOnly(hostDir, target);
      return path.posix.join(IN_SANDBOX.pkg, name);
    },
    remove,
    async close() {
      exitCleanups.delete(onExit);
      await Promise.all([...attached.keys()].map(remove));
      mounter.close();
      detachAll(root, umount);
      for (const view of fs.existsSync(root) ? fs.readdirSync(root) : []) removeDirs(path.join(root, view));
      removeDirs(root);
    },
  };
}
