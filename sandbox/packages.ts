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
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ErrorDetail } from '../core/infra/errors.js';
import { installManifest, packageJsonProblems } from '../core/packages/npm-rules.js';
import { copyFolder, extractTarball, secureTree } from '../core/packages/package-files.js';

const run = promisify(execFile);
const MARKER = '.toolshed-installed';
// allow-*=none: npm itself refuses git, URL, tarball-file and folder dependencies anywhere in the tree, so a registry
// package cannot pull one in transitively (our own check only sees the package's direct dependencies).
const REGISTRY_ONLY = ['--allow-git=none', '--allow-remote=none', '--allow-file=none', '--allow-directory=none'];
const NPM_FLAGS = ['--ignore-scripts', '--no-audit', '--no-fund', '--omit=dev', '--no-package-lock', '--loglevel=error', ...REGISTRY_ONLY];

export type InstallSource = { kind: 'npm'; name: string; range: string } | { kind: 'path'; dir: string };

export interface InstalledPackage {
  dir: string;
  packageJson: Record<string, unknown>;
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
async function publish(staging: string, target: string): Promise<void> {
  await fs.writeFile(path.join(staging, MARKER), new Date().toISOString(), { mode: 0o644 });
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
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** Refuses a packed package over the size limits (npm pack reports both sizes). */
function checkSizes(name: string, packed: { version: string; size?: number; unpackedSize?: number }, npm: NpmOptions): void {
  const over = (what: string, size: number | undefined, limit: number | undefined, setting: string) => {
    if (limit === undefined || size === undefined || size <= limit) return;
    const message = `${name}@${packed.version}: ${what} is ${mib(size)}, over the limit of ${mib(limit)} (${setting})`;
    throw new InstallError(message, true, [{ path: 'source', message }]);
  };
  over('its tarball', packed.size, npm.maxTarballBytes, 'MAX_PACKAGE_TARBALL_MB');
  over('its unpacked size', packed.unpackedSize, npm.maxUnpackedBytes, 'MAX_PACKAGE_UNPACKED_MB');
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

/** Content hash of a tree: file paths and contents, and link paths and targets (links are installed as links). */
async function hashFolder(dir: string): Promise<string> {
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
  return h.digest('hex').slice(0, 12);
}

/** Unpacks an npm tarball into `dir` safely, or throws a user error naming the entries it refused. */
export async function unpackTarball(file: string, dir: string): Promise<void> {
  refuseIf(await extractTarball(file, dir), 'the package archive has entries that cannot be installed');
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
    const target = cachePath(cacheDir, String(pkg.name), String(pkg.version), `+${await hashFolder(staging)}`);
    if (existsSync(path.join(target, MARKER))) return { dir: target, packageJson: pkg };
    await installDependencies(cacheDir, staging, pkg, npm);
    refuseIf(await secureTree(staging), 'the installed dependencies have entries that cannot be installed');
    await publish(staging, target);
    return { dir: target, packageJson: pkg };
  } finally {
    await fs.rm(staging, { recursive: true, force: true });
  }
}

export async function installFromNpm(cacheDir: string, name: string, range: string, npm: NpmOptions = {}): Promise<InstalledPackage> {
  await fs.mkdir(cacheDir, { recursive: true });
  const staging = await fs.mkdtemp(path.join(cacheDir, '.staging-'));
  try {
    let packed: { filename: string; version: string; size?: number; unpackedSize?: number }[];
    try {
      const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--loglevel=error', '--', `${name}@${range}`], {
        cwd: staging,
        timeout: 120_000,
        env: npmEnv(npm),
      });
      packed = JSON.parse(stdout);
    } catch (err) {
      const msg = firstLine(err);
      throw new InstallError(`cannot fetch ${name}@${range} from npm: ${msg}`, /E404|ETARGET|No match|not found/i.test(msg));
    }
    const { filename, version } = packed[0];
    checkSizes(name, packed[0], npm);
    const target = cachePath(cacheDir, name, version);
    if (existsSync(path.join(target, MARKER))) return { dir: target, packageJson: await readPackageJson(target) };
    const pkgDir = path.join(staging, 'package');
    await fs.mkdir(pkgDir);
    await unpackTarball(path.join(staging, path.basename(filename)), pkgDir);
    const pkg = await readPackageJson(pkgDir, `${name}@${version}`);
    refuseIf(packageJsonProblems(pkg), 'invalid package.json');
    await installDependencies(cacheDir, pkgDir, pkg, npm);
    refuseIf(await secureTree(pkgDir), 'the installed dependencies have entries that cannot be installed');
    const finalStaging = `${staging}-pkg`;
    await fs.rename(pkgDir, finalStaging);
    await publish(finalStaging, target);
    return { dir: target, packageJson: pkg };
  } finally {
    await fs.rm(staging, { recursive: true, force: true });
  }
}

export function installPackage(cacheDir: string, source: InstallSource, npm: NpmOptions = {}): Promise<InstalledPackage> {
  return source.kind === 'path' ? installFromPath(cacheDir, source.dir, npm) : installFromNpm(cacheDir, source.name, source.range, npm);
}
