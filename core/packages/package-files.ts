/**
 * Putting a package's files on the worker host, which does this as root. Whatever the files claim (owners, setuid
 * bits, device nodes, links, `..` paths), the result is a tree of plain files, directories and links that stay inside
 * it, owned by the installing user, world-readable and writable by nobody else. Each function returns what it refused,
 * by path; the caller refuses the package when anything was.
 */
import fs from 'node:fs/promises';
import { createReadStream, type Stats } from 'node:fs';
import path from 'node:path';
import * as tar from 'tar';
import type { ErrorDetail } from '../infra/errors.js';

const TAR_TYPES = new Set(['File', 'OldFile', 'ContiguousFile', 'Directory', 'SymbolicLink', 'Link']);

/** Entries (files, directories, links) and bytes a package may hold as installed (MAX_PACKAGE_FILES, MAX_PACKAGE_INSTALLED_MB). */
export interface TreeLimits {
  maxFiles?: number;
  maxBytes?: number;
}

/** A package over a bound: its message names the limit and the setting. */
export class PackageLimitError extends Error {}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** Entries and bytes against the limits: the first one over, as a message naming it, or null. */
export function overLimits(entries: number, bytes: number, limits: TreeLimits, what: string): string | null {
  if (limits.maxFiles !== undefined && entries > limits.maxFiles)
    return `${what} has over ${limits.maxFiles} files and directories, the limit (MAX_PACKAGE_FILES)`;
  if (limits.maxBytes !== undefined && bytes > limits.maxBytes) return `${what} is over ${mib(limits.maxBytes)}, the limit (MAX_PACKAGE_INSTALLED_MB)`;
  return null;
}

/** How much an archive may inflate (its files' declared sizes over the tarball's size): beyond it, a bomb. */
const MAX_INFLATION = 1000;
/** Problems collected at most (a stream of garbage would give one per 512 bytes). */
const MAX_PROBLEMS = 1000;

/**
 * Unpacks an npm tarball (its top folder stripped, as npm does) into `dir`. node-tar runs in-process with a filter, so
 * entries are judged before anything is written: GNU tar as root would keep owners and modes and create device nodes.
 * Entries and their declared sizes are counted as their headers are read: past `limits`, or past a thousandfold
 * inflation of the tarball (a decompression bomb), it stops reading, lets what it wrote settle, writes nothing more and
 * throws a PackageLimitError.
 */
export async function extractTarball(file: string, dir: string, limits: TreeLimits = {}): Promise<ErrorDetail[]> {
  const problems: ErrorDetail[] = [];
  const refuse = (p: string, message: string) => (problems.push({ path: p, message }), false);
  const packed = Math.max(1, (await fs.stat(file)).size);
  const input = createReadStream(file);
  let entries = 0;
  let bytes = 0;
  /** Why unpacking stopped early: no more input, every further entry skipped. */
  let stopped: Error | undefined;
  const stop = (why: Error) => {
    if (stopped) return;
    stopped = why;
    input.unpipe(unpack);
    input.destroy();
    // Ended from outside node-tar's own write loop; entries it began finish before it closes.
    setImmediate(() => unpack.end());
  };
  const unpack = new tar.Unpack({
    cwd: dir,
    // Its own ratio check aborts without waiting for writes in flight; ours (declared sizes, below) comes first.
    maxDecompressionRatio: MAX_INFLATION * 10,
    strip: 1,
    // node-tar defaults to keeping the archive's uid/gid when run as root.
    preserveOwner: false,
    onwarn: (code, message, data) => {
      // node-tar skips (and warns about) entries it judges unsafe, e.g. a relative link leading out; skipped is refused.
      if (code === 'TAR_ENTRY_INFO' || stopped) return;
      const entry = data.entry as { path?: string } | undefined;
      problems.push({ path: String(entry?.path ?? data.path ?? 'tarball'), message });
      if (problems.length >= MAX_PROBLEMS) stop(new Error('too many problems'));
    },
    filter: (p, entry) => {
      const e = entry as tar.ReadEntry;
      if (stopped) return false;
      bytes += e.size ?? 0;
      const tooMuch =
        overLimits(++entries, bytes, limits, 'the package') ??
        (bytes / packed > MAX_INFLATION ? `the package's tarball inflates over ${MAX_INFLATION}-fold (a decompression bomb), which is refused` : null);
      if (tooMuch) {
        stop(new PackageLimitError(tooMuch));
        return false;
      }
      if (!TAR_TYPES.has(e.type)) return refuse(p, `is a ${e.type} entry; only files, directories and links are installed`);
      if (path.posix.isAbsolute(p) || p.split(/[\\/]/).includes('..'))
        return refuse(p, 'has an absolute path or a `..` segment, which would escape the package');
      if (e.type === 'SymbolicLink' || e.type === 'Link') {
        const target = String(e.linkpath ?? '');
        if (path.posix.isAbsolute(target)) return refuse(p, `is a link to the absolute path ${target}, outside the package`);
        // A hard link's target is an archive path, so it may never climb; relative symlinks are checked after unpacking.
        if (e.type === 'Link' && target.split(/[\\/]/).includes('..')) return refuse(p, `is a hard link to ${target}, outside the package`);
      }
      // Created with plain modes from the start; secureTree sets the exact ones afterwards.
      e.mode = e.type === 'Directory' || (e.mode ?? 0) & 0o111 ? 0o755 : 0o644;
      return true;
    },
  });
  try {
    await new Promise<void>((resolve, reject) => {
      // Once stopped, node-tar's complaint about the input cut short is expected; it still closes.
      unpack.on('error', (err) => (stopped ? undefined : reject(err)));
      unpack.on('close', () => resolve());
      input.on('error', (err) => (stopped ? undefined : reject(err)));
      input.pipe(unpack);
    });
  } catch (err) {
    const message = (err as Error).message;
    if (/max decompression ratio exceeded/.test(message))
      throw new PackageLimitError(`the package's tarball inflates over ${MAX_INFLATION}-fold (a decompression bomb), which is refused`);
    // A corrupt or truncated archive is the package's problem, named as node-tar says it.
    return [{ path: 'tarball', message: `cannot be unpacked: ${message}` }];
  } finally {
    input.destroy();
  }
  if (stopped instanceof PackageLimitError) throw stopped;
  if (problems.length > 0) return problems;
  return secureTree(dir);
}

/** Entries (files, directories, links) under `root`, and the bytes of its files, links not followed. */
export async function treeUsage(root: string): Promise<{ entries: number; bytes: number }> {
  let entries = 0;
  let bytes = 0;
  const visit = async (d: string): Promise<void> => {
    for (const e of await fs.readdir(d, { withFileTypes: true })) {
      entries++;
      const p = path.join(d, e.name);
      if (e.isDirectory()) await visit(p);
      else if (e.isFile()) bytes += (await fs.lstat(p)).size;
    }
  };
  await visit(root);
  return { entries, bytes };
}

/** Copies a package folder, links as links (verbatim, never followed), refusing device files, fifos and sockets. */
export async function copyFolder(src: string, dest: string): Promise<ErrorDetail[]> {
  const problems: ErrorDetail[] = [];
  await fs.cp(src, dest, {
    recursive: true,
    dereference: false,
    // Otherwise Node rewrites relative link targets to absolute paths into the source folder.
    verbatimSymlinks: true,
    filter: async (from) => {
      const st = await fs.lstat(from);
      if (st.isFile() || st.isDirectory() || st.isSymbolicLink()) return true;
      problems.push({ path: path.relative(src, from), message: `is a ${kind(st)}; only files, directories and links are installed` });
      return false;
    },
  });
  return problems;
}

/**
 * Walks the tree without following links: refuses links that lead outside it (or are absolute: the tree is moved after
 * installing) and anything that is not a file, directory or link; gives everything else to the installing user with
 * mode 755 (directories, executables) or 644, dropping setuid/setgid/sticky bits and group/world write.
 */
export async function secureTree(root: string): Promise<ErrorDetail[]> {
  const problems: ErrorDetail[] = [];
  const base = await fs.realpath(root);
  // Only root can give files away; anyone else already owns what they create.
  const owner = process.getuid?.() === 0 ? { uid: 0, gid: process.getgid!() } : null;
  const visit = async (p: string): Promise<void> => {
    const st = await fs.lstat(p);
    const rel = path.relative(base, p) || '.';
    if (st.isSymbolicLink()) {
      const problem = await linkProblem(base, p);
      if (problem) problems.push({ path: rel, message: problem });
      else if (owner) await fs.lchown(p, owner.uid, owner.gid);
      return;
    }
    if (!st.isFile() && !st.isDirectory()) {
      problems.push({ path: rel, message: `is a ${kind(st)}; only files, directories and links are installed` });
      return;
    }
    if (owner) await fs.lchown(p, owner.uid, owner.gid);
    await fs.chmod(p, st.isDirectory() || st.mode & 0o111 ? 0o755 : 0o644);
    if (st.isDirectory()) for (const name of await fs.readdir(p)) await visit(path.join(p, name));
  };
  await visit(base);
  return problems;
}

async function linkProblem(base: string, link: string): Promise<string | null> {
  const target = await fs.readlink(link);
  const outside = `is a link to ${target}, outside the package`;
  if (path.isAbsolute(target) || !within(base, path.resolve(path.dirname(link), target))) return outside;
  // The lexical check alone can be fooled by a chain of links; the resolved path must be inside too.
  try {
    if (!within(base, await fs.realpath(link))) return outside;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // A dangling link inside the package is harmless (the installed tree never changes); a loop is not installable.
    if (code !== 'ENOENT') return `is a link that cannot be resolved (${code})`;
  }
  return null;
}

function within(base: string, p: string): boolean {
  const rel = path.relative(base, p);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

function kind(st: Stats): string {
  if (st.isFIFO()) return 'fifo';
  if (st.isSocket()) return 'socket';
  if (st.isCharacterDevice()) return 'character device';
  if (st.isBlockDevice()) return 'block device';
  return 'special file';
}
