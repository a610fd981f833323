/**
 * A worker stopped (SIGTERM) while a job waits on something slow outside it still stops promptly and cleanly: the
 * job's abort signal ends the wait, the process exits 0 within its stop deadline (core/infra/bootstrap.ts exits 1 when the
 * deadline passes), and the job is left as it should be for the next worker. Here the job is the npm poll (a worker
 * starting runs it at once) and the registry a stand-in that takes every request and never answers. Real worker
 * process, real Postgres, real Graphile Worker.
 */
import test from 'ava';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createDb } from '../core/infra/db.js';
import { startService, type Service } from './helpers/service.js';
import { killAll, serviceEnv, spawnProcess, stopProcess, until } from './helpers/processes.js';

let svc: Service;
let dir: string;
let registry: http.Server;
const asked: string[] = [];

test.before(async () => {
  svc = await startService({ worker: false });
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolshed-stop-'));
  registry = http.createServer((req) => void asked.push(req.url ?? '')); // never answers
  await new Promise<void>((resolve) => registry.listen(0, '127.0.0.1', resolve));
  await fs.writeFile(path.join(dir, 'npmrc'), `registry=http://127.0.0.1:${(registry.address() as AddressInfo).port}/\ncache=${dir}/cache\n`);
});
test.after.always(async () => {
  await killAll();
  registry?.closeAllConnections();
  await new Promise((resolve) => registry?.close(resolve));
  await svc?.close();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

test('SIGTERM while the npm poll waits on a registry that never answers: the worker exits 0, and the next poll is scheduled', async (t) => {
  const db = createDb(svc.databaseUrl, { max: 1 });
  try {
    // A package imported from npm (only its row matters here: the poll asks the registry about it).
    const name = 'toolshed-fixture-polled';
    await db('packages').insert({ name, version: '1.0.0', category: 'other', source: `npm:${name}`, install_path: path.join(dir, 'none') });
    const worker = spawnProcess(
      'worker/main.ts',
      serviceEnv(svc.config, svc.databaseUrl, { NPM_USERCONFIG: path.join(dir, 'npmrc'), NPM_POLL_INTERVAL_MINUTES: '360' }),
    );
    await until(async () => asked.length > 0, 120_000, 'the poll to ask the registry').catch((err) => {
      throw new Error(`${err.message}: ${worker.output().slice(-3000)}`);
    });
    t.is(asked[0], `/${name}`);
    const code = await stopProcess(worker, 'SIGTERM');
    t.is(code, 0, worker.output().slice(-3000));
    const jobs = await db('graphile_worker.jobs').where({ key: 'npm_poll' }).select('run_at', 'locked_by', 'attempts');
    t.is(jobs.length, 1, 'one poll is scheduled');
    t.is(jobs[0].locked_by, null, 'and not held by the stopped worker');
    t.true(new Date(jobs[0].run_at).getTime() > Date.now() + 300 * 60_000, 'an interval from now');
  } finally {
    await db.destroy();
  }
});
