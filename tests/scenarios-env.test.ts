/**
 * Keys for runs: a scenario run and a batch take `env` as agent chat does (body `{ NAME: v }` / `{ "<package>": { NAME:
 * v } }`) and as the MCP endpoint does (`X-Tool-Env-…` headers). A value reaches only the tools that declare it (the
 * env-scope fixtures return what they got, reversed, past the redaction of exact values), is sealed in the job, and
 * never appears in the database, the log, a response, an SSE event, a run record or a step (echo-tools echoes its key).
 */
import test from 'ava';
import crypto from 'node:crypto';
import path from 'node:path';
import { FIXTURES_DIR, startService, type Service } from './helpers/service.js';
import { readSse } from './helpers/sse.js';
import { dumpDatabase } from './helpers/dump.js';
import { until } from './helpers/processes.js';

type User = { key: string; id: string; username: string };
let svc: Service;
let owner: User;
const A = '@fixtures/env-scope-a';
const B = '@fixtures/env-scope-b';
const ECHO = '@fixtures/echo-tools';

test.before(async () => {
  svc = await startService({ sandbox: 'process' });
  for (const dir of ['env-scope-a', 'env-scope-b', 'echo-tools']) {
    const res = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'packages', dir)}`);
    if (res.status !== 201) throw new Error(res.text);
  }
  owner = await svc.createUser({ tier: 'pro' });
});
test.after.always(() => svc?.close());

const secret = (label: string) => `${label}-${crypto.randomBytes(10).toString('hex')}`;
const reversed = (v: string) => [...v].reverse().join('');

async function scenario(collectionId: string, prompt: string) {
  const res = await svc.request('POST', '/api/scenarios', { key: owner.key, body: { collectionId, prompt } });
  if (res.status !== 201) throw new Error(res.text);
  return res.body.data.id as string;
}
const run = (id: string, body: unknown, headers: Record<string, string> = {}) =>
  svc.request('POST', `/api/scenarios/${id}/run`, { key: owner.key, body, headers });
const quotaUsed = async () => (await svc.api.deps.db('scenario_quota').where({ user_id: owner.id }).first())?.used ?? 0;

test.serial('a run: a value given for package A reaches A, never B; the header form works too', async (t) => {
  const c = await svc.createCollection(owner.key, { name: 'Run env scope' }, [`${A}::revealA`, `${B}::revealB`]);
  const toA = await scenario(c.id, 'Run revealA');
  const toB = await scenario(c.id, 'Run revealB');
  const v = secret('shared');
  const w = secret('only-a');
  const env = { [A]: { SHARED_SECRET: v }, ONLY_A_TOKEN: w };

  const a = await run(toA, { env });
  t.is(a.status, 200, a.text);
  t.like(a.body.data.steps[0], { toolName: 'revealA', output: { shared: reversed(v), onlyA: reversed(w) } }, 'A received both of its values');
  const b = await run(toB, { env });
  t.is(b.status, 200, b.text);
  t.like(b.body.data.steps[0], { toolName: 'revealB', output: { shared: null, onlyA: null } }, 'B received nothing meant for A');

  const h = secret('header');
  const byHeader = await run(toA, undefined, { 'X-Tool-Env-fixtures.env-scope-a--SHARED_SECRET': h });
  t.is(byHeader.status, 200, byHeader.text);
  t.like(byHeader.body.data.steps[0], { output: { shared: reversed(h), onlyA: null } });
  const both = await run(toA, { env: { [A]: { SHARED_SECRET: v } } }, { 'X-Tool-Env-fixtures.env-scope-a--SHARED_SECRET': h, 'X-Tool-Env-ONLY_A_TOKEN': w });
  t.like(both.body.data.steps[0], { output: { shared: reversed(v), onlyA: reversed(w) } }, 'body and headers together; the body wins');

  const none = await run(toA, undefined);
  t.like(none.body.data.steps[0], { toolName: 'revealA', error: { code: 'TOOL_UNAVAILABLE' } }, 'without env, the tool that requires it is refused');
  t.false(none.body.data.success);
});

test.serial('a run: an ambiguous or misplaced env is a 400 in shape B that takes no quota and queues nothing', async (t) => {
  const c = await svc.createCollection(owner.key, { name: 'Run env refused' }, [`${A}::revealA`, `${B}::revealB`]);
  const s = await scenario(c.id, 'Run revealA');
  const before = await quotaUsed();
  const v = secret('ambiguous');
  for (const [body, headers, pattern] of [
    [{ env: { SHARED_SECRET: v } }, {}, /SHARED_SECRET is declared by several packages \(@fixtures\/env-scope-a, @fixtures\/env-scope-b\)/],
    [undefined, { 'X-Tool-Env-SHARED_SECRET': v }, /SHARED_SECRET is declared by several packages/],
    [{ env: { '@fixtures/elsewhere': { SHARED_SECRET: v } } }, {}, /@fixtures\/elsewhere/],
    [{ env: { 'bad name': v } }, {}, /body\.env\.bad name/],
    [{ env: { SHARED_SECRET: 5 } }, {}, /body\.env\.SHARED_SECRET/],
    [{ env: {}, repeatz: 1 }, {}, /repeatz/],
  ] as const) {
    const res = await run(s, body, headers);
    t.is(res.status, 400, res.text);
    t.like(res.body, { success: false, error: 'Bad Request' });
    t.regex(res.body.message, pattern);
    t.false(res.text.includes(v), 'the refusal does not echo the value');
  }
  const batch = await svc.request('POST', `/api/collections/${c.id}/scenarios/run-all`, { key: owner.key, body: { env: { SHARED_SECRET: v } } });
  t.is(batch.status, 400, batch.text);
  t.regex(batch.body.message, /declared by several packages/);
  t.is(await quotaUsed(), before, 'no quota taken');
  t.is(Number((await svc.api.deps.db('scenario_runs').where({ scenario_id: s }).count('* as n').first())!.n), 0, 'no run queued');
});

test.serial('a batch: every run gets the env; a tool echoing its key is redacted; no trace in the database, jobs, log, responses or events', async (t) => {
  const c = await svc.createCollection(owner.key, { name: 'Batch env' }, [`${ECHO}::echoSecret`, `${A}::revealA`]);
  await scenario(c.id, 'Echo the secret with echoSecret, prefix "key"');
  await scenario(c.id, 'Run revealA');
  const key = secret('echo');
  const shared = secret('shared');
  const started = await svc.request('POST', `/api/collections/${c.uid}/scenarios/run-all`, {
    key: owner.key,
    body: { env: { ECHO_SECRET: key } },
    headers: { 'X-Tool-Env-SHARED_SECRET': shared },
  });
  t.is(started.status, 202, started.text);
  const { batchId, runIds } = started.body.data;
  t.is(runIds.length, 2);
  const batchEvents = await readSse(`${svc.url}/api/scenario-batches/${batchId}/events`, { timeoutMs: 120_000 });
  t.is(batchEvents.events.at(-1)?.event, 'done');

  const texts = [started.text, batchEvents.text];
  const records: any[] = [];
  for (const id of runIds) {
    const r = await svc.request('GET', `/api/scenario-runs/${id}`, { key: owner.key });
    t.is(r.body.data.status, 'completed', r.text);
    records.push(r.body.data);
    texts.push(r.text, (await readSse(`${svc.url}/api/scenario-runs/${id}/events`)).text);
    const history = await svc.request('GET', `/api/scenarios/${r.body.data.scenarioId}/runs`, { key: owner.key });
    texts.push(history.text);
  }
  const steps = records.flatMap((r) => r.steps);
  const echo = steps.find((s) => s.toolName === 'echoSecret');
  t.deepEqual(echo.output, { message: 'key:[redacted]' }, 'the echoed key is redacted, so the tool did receive it');
  t.like(
    steps.find((s) => s.toolName === 'revealA'),
    { output: { shared: reversed(shared), onlyA: null } },
  );
  const answer = records.find((r) => r.steps[0].toolName === 'echoSecret').finalText;
  t.regex(answer, /\[redacted\]/, 'the agent saw only the redacted output');
  const execution = await svc.request('GET', `/api/executions/${echo.executionId}`, { key: owner.key });
  t.deepEqual(execution.body.data.result, { message: 'key:[redacted]' });
  texts.push(execution.text, (await svc.request('GET', `/api/scenario-batches/${batchId}`, { key: owner.key })).text);

  for (const text of texts) t.false(text.includes(key) || text.includes(shared), 'no response or event holds a value');
  const dump = await dumpDatabase(svc.databaseUrl);
  t.true(dump.includes('scenario_runs') && dump.includes('_private_jobs'), 'the dump covers the runs and the job queue');
  t.false(dump.includes(key), 'the database holds no trace of the key');
  t.false(dump.includes(shared), 'nor of the other value');
  const jobs = await svc.api.deps.db.raw("select count(*)::int as n from graphile_worker.jobs where task_identifier = 'scenario_run'");
  t.is(jobs.rows[0].n, 0, 'finished run jobs are gone');
  t.false(svc.logs().includes(key) || svc.logs().includes(shared), 'the log holds no trace of the values');
});

test.serial("the run's job carries the env sealed, never in the clear, and is gone once the run is final", async (t) => {
  const c = await svc.createCollection(owner.key, { name: 'Sealed job' }, [`${ECHO}::echoSecret`]);
  const s = await scenario(c.id, 'Echo the secret with echoSecret, prefix "key"');
  const key = secret('sealed');
  const db = svc.api.deps.db;
  // Holding a lock on the scenario row keeps the run from becoming final (its finish takes FOR UPDATE on that row), so
  // its job exists; FOR NO KEY UPDATE still lets the run row be inserted (its foreign key takes KEY SHARE).
  const trx = await db.transaction();
  let runId: string;
  try {
    await trx.raw('select id from scenarios where id = ? for no key update', [s]);
    const queued = await svc.request('POST', `/api/scenarios/${s}/run?wait=false`, { key: owner.key, body: { env: { ECHO_SECRET: key } } });
    t.is(queued.status, 202, queued.text);
    t.false(queued.text.includes(key));
    runId = queued.body.data.runId;
    const jobs = await db.raw("select payload::text as p from graphile_worker._private_jobs where payload->>'runId' = ?", [runId]);
    t.is(jobs.rows.length, 1);
    const payload = JSON.parse(jobs.rows[0].p);
    t.deepEqual(Object.keys(payload).sort(), ['runId', 'sealedEnv', 'trace']);
    t.deepEqual(Object.keys(payload.trace), ['reqId'], 'beside the sealed env, only the request id (tracing is off here)');
    t.false(jobs.rows[0].p.includes(key), 'the payload does not hold the value in the clear');
    t.false(jobs.rows[0].p.includes('ECHO_SECRET'), 'nor the name');
  } finally {
    await trx.commit();
  }
  const done = await readSse(`${svc.url}/api/scenario-runs/${runId}/events`, { timeoutMs: 60_000 });
  t.is(done.events.at(-1)?.event, 'done');
  t.like(done.events.at(-1)?.data.steps[0], { output: { message: 'key:[redacted]' } });
  const left = async () => (await db.raw("select count(*)::int as n from graphile_worker._private_jobs where payload->>'runId' = ?", [runId])).rows[0].n;
  await until(async () => (await left()) === 0, 30_000, "the run's job to be gone");
  t.is(await left(), 0);
});
