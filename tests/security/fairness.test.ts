import test from 'ava';
import path from 'node:path';
import { FIXTURES_DIR, startService, type Service } from '../helpers/service.js';
import { settle } from '../helpers/wait.js';

// One caller filling the queue with slow calls must not make everyone else wait behind its whole backlog: a
// caller's first call goes ahead of another caller's queued ones (the job's priority is the caller's active count).
let svc: Service;
const SLOW = '@fixtures/nul-tools/slow';

test.before(async () => {
  svc = await startService({ sandbox: 'process', env: { WORKER_CONCURRENCY: '1', MAX_ACTIVE_EXECUTIONS: '10' } });
  const res = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'security', 'nul-tools')}`);
  if (res.status !== 201) throw new Error(res.text);
});
test.after.always(() => svc?.close());

const startSlow = async (key: string, ms: number) => {
  const res = await svc.request('POST', `/api/tools/execute/${SLOW}?wait=false`, { key, body: { params: { ms } } });
  if (res.status !== 202) throw new Error(`${res.status} ${res.text}`);
  return res.body.data.executionId as string;
};

test("a caller's first call runs before another caller's queued backlog", async (t) => {
  const mallory = await svc.createUser({ tier: 'pro' });
  const ada = await svc.createUser({ tier: 'pro' });
  const backlog: string[] = [];
  for (let i = 0; i < 6; i++) backlog.push(await startSlow(mallory.key, 2500));
  const mine = await startSlow(ada.key, 1);

  // Ada's call is answered long before Mallory's six calls of 2.5 s (one worker slot) are through.
  const final = await settle(
    async () => (await svc.request('GET', `/api/executions/${mine}`, { key: ada.key })).body.data,
    (e) => ['succeeded', 'failed', 'timed_out'].includes(e.status),
  );
  t.is(final.status, 'succeeded');
  const rows = await svc.api.deps
    .db('executions')
    .whereIn('id', [...backlog, mine])
    .select('id', 'status', 'created_at', 'started_at');
  const ada0 = rows.find((r) => r.id === mine)!;
  const others = rows.filter((r) => r.id !== mine);
  // Measured from when Ada's call was queued, not from when the backlog was (on a loaded machine some of it may have
  // run by then): once it is queued, at most one of the other caller's calls (a slot taken in that instant) starts
  // before it, and the rest of the backlog waits.
  const jumped = others.filter((r) => r.started_at && r.started_at >= ada0.created_at && r.started_at < ada0.started_at).length;
  t.true(jumped <= 1, `${jumped} of the other caller's queued calls started after this call was queued and before it`);
  const waiting = others.filter((r) => !r.started_at || r.started_at > ada0.started_at).length;
  t.true(waiting >= 2, `the other caller's backlog (${waiting} calls) was still waiting when this call started`);

  // Nothing is lost: the backlog runs afterwards, every call once.
  await settle(
    async () => Number((await svc.api.deps.db('executions').whereIn('status', ['queued', 'running']).count('* as n'))[0].n),
    (n) => n === 0,
  );
  const done = await svc.api.deps.db('executions').whereIn('id', backlog).select('status', 'attempts');
  t.deepEqual(
    done.map((r) => [r.status, r.attempts]),
    backlog.map(() => ['succeeded', 1]),
  );
});
