/**
 * Putting a package's files on the worker host, which does this as root. Whatever the files claim (owners, setuid
 * bits, device nodes, links, `..` paths), the result is a tree of plain files, directories and links that stay inside
 * it, owned by the installing user, world-readable and writable by nobody else. Each function returns what it refused,
 * by path; the caller refuses the package when anything was.
 */
import fs from 'node:fs/promises';
import type { Stats } from 'node:fs';
import path from 'node:path';
import * as tar from 'tar';
import type { ErrorDetail } from '../infra/errors.js';

const TAR_TYPES = new Set(['File', 'OldFile', 'ContiguousFile', 'Directory', 'SymbolicLink', 'Link']);

/**
 * Unpacks an npm tarball (its top folder stripped, as npm does) into `dir`. node-tar runs in-process with a filter, so
 * entries are judged before anything is written: GNU tar as root would keep owners and modes and create device nodes.
 */
export async function extractTarball(file: string, dir: string): Promise<ErrorDetail[]> {
  const problems: ErrorDetail[] = [];
  const refuse = (p: string, message: string) => (problems.push({ path: p, message }), false);
  await tar.x({
    file,
    cwd: dir,
    strip: 1,
    // node-tar defaults to keeping the archive's uid/gid when run as root.
    preserveOwner: false,
    onwarn: (code, message, data) => {
      // node-tar skips (and warns about) entries it judges unsafe, e.g. a relative link leading out; skipped is refused.
      if (code === 'TAR_ENTRY_INFO') return;
      const entry = data.entry as { path?: string } | undefined;
      problems.push({ path: String(entry?.path ?? data.path ?? 'tarball'), message });
    },
    filter: (p, entry) => {
      const e = entry as tar.ReadEntry;
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
  if (problems.length > 0) return problems;
  return secureTree(dir);
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
