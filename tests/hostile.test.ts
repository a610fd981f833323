import test from 'ava';
import crypto from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { FIXTURES_DIR, startService, type Service } from './helpers/service.js';

// Tools that try to escape or exhaust their gVisor sandbox, called through the public API.
let svc: Service;
test.before(async () => {
  // 10 s: under the 1-core CPU quota on a loaded 2-core machine, filling 256 MiB to the OOM kill can take over 3 s.
  svc = await startService({ env: { EXECUTION_TIMEOUT_MS: '10000', WORKER_CONCURRENCY: '3' } });
  const res = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'packages', 'hostile-tools')}`);
  if (res.status !== 201) throw new Error(res.text);
});
test.after.always(() => svc?.close());

const run = (tool: string, params: unknown, env?: Record<string, string>) =>
  svc.request('POST', `/api/tools/execute/@fixtures/hostile-tools/${tool}`, { body: { params, ...(env ? { env } : {}) } });

test('host files are out of reach: the project, /etc/shadow, /proc/1/environ', async (t) => {
  const project = await run('readFile', { path: path.resolve('package.json') });
  t.false(project.body.success);
  t.is(project.body.error.code, 'TOOL_ERROR');
  t.regex(project.body.error.message, /ENOENT/);
  const shadow = await run('readFile', { path: '/etc/shadow' });
  t.false(shadow.body.success);
  t.false(JSON.stringify(shadow.body).includes('root:'));
  const environ = await run('readFile', { path: '/proc/1/environ' });
  t.false(JSON.stringify(environ.body).includes('DATABASE_URL'));
  t.false(JSON.stringify(environ.body).includes('PATH=/usr'));
});

test("the service's Postgres port and other loopback services are unreachable", async (t) => {
  const server = net.createServer((s) => s.end('hello')).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const port = (server.address() as net.AddressInfo).port;
  try {
    const pgPort = Number(new URL(svc.databaseUrl).port);
    for (const p of [pgPort, port]) {
      const res = await run('connectTcp', { host: '127.0.0.1', port: p });
      t.false(res.body.success, `port ${p}`);
      t.regex(res.body.error.message, /connect failed|timed out/);
    }
  } finally {
    server.close();
  }
});

test('the tool sees only the env it was given', async (t) => {
  const secret = crypto.randomBytes(8).toString('hex');
  const res = await run('listEnv', {}, { ONLY_THIS: secret });
  t.true(res.body.success, res.text);
  // Besides it, only HOME: the sandbox user's home directory, inside the sandbox.
  t.deepEqual(
    Object.keys(res.body.result.env).filter((k) => k !== 'ONLY_THIS'),
    ['HOME'],
  );
  t.is(res.body.result.env.HOME, '/tmp/home');
});

test('an infinite loop is timed out while the service keeps answering', async (t) => {
  let spinDone = false;
  const spinning = run('spin', {}).finally(() => (spinDone = true));
  const meanwhile = await svc.request('GET', '/api/tools');
  t.is(meanwhile.status, 200);
  t.false(spinDone, 'the API answered while the tool was still spinning');
  const res = await spinning;
  t.is(res.status, 504);
  t.is(res.body.error.code, 'EXECUTION_TIMEOUT');
  t.is((await svc.request('GET', `/api/executions/${res.body.executionId}`)).body.data.status, 'timed_out');
});

test('allocating 4 GiB ends as OUT_OF_MEMORY', async (t) => {
  const res = await run('allocate', { mib: 4096 });
  t.is(res.status, 200);
  t.false(res.body.success);
  t.is(res.body.error.code, 'OUT_OF_MEMORY');
  t.is((await svc.request('GET', `/api/executions/${res.body.executionId}`)).body.data.status, 'failed');
});

test('forking 1,000 children is contained by the pids limit', async (t) => {
  const res = await run('forkMany', { count: 1000 });
  t.false(res.body.success);
  if (res.status === 200) {
    const started = Number(/started (\d+) children/.exec(res.body.error.message)?.[1] ?? 1000);
    t.true(started < 1000 || /EAGAIN|EMFILE|ENOMEM/.test(res.body.error.message), res.body.error.message);
  } else {
    t.true([504].includes(res.status), res.text);
  }
  t.is((await svc.request('GET', '/api/tools')).status, 200, 'the service is fine');
});

test('a file left in /tmp is gone for the next execution', async (t) => {
  const name = `marker-${crypto.randomBytes(4).toString('hex')}`;
  const left = await run('leaveFile', { name });
  t.true(left.body.success, left.text);
  const found = await run('findLeftFile', { name });
  t.deepEqual(found.body.result, { found: false });
});
