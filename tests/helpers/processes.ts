/**
 * Worker and API processes as operators run them (`node worker/main.ts`, `node api/server.ts`), for the tests that
 * kill, restart and outlive them; and the one bounded poll the fault tests share.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Config } from '../../core/config.js';

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
    SANDBOX_POOL_SIZE: '1',
    WORKER_CONCURRENCY: '2',
    LOG_LEVEL: 'info',
    ...extra,
  };
}

export function spawnProcess(entry: 'worker/main.ts' | 'api/server.ts', env: Record<string, string>): Child {
  const p = spawn(process.execPath, ['--import', 'tsx', entry], { env, stdio: ['ignore', 'pipe', 'pipe'] });
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

/** Kills whatever a test file left running (for test.after.always). */
export async function killAll(): Promise<void> {
  await Promise.all(children.map((c) => stopProcess(c, 'SIGKILL')));
}

/** Polls `fn` until it returns a value (not undefined/null/false), every 200 ms, for at most `ms`. */
export async function until<T>(fn: () => Promise<T | undefined | null | false>, ms: number, what: string): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== null && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
