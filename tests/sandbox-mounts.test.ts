/**
 * Issue 21, item 4: a stopped worker leaves no mount behind. Each sandbox runner bind-mounts its views directory
 * (`<DATA_DIR>/sandbox/views/<pid>-<start time>-<random>`) and packages below it. A graceful stop (SIGTERM) removes
 * them all; a kill -9 leaves them to the next start, which removes them even when the dead runner's pid has since
 * gone to another live process (a restart in a container often hands out the same pids; they were kept for ever).
 * Real worker processes, real mounts, read from /proc/self/mountinfo.
 */
import test from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startService, type Service } from './helpers/service.js';
import { killAll, serviceEnv, spawnProcess, stopProcess, unmountBelow, until, type Child } from './helpers/processes.js';

let svc: Service;
let dataDir: string;
test.before(async () => {
  svc = await startService({ worker: false });
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolshed-mounts-'));
  fs.chmodSync(dataDir, 0o755);
});
test.after.always(async () => {
  await killAll();
  if (dataDir) {
    unmountBelow(dataDir);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  await svc?.close();
});

/** Mount points at or below the test's data dir, as this (root) process's mount namespace has them. */
function mountsUnderDataDir(): string[] {
  return fs
    .readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .filter((p) => p.startsWith(`${dataDir}/`));
}

const startWorker = (): Child => spawnProcess('worker/main.ts', serviceEnv(svc.config, svc.databaseUrl, { DATA_DIR: dataDir, LOG_LEVEL: 'info' }));
const viewsOf = (c: Child) => mountsUnderDataDir().filter((m) => path.basename(m).startsWith(`${c.process.pid}-`));
const started = (c: Child) =>
  until(async () => /worker started/.test(c.output()) && viewsOf(c).length > 0, 120_000, 'the worker to start with its views mounted');

test.serial('a graceful stop (SIGTERM) leaves no mount under the data dir', async (t) => {
  const w = startWorker();
  await started(w);
  t.true(viewsOf(w).length > 0, 'the running worker has its views mounted');
  const code = await stopProcess(w, 'SIGTERM');
  // The signal too: once (2026-11-27, a full run) the worker ended by a signal right after its start, not reproduced since.
  t.is(code, 0, `signal ${w.process.signalCode}: ${w.output().slice(-2000)}`);
  t.deepEqual(mountsUnderDataDir(), [], 'no mount is left');
});

test.serial('after kill -9 the next start removes the leftovers, also of a runner whose pid is now a live process', async (t) => {
  const killed = startWorker();
  await started(killed);
  const left = viewsOf(killed);
  await stopProcess(killed, 'SIGKILL');
  t.deepEqual(viewsOf(killed), left, 'a SIGKILL leaves the mounts (nothing can run at a SIGKILL)');
  // A runner that died while its pid is now someone else's: this test process's pid with another start time.
  const reused = path.join(dataDir, 'sandbox', 'views', `${process.pid}-1-abcdef`);
  fs.mkdirSync(reused);
  execFileSync('mount', ['--bind', reused, reused]);
  t.true(mountsUnderDataDir().includes(reused));

  const next = startWorker();
  await started(next);
  t.deepEqual(
    mountsUnderDataDir().filter((m) => !path.basename(m).startsWith(`${next.process.pid}-`)),
    [],
    "only the new worker's own views are mounted",
  );
  t.false(fs.existsSync(reused), 'the dead runner’s directory is removed');
  t.is(await stopProcess(next, 'SIGTERM'), 0, next.output().slice(-3000));
  t.deepEqual(mountsUnderDataDir(), []);
});

test.serial('a process that exits with its runners still open (the stop deadline) leaves no mount, and says nothing of listeners', (t) => {
  // Twelve runners in one process, a package attached to each, then process.exit() as the stop deadline does: the
  // views' one 'exit' listener detaches them all (one listener per runner made Node warn of a leak past ten).
  const pkg = fs.mkdtempSync(path.join(dataDir, 'pkg-'));
  fs.writeFileSync(path.join(pkg, 'index.js'), '');
  const compiled = import.meta.url.endsWith('.js');
  const views = new URL(`../sandbox/package-view.${compiled ? 'js' : 'ts'}`, import.meta.url).href;
  const script = `
    const { createPackageViews } = await import(process.env.VIEWS_MODULE);
    for (let i = 0; i < 12; i++) {
      const runner = createPackageViews(process.env.STATE_DIR);
      runner.create('s' + i);
      await runner.attach('s' + i, process.env.PKG_DIR);
    }
    process.stdout.write('attached');
    process.exit(1);`;
  const run = spawnSync(process.execPath, [...(compiled ? [] : ['--import', 'tsx']), '--input-type=module', '-e', script], {
    env: { PATH: process.env.PATH ?? '', VIEWS_MODULE: views, STATE_DIR: path.join(dataDir, 'exiting'), PKG_DIR: pkg },
    encoding: 'utf8',
    timeout: 120_000,
  });
  t.is(run.stdout.trim(), 'attached', run.stderr);
  t.is(run.status, 1);
  t.deepEqual(mountsUnderDataDir(), [], 'no mount is left');
  t.notRegex(run.stderr, /MaxListenersExceeded/);
});
