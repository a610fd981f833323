/**
 * Hostile tools against the gVisor runner: each attempt must fail inside the sandbox with the right outcome, and the
 * host must not be affected. Uses the `hostile` fixture package (tests/fixtures/sandbox/hostile). Real runsc.
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createGvisorRunner } from '../sandbox/gvisor-runner.js';
import type { ExecuteOutcome } from '../sandbox/types.js';
import { makeFixtureCache, makeStateDir } from './fixtures/sandbox/make-cache.js';

const cache = makeFixtureCache();
const stateDir = makeStateDir();
const runner = createGvisorRunner({ poolSize: 2, network: 'none', packageCacheDir: cache.dir, stateDir, memoryMb: 256, pidsLimit: 64 });

test.after.always(async () => {
  await runner.close();
  cache.remove();
  fs.rmSync(stateDir, { recursive: true, force: true });
});

const hostile = (exportName: string, params: unknown = {}, more: { env?: Record<string, string>; timeoutMs?: number } = {}) =>
  runner.execute({ pkg: cache.pkg('hostile'), exportName, params, env: more.env ?? {}, timeoutMs: more.timeoutMs ?? 20_000 });

const text = (r: ExecuteOutcome) => JSON.stringify(r);

test('cannot read project files: /work/main/package.json is not there', async (t) => {
  const hostFile = path.resolve('package.json');
  const hostContent = fs.readFileSync(hostFile, 'utf8');
  const r = await hostile('readFile', { path: hostFile });
  t.is(r.kind, 'tool_error');
  t.regex(text(r), /ENOENT/);
  t.false(text(r).includes('"name": "toolshed"'));
  t.false(text(r).includes(hostContent.slice(0, 40)));
});

test('cannot read /etc/shadow (the only /etc is our own: name resolution and the sandbox user)', async (t) => {
  const r = await hostile('readFile', { path: '/etc/shadow' });
  t.is(r.kind, 'tool_error');
  t.regex(text(r), /ENOENT/);
  const firstLine = fs.readFileSync('/etc/shadow', 'utf8').split('\n')[0];
  t.false(text(r).includes(firstLine));
  // The root holds the Node runtime, a POSIX shell, the guest and mount points only (/sys is gVisor's synthetic sysfs).
  const root = await hostile('listDir', { path: '/' });
  t.deepEqual(root.kind === 'ok' ? root.output : root, ['bin', 'dev', 'etc', 'guest', 'lib', 'lib64', 'pkg', 'proc', 'sys', 'tmp', 'usr']);
  t.like(await hostile('listDir', { path: '/bin' }), { kind: 'ok', output: ['sh'] });
  t.like(await hostile('listDir', { path: '/usr/bin' }), { kind: 'ok', output: ['node'] });
  const etc = await hostile('listDir', { path: '/etc' });
  t.deepEqual(etc.kind === 'ok' ? etc.output : etc, ['group', 'hosts', 'nsswitch.conf', 'passwd', 'resolv.conf']);
  t.like(await hostile('readFile', { path: '/etc/resolv.conf' }), { kind: 'ok', output: '' });
});

test('/proc/1/environ holds no host environment', async (t) => {
  const r = await hostile('readFile', { path: '/proc/1/environ' });
  t.false(text(r).includes('PATH='));
  for (const value of Object.values(process.env)) if (value && value.length > 8) t.false(text(r).includes(value));
  // The guest starts with HOME (the sandbox user's home, on its /tmp) and nothing else.
  t.like(r, { kind: 'ok', output: 'HOME=/tmp/home\u0000' });
});

test('runs as nobody with no capabilities', async (t) => {
  t.like(await hostile('whoami'), { kind: 'ok', output: { uid: 65534, gid: 65534, capEff: '0000000000000000' } });
});

test('cannot connect to a port open on the host loopback, nor to the host', async (t) => {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections += 1;
    socket.end('host secret');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const port = (server.address() as net.AddressInfo).port;
  const r = await hostile('connect', { host: '127.0.0.1', port });
  t.is(r.kind, 'tool_error');
  t.regex(text(r), /ECONNREFUSED/);
  const hostIp = Object.values(os.networkInterfaces())
    .flat()
    .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
  if (hostIp) {
    const viaIp = await hostile('connect', { host: hostIp, port: 22 });
    t.is(viaIp.kind, 'tool_error');
    t.regex(text(viaIp), /ENETUNREACH|EHOSTUNREACH|ECONNREFUSED|timed out/);
  }
  t.is(connections, 0);
  t.false(text(r).includes('host secret'));
});

test('process.env shows only the given env (and HOME)', async (t) => {
  t.like(await hostile('dumpEnv', {}, { env: { ONLY_THIS: 'yes' } }), { kind: 'ok', output: { ONLY_THIS: 'yes', HOME: '/tmp/home' } });
  const r = await hostile('dumpEnv', {}, { env: { ONLY_THIS: 'yes' } });
  t.deepEqual(r.kind === 'ok' ? Object.keys(r.output as object).sort() : [], ['HOME', 'ONLY_THIS']);
});

test('an infinite loop ends as timeout and the sandbox is destroyed', async (t) => {
  // A pool-less runner of its own, so that any container left would be the spinning one.
  const own = makeStateDir();
  const coldRunner = createGvisorRunner({ poolSize: 0, network: 'none', packageCacheDir: cache.dir, stateDir: own });
  t.teardown(async () => {
    await coldRunner.close();
    fs.rmSync(own, { recursive: true, force: true });
  });
  const r = await coldRunner.execute({ pkg: cache.pkg('hostile'), exportName: 'spin', params: {}, env: {}, timeoutMs: 1500 });
  t.is(r.kind, 'timeout');
  t.deepEqual(await coldRunner.listContainers(), []);
});

test('allocating 4 GiB of buffers is oom (the cgroup memory limit kills the sandbox)', async (t) => {
  // Touching pages is slow under ptrace on a loaded machine: the limit is what must end it, so the timeout is far.
  const r = await hostile('hog', {}, { timeoutMs: 120_000 });
  t.is(r.kind, 'oom');
});

test('growing the JS heap without bound is oom (V8 heap limit)', async (t) => {
  const r = await hostile('heapHog', {}, { timeoutMs: 60_000 });
  t.is(r.kind, 'oom');
});

test('a fork bomb is contained by the process limit: tool_error with EAGAIN, host unaffected', async (t) => {
  const r = await hostile('forkBomb', {}, { timeoutMs: 60_000 });
  t.is(r.kind, 'tool_error', text(r));
  // RLIMIT_NPROC (pidsLimit 64, counting the threads of each node child) stops it after a handful of children.
  const spawned = Number(/spawned (\d+) children, then: spawn \S+ EAGAIN/.exec(text(r))?.[1] ?? NaN);
  t.true(spawned >= 0 && spawned < 64, text(r));
  execFileSync('true'); // the host can still start processes
  t.like(await hostile('dumpEnv'), { kind: 'ok' });
});

test('a file written to /tmp is not seen by the next execution', async (t) => {
  const w = await runner.execute({ pkg: cache.pkg('good'), exportName: 'tmpWrite', params: { name: 'left-behind' }, env: {}, timeoutMs: 60_000 });
  t.like(w, { kind: 'ok', output: { wrote: '/tmp/left-behind' } });
  const r = await runner.execute({ pkg: cache.pkg('good'), exportName: 'tmpRead', params: { name: 'left-behind' }, env: {}, timeoutMs: 60_000 });
  t.like(r, { kind: 'ok', output: { exists: false } });
});

test('a tool sees no other package, and its own is read-only', async (t) => {
  const r = await runner.execute({
    pkg: cache.pkg('hostile'),
    exportName: 'readFile',
    params: { path: '/pkg/good@1.0.0/index.js' },
    env: {},
    timeoutMs: 60_000,
  });
  t.is(r.kind, 'tool_error');
  t.regex(text(r), /ENOENT/);
  const w = await runner.execute({ pkg: cache.pkg('good'), exportName: 'tmpWrite', params: { name: '../pkg/good@1.0.0/x' }, env: {}, timeoutMs: 60_000 });
  t.is(w.kind, 'tool_error');
  t.regex(text(w), /EROFS|EACCES|read-only/i);
});
