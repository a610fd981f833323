/**
 * Installs tool packages into the content-addressed cache that sandboxes mount read-only:
 * `<cache>/<name>@<version>` for npm sources, `<cache>/<name>@<version>+<content hash>` for folders.
 * npm runs with install scripts disabled; an installed directory is never modified afterwards.
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const MARKER = '.toolshed-installed';
const NPM_FLAGS = ['--ignore-scripts', '--no-audit', '--no-fund', '--omit=dev', '--no-package-lock', '--loglevel=error'];

export type InstallSource = { kind: 'npm'; name: string; range: string } | { kind: 'path'; dir: string };

export interface InstalledPackage {
  dir: string;
  packageJson: Record<string, unknown>;
}

export class InstallError extends Error {
  constructor(message: string, readonly userError: boolean) {
    super(message);
  }
}

function cacheName(name: string, version: string, suffix = ''): string {
  return `${name.replace('/', '+')}@${version}${suffix}`;
}

async function readPackageJson(dir: string): Promise<Record<string, unknown>> {
  const file = path.join(dir, 'package.json');
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch {
    throw new InstallError(`no package.json in ${dir}`, true);
  }
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new InstallError('package.json is not valid JSON', true);
  }
}

/** Moves a finished staging directory into place; a concurrent install of the same key wins harmlessly. */
async function publish(staging: string, target: string): Promise<void> {
  await fs.writeFile(path.join(staging, MARKER), new Date().toISOString());
  // Sandboxes run the package as an unprivileged user: everything must be world-readable, nothing writable.
  await run('chmod', ['-R', 'a+rX,go-w', staging]);
  await fs.rename(staging, target).catch(async (err: NodeJS.ErrnoException) => {
    await fs.rm(staging, { recursive: true, force: true });
    if (!existsSync(path.join(target, MARKER))) throw err;
  });
}

async function installDependencies(dir: string, pkg: Record<string, unknown>): Promise<void> {
  const deps = pkg.dependencies as Record<string, string> | undefined;
  if (!deps || Object.keys(deps).length === 0 || existsSync(path.join(dir, 'node_modules'))) return;
  try {
    await run('npm', ['install', ...NPM_FLAGS], { cwd: dir, timeout: 300_000, env: npmEnv() });
  } catch (err) {
    throw new InstallError(`installing dependencies failed: ${firstLine(err)}`, false);
  }
}

function npmEnv(): NodeJS.ProcessEnv {
  // npm needs PATH and HOME; nothing else of the service's environment is passed on.
  return { PATH: process.env.PATH, HOME: process.env.HOME, npm_config_update_notifier: 'false' };
}

function firstLine(err: unknown): string {
  const e = err as { stderr?: string; message?: string };
  return (e.stderr || e.message || String(err)).split('\n').find((l) => l.trim() && !l.includes('nodedir')) ?? 'unknown error';
}

async function hashFolder(dir: string): Promise<string> {
  const h = crypto.createHash('sha256');
  const walk = async (d: string) => {
    const entries = (await fs.readdir(d, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile()) h.update(path.relative(dir, p)).update('\0').update(await fs.readFile(p));
    }
  };
  await walk(dir);
  return h.digest('hex').slice(0, 12);
}

export async function installFromPath(cacheDir: string, dir: string): Promise<InstalledPackage> {
  if (!existsSync(dir)) throw new InstallError(`directory ${dir} does not exist`, true);
  const pkg = await readPackageJson(dir);
  const hash = await hashFolder(dir);
  const target = path.join(cacheDir, cacheName(String(pkg.name ?? 'unnamed'), String(pkg.version ?? '0.0.0'), `+${hash}`));
  if (existsSync(path.join(target, MARKER))) return { dir: target, packageJson: pkg };
  await fs.mkdir(cacheDir, { recursive: true });
  const staging = await fs.mkdtemp(path.join(cacheDir, '.staging-'));
  await fs.cp(dir, staging, { recursive: true, dereference: true });
  await installDependencies(staging, pkg);
  await publish(staging, target);
  return { dir: target, packageJson: pkg };
}

export async function installFromNpm(cacheDir: string, name: string, range: string): Promise<InstalledPackage> {
  await fs.mkdir(cacheDir, { recursive: true });
  const staging = await fs.mkdtemp(path.join(cacheDir, '.staging-'));
  try {
    let packed: { filename: string; version: string }[];
    try {
      const { stdout } = await run('npm', ['pack', `${name}@${range}`, '--json', '--ignore-scripts', '--loglevel=error'], {
        cwd: staging,
        timeout: 120_000,
        env: npmEnv(),
      });
      packed = JSON.parse(stdout);
    } catch (err) {
      const msg = firstLine(err);
      throw new InstallError(`cannot fetch ${name}@${range} from npm: ${msg}`, /E404|ETARGET|No match|not found/i.test(msg));
    }
    const { filename, version } = packed[0];
    const target = path.join(cacheDir, cacheName(name, version));
    if (existsSync(path.join(target, MARKER))) return { dir: target, packageJson: await readPackageJson(target) };
    await run('tar', ['-xzf', path.join(staging, filename), '-C', staging]);
    const pkgDir = path.join(staging, 'package');
    const pkg = await readPackageJson(pkgDir);
    await installDependencies(pkgDir, pkg);
    const finalStaging = `${staging}-pkg`;
    await fs.rename(pkgDir, finalStaging);
    await publish(finalStaging, target);
    return { dir: target, packageJson: pkg };
  } finally {
    await fs.rm(staging, { recursive: true, force: true });
  }
}

export function installPackage(cacheDir: string, source: InstallSource): Promise<InstalledPackage> {
  return source.kind === 'path' ? installFromPath(cacheDir, source.dir) : installFromNpm(cacheDir, source.name, source.range);
}
