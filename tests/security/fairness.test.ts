import test from 'ava';
import path from 'node:path';
import { FIXTURES_DIR, startService, type Service } from '../helpers/service.js';

// One caller filling the queue with slow calls must not make everyone else wait behind its whole backlog: a
// caller's first call goes ahead of another caller's queued ones (the job's priority is the caller's active count).
let svc: Service;
const SLOW = '@fixtures/nul-tools/slow';

test.before(async () => {
  svc = await startService({ env: { WORKER_CONCURRENCY: '1', MAX_ACTIVE_EXECUTIONS: '10' } });
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
  for (let i = 0; i < 6; i++) backlog.push(await startSlow(mallory.key, 1500));
  const mine = await startSlow(ada.key, 1);

  // Ada's call is answered long before Mallory's six calls of 1.5 s (one worker slot) are through.
  const res = await svc.request('GET', `/api/executions/${mine}`, { key: ada.key });
  let final = res.body.data;
  const deadline = Date.now() + 60_000;
  while (!['succeeded', 'failed', 'timed_out'].includes(final.status) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    final = (await svc.request('GET', `/api/executions/${mine}`, { key: ada.key })).body.data;
  }
  t.is(final.status, 'succeeded');
  const rows = await svc.api.deps
    .db('executions')
    .whereIn('id', [...backlog, mine])
    .select('id', 'status', 'started_at');
  const startedBefore = rows.filter((r) => r.id !== mine && r.started_at && r.started_at < new Date(final.startedAt)).length;
  t.true(startedBefore <= 1, `${startedBefore} of the other caller's queued calls started first (at most the one already taken)`);
  t.true(
    rows.filter((r) => r.id !== mine && r.status === 'queued').length >= 3,
    "most of the other caller's backlog is still waiting when the call is answered",
  );

  // Nothing is lost: the backlog runs afterwards, every call once.
  const idle = Date.now() + 60_000;
  while (Date.now() < idle) {
    const n = await svc.api.deps.db('executions').whereIn('status', ['queued', 'running']).count('* as n');
    if (Number(n[0].n) === 0) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const done = await svc.api.deps.db('executions').whereIn('id', backlog).select('status', 'attempts');
  t.deepEqual(
    done.map((r) => [r.status, r.attempts]),
    backlog.map(() => ['succeeded', 1]),
  );
});
