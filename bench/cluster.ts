/**
 * The service as separate processes on one Postgres, as the Procfile runs it (`web` and `worker`), for the memory
 * and spread benches: embedded Postgres in a temporary directory (durability off, as bench/service.ts), migrations,
 * then any number of API and worker processes (bench/process-child.ts), each forked with `--expose-gc` so that its
 * memory can be read after a forced GC.
 */
import { fork, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { BENCH_RATE_LIMITS, startBenchDatabase } from './service.js';
import type { ChildSample } from './process-child.js';

export interface ServiceProcess {
  role: 'api' | 'worker';
  child: ChildProcess;
  /** The API's base URL (APIs only). */
  url: string;
  sample(): Promise<ChildSample>;
  snapshot(file: string): Promise<string>;
}

export interface Cluster {
  dir: string;
  databaseUrl: string;
  adminToken: string;
  apis: ServiceProcess[];
  workers: ServiceProcess[];
  close(): Promise<void>;
}

const CHILD = path.resolve(new URL('./process-child.ts', import.meta.url).pathname);

export async function startCluster(opts: { apis: number; workers: number; env?: Record<string, string> }): Promise<Cluster> {
  const { dir, databaseUrl, pg } = await startBenchDatabase();
  const adminToken = crypto.randomBytes(24).toString('hex');
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    DATABASE_URL: databaseUrl,
    DATA_DIR: dir,
    SECRETS_KEY: crypto.randomBytes(24).toString('hex'),
    ADMIN_TOKEN: adminToken,
    LOG_LEVEL: 'warn',
    SANDBOX: 'process',
    NPM_POLL_INTERVAL_MINUTES: '0',
    ...BENCH_RATE_LIMITS,
    ...opts.env,
  };
  const started: ServiceProcess[] = [];
  const spawn = (role: 'api' | 'worker') => startChild(role, env).then((p) => (started.push(p), p));
  const cluster: Cluster = {
    dir,
    databaseUrl,
    adminToken,
    workers: await Promise.all(Array.from({ length: opts.workers }, () => spawn('worker'))),
    apis: await Promise.all(Array.from({ length: opts.apis }, () => spawn('api'))),
    async close() {
      await Promise.allSettled(started.map((p) => stopChild(p)));
      await pg.stop();
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
  return cluster;
}

let nextId = 1;

function ask<T>(child: ChildProcess, msg: Record<string, unknown>, answer: string, pick: (m: any) => T): Promise<T> {
  const id = nextId++;
  return new Promise<T>((resolve, reject) => {
    const onMessage = (m: any) => {
      if (m?.type !== answer || m.id !== id) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(pick(m));
    };
    const onExit = (code: number | null) => {
      child.off('message', onMessage);
      reject(new Error(`${answer}: the child exited (${code})`));
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
    child.send({ ...msg, id });
  });
}

async function startChild(role: 'api' | 'worker', env: Record<string, string>): Promise<ServiceProcess> {
  // BENCH_CPU_PROF_DIR=dir: a V8 CPU profile of each service process, written there when it stops.
  const profile = process.env.BENCH_CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`] : [];
  const child = fork(CHILD, [role], { env, execArgv: ['--import', 'tsx', '--expose-gc', ...profile], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${role} process exited (${code}) before it was ready`)));
    child.on('message', (m: any) => m?.type === 'ready' && resolve(m.url ?? ''));
  });
  return {
    role,
    child,
    url,
    sample: () => ask(child, { type: 'sample' }, 'sample', (m) => m.sample as ChildSample),
    snapshot: (file) => ask(child, { type: 'snapshot', file }, 'snapshot', (m) => m.file as string),
  };
}

async function stopChild(p: ServiceProcess): Promise<void> {
  if (p.child.exitCode !== null) return;
  const exited = new Promise((r) => p.child.once('exit', r));
  p.child.send({ type: 'stop', id: 0 });
  const t = setTimeout(() => p.child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(t);
}
