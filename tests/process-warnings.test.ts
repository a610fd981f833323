/**
 * What an operator reads on the service's stderr under load and at stop (issue 45 item 5, seen in `npm run
 * bench:execute`): many REST calls waiting for their executions at once print no MaxListenersExceededWarning (each
 * waits on the one shutdown signal, and removes its listener when it answers); a worker closed twice (a bench, a
 * second signal) logs no "could not release own jobs at stop: Unable to acquire a connection".
 */
import test from 'ava';
import path from 'node:path';
import { until } from './helpers/processes.js';
import { EXAMPLES_DIR, startService, type Service } from './helpers/service.js';

const SLUGIFY = '/api/tools/execute/@toolshed-examples/text-tools/slugify';

let svc: Service;
test.before(async () => {
  svc = await startService({ sandbox: 'process', env: { WORKER_CONCURRENCY: '2' } });
  const res = await svc.importPackage(`path:${path.join(EXAMPLES_DIR, 'text-tools')}`);
  if (res.status !== 201) throw new Error(res.text);
  // The subject is waiting, not the tool: it is called as a healthy tool even if its import check failed.
  await svc.api.deps.db('tools').where({ name: 'slugify' }).update({ health_status: 'HEALTHY' });
  await until(
    async () => (await svc.request('POST', `${SLUGIFY}?wait=false`, { body: { params: { text: 'x' } } })).status === 202,
    30_000,
    'the tool callable (its NOTIFY reached the tool cache)',
  );
});
test.after.always(() => svc?.close());

test.serial('30 REST calls waiting at once print no MaxListenersExceededWarning, and each answers', async (t) => {
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
  process.on('warning', onWarning);
  try {
    // Two callers, 15 each (a caller may have 20 queued or running at once).
    const keys = [(await svc.createUser({ tier: 'pro' })).key, (await svc.createUser({ tier: 'pro' })).key];
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => svc.request('POST', SLUGIFY, { key: keys[i % 2], body: { params: { text: `Hello World ${i}` } } })),
    );
    await new Promise((r) => setImmediate(r)); // a warning is emitted on the next tick
    t.deepEqual(
      warnings.filter((w) => w.includes('MaxListenersExceeded')),
      [],
    );
    // Each answered with its execution once it ended (whatever its outcome, a sandbox failure included), not with a 202 at the wait's deadline.
    const ended = (a: (typeof answers)[number]) => a.status !== 202 && typeof (a.body?.executionId ?? a.body?.data?.executionId) === 'string';
    t.true(answers.every(ended), JSON.stringify(answers.find((a) => !ended(a))?.body));
  } finally {
    process.off('warning', onWarning);
  }
});

test.serial('a worker closed twice stops once: no "could not release own jobs" in its log', async (t) => {
  const worker = svc.worker!;
  await Promise.all([worker.close(), worker.close()]);
  await worker.close();
  t.notRegex(svc.logs(), /could not release own jobs/);
  t.notRegex(svc.logs(), /Unable to acquire a connection/);
});
