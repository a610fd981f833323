/**
 * Worker and API processes as operators run them (`node worker/main.ts`, `node api/server.ts`), for the tests that
 * kill, restart and outlive them; and the one bounded poll the fault tests share.
 */
import net from 'node:net';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Config } from '../../core/infra/config.js';
import { waitFor } from './wait.js';

export interface Child {
  process: ChildProcess;
  /** What the process printed so far (its log lines). */
  output(): string;
}

const children: Child[] = [];

/** The environment a worker or API process needs to join the service under test. */
export function serviceEnv(config: Readonly<Config>, databaseUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    DATABASE_URL: databaseUrl,
    DATA_DIR: config.DATA_DIR,
    PACKAGE_CACHE_DIR: config.PACKAGE_CACHE_DIR,
    SECRETS_KEY: config.SECRETS_KEY!,
    ADMIN_TOKEN: config.ADMIN_TOKEN!,
    SANDBOX: config.SANDBOX,
    ...(config.SANDBOX_ROOTFS_DIR ? { SANDBOX_ROOTFS_DIR: config.SANDBOX_ROOTFS_DIR } : {}),
    SANDBOX_POOL_SIZE: '1',
    WORKER_CONCURRENCY: '2',
    LOG_LEVEL: 'info',
    // As startService's own processes: no npm poll against the real registry, no warm MCP servers unless asked.
    NPM_POLL_INTERVAL_MINUTES: '0',
    NPM_DOWNLOADS_URL: '',
    SANDBOX_MCP_WARM: '0',
    // Nor a sentence encoder (a 26 MB model loaded in each API process): the encoder's tests ask for it.
    SEARCH_ENCODER: 'none',
    ...extra,
  };
}

/** Runs from the compiled tree (tests/run.ts compiles it): its JavaScript runs without a loader. */
const COMPILED = import.meta.url.endsWith('.js');

export function spawnProcess(entry: 'worker/main.ts' | 'api/server.ts', env: Record<string, string>): Child {
  const args = COMPILED ? [entry.replace(/\.ts$/, '.js')] : ['--import', 'tsx', entry];
  const p = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  p.stdout!.on('data', (d) => (out += d));
  p.stderr!.on('data', (d) => (out += d));
  const child = { process: p, output: () => out };
  children.push(child);
  return child;
}

export function stopProcess(c: Child, signal: NodeJS.Signals): Promise<number | null> {
  return new Promise((resolve) => {
    if (c.process.exitCode !== null || c.process.signalCode !== null) return resolve(c.process.exitCode);
    c.process.once('exit', (code) => resolve(code));
    c.process.kill(signal);
  });
}

/** Stops whatever a test file left running (for test.after.always): SIGTERM, so workers unmount their package
 * views and end their sandboxes, and SIGKILL for any that has not exited 20 s later. */
export async function killAll(): Promise<void> {
  await Promise.all(
    children.map(async (c) => {
      const kill = setTimeout(() => c.process.kill('SIGKILL'), 20_000);
      await stopProcess(c, 'SIGTERM');
      clearTimeout(kill);
    }),
  );
}

/** Detaches every mount left below `dir` (package views of a worker killed with SIGKILL), so that it can be removed. */
export function unmountBelow(dir: string): void {
  const mounts = readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[1]?.replace(/\\040/g, ' '))
    .filter((m): m is string => !!m && m.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
  for (const m of mounts) spawnSync('umount', ['-l', m]);
}

/** Polls `fn` until it returns a value (not undefined/null/false), every 200 ms, for at most `ms` (`waitFor` in wait.ts). */
export function until<T>(fn: () => Promise<T | undefined | null | false>, ms: number, what: string): Promise<T> {
  return waitFor(fn, what, { ms, everyMs: 200 });
}

/** A port free on loopback now (a process the test starts next takes it, e.g. a worker's metrics listener). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
