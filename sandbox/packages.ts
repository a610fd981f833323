/**
 * Installs tool packages into the content-addressed cache that sandboxes mount read-only:
 * `<cache>/<name>@<version>` for npm sources, `<cache>/<name>@<version>+<content hash>` for folders.
 * Every package is staged first, refused if its files, name, version or dependencies are unsafe (see
 * core/packages/npm-rules.ts and package-files.ts), and only then published; an installed directory never changes.
 * npm runs with install scripts disabled, in a folder of its own holding only the vetted dependency list, and may only
 * fetch from the registry.
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import { createReadStream, existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ErrorDetail } from '../core/infra/errors.js';
import { installManifest, packageJsonProblems } from '../core/packages/npm-rules.js';
import { copyFolder, extractTarball, overLimits, PackageLimitError, secureTree, treeUsage, type TreeLimits } from '../core/packages/package-files.js';
import { DEFAULT_MAX_PACKAGE_FILES, DEFAULT_MAX_PACKAGE_INSTALLED_MB } from '../core/infra/config.js';

const execFileAsync = promisify(execFile);
/**
 * npm's output is held in memory: `npm pack --json` lists every file of the package (about 100 bytes each), so the
 * bound is far above what MAX_PACKAGE_FILES lets through (execFile's default, 1 MiB, failed a package of 15,000 files).
 */
const NPM_OUTPUT_MAX_BYTES = 256 * 1024 * 1024;
const run = (file: string, args: string[], opts: Parameters<typeof execFileAsync>[2] = {}) =>
  execFileAsync(file, args, { maxBuffer: NPM_OUTPUT_MAX_BYTES, ...opts, encoding: 'utf8' });
const MARKER = '.toolshed-installed';
// allow-*=none: npm itself refuses git, URL, tarball-file and folder dependencies anywhere in the tree, so a registry
// package cannot pull one in transitively (our own check only sees the package's direct dependencies).
const REGISTRY_ONLY = ['--allow-git=none', '--allow-remote=none', '--allow-file=none', '--allow-directory=none'];
const NPM_FLAGS = ['--ignore-scripts', '--no-audit', '--no-fund', '--omit=dev', '--no-package-lock', '--loglevel=error', ...REGISTRY_ONLY];

export type InstallSource = { kind: 'npm'; name: string; range: string } | { kind: 'path'; dir: string };

export interface InstalledPackage {
  dir: string;
  packageJson: Record<string, unknown>;
  /**
   * What the install was made from: an npm tarball's `sha512-<base64>` (checked against the registry's dist.integrity),
   * a folder's tree hash `sha256-<base64>`. The cache directory is named by it, and its marker file records it.
   */
  integrity: string;
}

export class InstallError extends Error {
  constructor(
    message: string,
    readonly userError: boolean,
    readonly details?: ErrorDetail[],
  ) {
    super(message);
  }
}

/** Throws a user error listing what was refused, if anything was. */
function refuseIf(problems: ErrorDetail[], what: string): void {
  if (problems.length === 0) return;
  const shown = problems.slice(0, 5).map((p) => `${p.path}: ${p.message}`);
  if (problems.length > 5) shown.push(`and ${problems.length - 5} more`);
  throw new InstallError(`${what}: ${shown.join('; ')}`, true, problems);
}

/** The cache directory of a package; refuses anything that is not a single new entry directly inside the cache. */
function cachePath(cacheDir: string, name: string, version: string, suffix = ''): string {
  const entry = `${name.replace('/', '+')}@${version}${suffix}`;
  const root = path.resolve(cacheDir);
  const target = path.resolve(root, entry);
  if (path.dirname(target) !== root || entry.startsWith('.') || entry.includes('\0')) {
    throw new InstallError(`'${name}@${version}' cannot be stored in the package cache`, true, [
      { path: 'package.json.name', message: 'is not a valid package name' },
    ]);
  }
  return target;
}

async function readPackageJson(dir: string, shownAs = dir): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await fs.readFile(path.join(dir, 'package.json'), 'utf8');
  } catch {
    throw new InstallError(`no package.json in ${shownAs}`, true);
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new InstallError('package.json is not valid JSON', true);
}

/** Moves a finished, secured staging directory into place; a concurrent install of the same key wins harmlessly. */
async function publish(staging: string, target: string, integrity: string): Promise<void> {
  await fs.writeFile(path.join(staging, MARKER), JSON.stringify({ integrity, installedAt: new Date().toISOString() }), { mode: 0o644 });
  await fs.rename(staging, target).catch(async (err: NodeJS.ErrnoException) => {
    await fs.rm(staging, { recursive: true, force: true });
    if (!existsSync(path.join(target, MARKER))) throw err;
  });
}

/**
 * Installs the package's (already vetted) dependencies into its node_modules. npm runs in a fresh folder holding only
 * the dependency list: the package's own files (.npmrc, lock files, overrides, workspaces) cannot steer it.
 */
async function installDependencies(cacheDir: string, pkgDir: string, pkg: Record<string, unknown>, npm: NpmOptions): Promise<void> {
  const manifest = installManifest(pkg);
  if (!manifest || existsSync(path.join(pkgDir, 'node_modules'))) return;
  await requireRegistryOnlyNpm();
  const work = await fs.mkdtemp(path.join(cacheDir, '.staging-deps-'));
  try {
    await fs.writeFile(path.join(work, 'package.json'), JSON.stringify(manifest));
    try {
      await npmInstall(work, npm);
    } catch (err) {
      const msg = firstLine(err);
      // A package whose install fails (a version that does not exist, a peer conflict even --force cannot settle)
      // is the package's problem: a 400 with npm's own words, never a 500.
      if (!/EALLOW/.test(msg)) {
        const said = npmErrorText(err);
        throw new InstallError(`installing dependencies failed: ${said}`, true, [{ path: 'package.json.dependencies', message: said }]);
      }
      // A registry package further down the tree names a git, URL, file or folder dependency; npm refused to fetch it.
      const refused = String((err as { stderr?: string }).stderr ?? '').match(/Refusing to fetch "([^"\n]{1,200})"/)?.[1] ?? msg;
      throw new InstallError(`a dependency of this package is not a registry package, and is not installed: ${refused}`, true, [
        { path: 'package.json.dependencies', message: `a dependency needs ${refused}, which is not from the registry` },
      ]);
    }
    if (existsSync(path.join(work, 'node_modules'))) await fs.rename(path.join(work, 'node_modules'), path.join(pkgDir, 'node_modules'));
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}

/**
 * `npm install` of the vetted dependency list. The package's dependencies are the root project's here, where npm is
 * strict about peer conflicts (ERESOLVE) that a plain `npm install <package>` (the package as a dependency) settles
 * with a warning by overriding the peer: on ERESOLVE it runs again with --force, which does just that.
 */
async function npmInstall(cwd: string, npm: NpmOptions): Promise<void> {
  try {
    await run('npm', ['install', ...NPM_FLAGS], { cwd, timeout: 300_000, env: npmEnv(npm) });
  } catch (err) {
    if (!/ERESOLVE/.test(String((err as { stderr?: string }).stderr ?? ''))) throw err;
    await run('npm', ['install', '--force', ...NPM_FLAGS], { cwd, timeout: 300_000, env: npmEnv(npm) });
  }
}

/** npm's error lines, without its log-file pointers (host paths), cut to a readable length. */
function npmErrorText(err: unknown): string {
  const e = err as { stderr?: string; message?: string };
  const lines = String(e.stderr || e.message || err)
    .split('\n')
    .map((l) => l.replace(/^npm (error|ERR!)\s?/, '').trim())
    .filter((l) => l && !/A complete log|For a full report|_logs\/|nodedir|^code [A-Z]/.test(l));
  return lines.slice(0, 12).join(' | ').slice(0, 1500) || 'unknown npm error';
}

let npmChecked: Promise<void> | undefined;
/** An npm without the allow-* settings would ignore them and fetch whatever a dependency names: refuse to use it. */
function requireRegistryOnlyNpm(): Promise<void> {
  npmChecked ??= run('npm', ['config', 'get', 'allow-remote'], { env: npmEnv(), timeout: 30_000 }).then(
    ({ stdout }) => {
      if (stdout.trim() === 'undefined') {
        npmChecked = undefined;
        throw new InstallError(
          'this npm has no allow-git/allow-remote settings, so it cannot be kept to the registry; upgrade npm (11.x, recent) on the worker host',
          false,
        );
      }
    },
    (err) => {
      npmChecked = undefined;
      throw new InstallError(`cannot run npm: ${firstLine(err)}`, false);
    },
  );
  return npmChecked;
}

/** How npm is run: `userconfig`, an npmrc file (NPM_USERCONFIG) to use instead of npm's own user configuration. */
export interface NpmOptions {
  userconfig?: string;
  /** The package's own tarball and its unpacked files, at most (a larger one is refused: a 400 naming the size). */
  maxTarballBytes?: number;
  maxUnpackedBytes?: number;
  /** The package as installed, its dependencies included: entries and bytes at most (MAX_PACKAGE_FILES, MAX_PACKAGE_INSTALLED_MB). */
  maxFiles?: number;
  maxInstalledBytes?: number;
}

function treeLimits(npm: NpmOptions): TreeLimits {
  return { maxFiles: npm.maxFiles ?? DEFAULT_MAX_PACKAGE_FILES, maxBytes: npm.maxInstalledBytes ?? DEFAULT_MAX_PACKAGE_INSTALLED_MB * 1024 * 1024 };
}

/** Refuses a package whose installed tree (dependencies included) is over MAX_PACKAGE_FILES or MAX_PACKAGE_INSTALLED_MB. */
async function checkInstalled(dir: string, shownAs: string, npm: NpmOptions): Promise<void> {
  const { entries, bytes } = await treeUsage(dir);
  const message = overLimits(entries, bytes, treeLimits(npm), `${shownAs} with its dependencies`);
  if (message) throw new InstallError(message, true, [{ path: 'source', message }]);
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** Refuses a packed package over the size limits (npm pack reports both sizes). */
function checkSizes(name: string, packed: { version: string; size?: number; unpackedSize?: number; entryCount?: number }, npm: NpmOptions): void {
  const over = (what: string, size: number | undefined, limit: number | undefined, setting: string) => {
    if (limit === undefined || size === undefined || size <= limit) return;
    const message = `${name}@${packed.version}: ${what} is ${mib(size)}, over the limit of ${mib(limit)} (${setting})`;
    throw new InstallError(message, true, [{ path: 'source', message }]);
  };
  over('its tarball', packed.size, npm.maxTarballBytes, 'MAX_PACKAGE_TARBALL_MB');
  over('its unpacked size', packed.unpackedSize, npm.maxUnpackedBytes, 'MAX_PACKAGE_UNPACKED_MB');
  const maxFiles = treeLimits(npm).maxFiles!;
  if (packed.entryCount !== undefined && packed.entryCount > maxFiles) {
    const message = `${name}@${packed.version}: it has ${packed.entryCount} files, over the limit of ${maxFiles} (MAX_PACKAGE_FILES)`;
    throw new InstallError(message, true, [{ path: 'source', message }]);
  }
}

/**
 * npm refused to read the tarball (its tar stops past a thousandfold inflation: a decompression bomb; or the archive
 * is corrupt), or listed more files than its output may hold: the package's problem, a 400 naming it.
 */
function refuseHostileArchive(err: unknown, spec: string): void {
  const e = err as { code?: unknown; stderr?: string };
  const said = String(e.stderr ?? '');
  let message: string | undefined;
  if (e.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER')
    message = `${spec}: npm's listing of its files is over ${mib(NPM_OUTPUT_MAX_BYTES)}: it has far more files than MAX_PACKAGE_FILES allows`;
  else if (/decompression ratio exceeded/.test(said)) message = `${spec}: its tarball inflates over 1000-fold (a decompression bomb), which is refused`;
  else if (/TAR_ABORT|TAR_BAD_ARCHIVE|zlib:/.test(said)) {
    const why = npmErrorText(err);
    message = `${spec}: its tarball cannot be unpacked: ${why}`;
  }
  if (message) throw new InstallError(message, true, [{ path: 'source', message }]);
}

export function npmEnv(npm: NpmOptions = {}): NodeJS.ProcessEnv {
  // npm needs PATH and HOME; nothing else of the service's environment is passed on.
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    npm_config_update_notifier: 'false',
    ...(npm.userconfig ? { npm_config_userconfig: npm.userconfig } : {}),
  };
}

function firstLine(err: unknown): string {
  const e = err as { stderr?: string; message?: string };
  return (e.stderr || e.message || String(err)).split('\n').find((l) => l.trim() && !l.includes('nodedir')) ?? 'unknown error';
}

/** Content hash of a tree (SHA-256): file paths and contents, and link paths and targets (links are installed as links). */
async function hashFolder(dir: string): Promise<Buffer> {
  const h = crypto.createHash('sha256');
  const walk = async (d: string) => {
    const entries = (await fs.readdir(d, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile())
        h.update(path.relative(dir, p))
          .update('\0')
          .update(await fs.readFile(p));
      else if (e.isSymbolicLink())
        h.update(path.relative(dir, p))
          .update('\0->\0')
          .update(await fs.readlink(p));
    }
  };
  await walk(dir);
  return h.digest();
}

/** The hex digest of an integrity string (`sha512-<base64>`), cut to `length` characters: a cache entry's suffix. */
function digestHex(integrity: string, length: number): string {
  return Buffer.from(integrity.slice(integrity.indexOf('-') + 1), 'base64')
    .toString('hex')
    .slice(0, length);
}

/**
 * Whether `dir` is an install made from the bytes of `integrity` (its marker records them): a run checks this before
 * it mounts the directory, so a cache entry swapped or rewritten under a recorded version is refused, not run. A
 * directory that is not there at all is not judged here (true): the sandbox fails to mount it, a failure of ours that
 * is retried, as when a shared cache is briefly unreachable.
 */
export async function verifyInstalled(dir: string, integrity: string): Promise<boolean> {
  if (!existsSync(dir)) return true;
  const marker = await fs.readFile(path.join(dir, MARKER), 'utf8').catch(() => '');
  try {
    return (JSON.parse(marker) as { integrity?: unknown }).integrity === integrity;
  } catch {
    return false;
  }
}

/** Unpacks an npm tarball into `dir` safely, or throws a user error naming the entries it refused or the limit it is over. */
export async function unpackTarball(file: string, dir: string, npm: NpmOptions = {}, shownAs = 'the package'): Promise<void> {
  let problems: ErrorDetail[];
  try {
    problems = await extractTarball(file, dir, treeLimits(npm));
  } catch (err) {
    if (!(err instanceof PackageLimitError)) throw err;
    const message = `${shownAs}: ${err.message}`;
    throw new InstallError(message, true, [{ path: 'source', message }]);
  }
  refuseIf(problems, 'the package archive has entries that cannot be installed');
}

export async function installFromPath(cacheDir: string, dir: string, npm: NpmOptions = {}): Promise<InstalledPackage> {
  // The folder named by the admin may itself be a link; what is inside it is judged below.
  const src = await fs.realpath(dir).catch(() => null);
  if (!src || !(await fs.stat(src)).isDirectory()) throw new InstallError(`directory ${dir} does not exist`, true);
  await fs.mkdir(cacheDir, { recursive: true });
  // A folder that holds the package cache (DATA_DIR, say) would be copied into itself; one inside it is a package
  // we installed, not a source.
  const cache = await fs.realpath(cacheDir);
  const within = (inner: string, outer: string) => inner === outer || !path.relative(outer, inner).startsWith('..');
  if (within(cache, src) || within(src, cache)) {
    throw new InstallError(`directory ${dir} holds the package cache or is inside it: name the package's own folder`, true, [
      { path: 'source', message: 'is, holds or is inside the package cache' },
    ]);
  }
  const staging = await fs.mkdtemp(path.join(cacheDir, '.staging-'));
  try {
    // Judged on our own copy, so the folder cannot change between the check and the install.
    refuseIf(await copyFolder(src, staging), 'the package folder has entries that cannot be installed');
    refuseIf(await secureTree(staging), 'the package folder has entries that cannot be installed');
    const pkg = await readPackageJson(staging, dir);
    refuseIf(packageJsonProblems(pkg), 'invalid package.json');
    const tree = await hashFolder(staging);
    const integrity = `sha256-${tree.toString('base64')}`;
    const target = cachePath(cacheDir, String(pkg.name), String(pkg.version), `+${tree.toString('hex').slice(0, 12)}`);
    if (existsSync(path.join(target, MARKER))) {
      // An entry installed before markers recorded integrity is named by the same tree hash: it learns its integrity.
      if (!(await verifyInstalled(target, integrity))) await fs.writeFile(path.join(target, MARKER), JSON.stringify({ integrity }), { mode: 0o644 });
      return { dir: target, packageJson: pkg, integrity };
    }
    await installDependencies(cacheDir, staging, pkg, npm);
    await checkInstalled(staging, `${String(pkg.name)}@${String(pkg.version)}`, npm);
    refuseIf(await secureTree(staging), 'the installed dependencies have entries that cannot be installed');
    await publish(staging, target, integrity);
    return { dir: target, packageJson: pkg, integrity };
  } finally {
    await fs.rm(staging, { recursive: true, force: true });
  }
}

/** npm's codes for a fetch that may work when tried again. */
const TRANSIENT = /\b(?:ECONNRESET|ETIMEDOUT|ECONNREFUSED|EAI_AGAIN|ESOCKETTIMEDOUT|EPIPE|E5\d\d)\b/;

/**
 * `npm pack` of one spec, its JSON on stdout. npm's own retries are off: it retries a tarball that fails its
 * integrity check too, for over two minutes, so a registry entry whose bytes are not its dist.integrity would hold the
 * import that long before its 400. A transient network failure is tried again here, twice.
 */
async function npmPack(spec: string, cwd: string, npm: NpmOptions): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    try {
      const args = ['pack', '--json', '--ignore-scripts', '--loglevel=error', '--fetch-retries=0', '--', spec];
      return (await run('npm', args, { cwd, timeout: 120_000, env: npmEnv(npm) })).stdout;
    } catch (err) {
      if (attempt >= 3 || !TRANSIENT.test(String((err as { stderr?: string }).stderr ?? ''))) throw err;
      await new Promise((resolve) => setTimeout(resolve, 1000 * attempt));
    }
  }
}

/** The tarball's `sha512-<base64>` digest, the form of the registry's dist.integrity. */
async function tarballIntegrity(file: string): Promise<string> {
  const h = crypto.createHash('sha512');
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return `sha512-${h.digest('base64')}`;
}

/** npm refused a tarball whose bytes are not the ones the registry's dist.integrity names: a 400 naming both. */
function refuseIntegrityMismatch(err: unknown, spec: string): void {
  const said = String((err as { stderr?: string }).stderr ?? '');
  if (!/EINTEGRITY/.test(said)) return;
  const [, wanted, got] = said.match(/wanted (\S+) but got (\S+?)\.?(?:\s|$)/) ?? [];
  const message = wanted
    ? `${spec}: the tarball's bytes (${got}) are not the ones the registry's dist.integrity names (${wanted})`
    : `${spec}: the tarball's bytes are not the ones the registry's dist.integrity names`;
  throw new InstallError(message, true, [{ path: 'source', message }]);
}

/** The tarball must be the package it was fetched as: its package.json's name and version, the requested ones. */
function refuseOtherIdentity(pkg: Record<string, unknown>, name: string, version: string): void {
  if (pkg.name === name && pkg.version === version) return;
  const message = `the tarball of ${name}@${version} says it is ${String(pkg.name)}@${String(pkg.version)} in its package.json; a package must be published under its own name and version`;
  throw new InstallError(message, true, [{ path: 'package.json.name', message }]);
}

export async function installFromNpm(cacheDir: string, name: string, range: string, npm: NpmOptions = {}): Promise<InstalledPackage> {
  await fs.mkdir(cacheDir, { recursive: true });
  const staging = await fs.mkdtemp(path.join(cacheDir, '.staging-'));
  try {
    let packed: { filename: string; version: string; size?: number; unpackedSize?: number }[];
    try {
      packed = JSON.parse(await npmPack(`${name}@${range}`, staging, npm));
    } catch (err) {
      refuseIntegrityMismatch(err, `${name}@${range}`);
      refuseHostileArchive(err, `${name}@${range}`);
      const msg = firstLine(err);
      throw new InstallError(`cannot fetch ${name}@${range} from npm: ${msg}`, /E404|ETARGET|No match|not found/i.test(msg));
    }
    const { filename, version } = packed[0];
    checkSizes(name, packed[0], npm);
    // npm checked the tarball against the registry's dist.integrity (EINTEGRITY above); the install is named and
    // marked by the same digest of the bytes it was made from, taken here from the file itself.
    const tarball = path.join(staging, path.basename(filename));
    const integrity = await tarballIntegrity(tarball);
    const target = cachePath(cacheDir, name, version, `+${digestHex(integrity, 16)}`);
    if (existsSync(path.join(target, MARKER))) return { dir: target, packageJson: await readPackageJson(target), integrity };
    const pkgDir = path.join(staging, 'package');
    await fs.mkdir(pkgDir);
    await unpackTarball(tarball, pkgDir, npm, `${name}@${version}`);
    const pkg = await readPackageJson(pkgDir, `${name}@${version}`);
    refuseIf(packageJsonProblems(pkg), 'invalid package.json');
    refuseOtherIdentity(pkg, name, version);
    await installDependencies(cacheDir, pkgDir, pkg, npm);
    await checkInstalled(pkgDir, `${name}@${version}`, npm);
    refuseIf(await secureTree(pkgDir), 'the installed dependencies have entries that cannot be installed');
    const finalStaging = `${staging}-pkg`;
    await fs.rename(pkgDir, finalStaging);
    await publish(finalStaging, target, integrity);
    return { dir: target, packageJson: pkg, integrity };
  } finally {
    await fs.rm(staging, { recursive: true, force: true });
  }
}

export function installPackage(cacheDir: string, source: InstallSource, npm: NpmOptions = {}): Promise<InstalledPackage> {
  return source.kind === 'path' ? installFromPath(cacheDir, source.dir, npm) : installFromNpm(cacheDir, source.name, source.range, npm);
}
