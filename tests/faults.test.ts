import test from 'ava';
import path from 'node:path';
import { FIXTURES_DIR, startService, type Service } from './helpers/service.js';
import { startFakeLlmVendor, type FakeLlmVendor } from './helpers/fake-llm-vendor.js';
import { killAll, serviceEnv, spawnProcess, stopProcess, until, type Child } from './helpers/processes.js';

// Long lives and deaths of jobs, with real worker processes: a job that outlives every timer of the engine runs
// exactly once; a job whose process is killed runs again on the other live worker and finishes; nothing stays running.
let svc: Service;
let vendor: FakeLlmVendor;
let user: { id: string; key: string };
let scenarioId: string;
const workers: Child[] = [];
const SLOW = '@fixtures/nul-tools/slow';
const JUDGE_PASS = { text: JSON.stringify({ verdict: 'pass', reason: 'the agent answered' }) };
// The workers' lease: 8 s keeps the kill tests quick (a killed worker's job is judged dead 8 s after its last beat).
const LEASE_SECONDS = 8;
// How long the long-life test's job lives: past every timer of the engine (heartbeat every 2 s, reaper every 6 s, an
// 8 s window, a hold lingering 8 s) and the connection pools' 30 s idle time. 60 s, as it has been green for many
// runs: one CI run with 36 s (four lease windows) failed its scenario run under load, cause not found.
const LIFE_MS = 60_000;

const llmEnv = () => ({ LLM_BASE_URL: vendor.baseUrl, LLM_API_KEY: 'k-faults-test', LLM_MODEL: 'fake-chat-1', LLM_EMBEDDING_MODEL: 'fake-embed-1' });
const startWorker = () => {
  const w = spawnProcess(
    'worker/main.ts',
    serviceEnv(svc.config, svc.databaseUrl, { EXECUTION_TIMEOUT_MS: '90000', WORKER_LEASE_SECONDS: String(LEASE_SECONDS), ...llmEnv() }),
  );
  workers.push(w);
  return w;
};
const db = () => svc.api.deps.db;
const liveWorkers = () => workers.filter((w) => w.process.exitCode === null && w.process.signalCode === null);

/** The worker process whose heartbeat leases the job carrying this payload field (what a kill must hit). */
async function holderOf(field: string, value: string): Promise<Child> {
  const pid = await until(
    async () => {
      const { rows } = await db().raw(`select w.pid from workers w join graphile_worker._private_jobs j on j.id = any(w.job_ids) where j.payload->>? = ?`, [
        field,
        value,
      ]);
      return rows[0]?.pid as number | undefined;
    },
    30_000,
    `a worker to lease the job of ${field}=${value}`,
  );
  const w = liveWorkers().find((c) => c.process.pid === pid);
  if (!w) throw new Error(`no child process with pid ${pid}`);
  return w;
}

const stillRunning = async () => {
  const n = async (table: string) => Number((await db()(table).where({ status: 'running' }).count('* as n'))[0].n);
  return { executions: await n('executions'), scenario_runs: await n('scenario_runs'), package_imports: await n('package_imports') };
};

test.before(async () => {
  vendor = await startFakeLlmVendor();
  svc = await startService({ worker: false, env: { EXECUTION_TIMEOUT_MS: '90000', ...llmEnv() } });
  startWorker();
  startWorker();
  const imp = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'security', 'nul-tools')}`);
  if (imp.status !== 201) throw new Error(imp.text);
  user = await svc.createUser({ tier: 'pro' });
  const c = await svc.request('POST', '/api/collections', { key: user.key, body: { name: 'Faults', uid: 'faults' } });
  await svc.request('POST', '/api/collections/faults/tools', { key: user.key, body: { toolId: SLOW } });
  vendor.embeddings.push({ vectors: [[1, 0, 0]] });
  const s = await svc.request('POST', '/api/scenarios', {
    key: user.key,
    body: { collectionId: c.body.data.id, prompt: 'Wait a while and then say that you waited.' },
  });
  if (s.status !== 201) throw new Error(s.text);
  scenarioId = s.body.data.id;
});
test.after.always(async () => {
  await killAll();
  await vendor?.close();
  await svc?.close();
});

test.serial('an execution and a scenario run that outlive every timer of the engine, with two workers alive, each run exactly once', async (t) => {
  const chatBefore = vendor.chatRequests().length;
  const countBefore = (await db()('tools').where({ name: 'slow' }).first()).execution_count;
  vendor.chat.push({ text: 'I waited, as asked.', delayMs: LIFE_MS }, JUDGE_PASS);
  const ex = await svc.request('POST', `/api/tools/execute/${SLOW}?wait=false`, { key: user.key, body: { params: { ms: LIFE_MS } } });
  t.is(ex.status, 202, ex.text);
  const run = await svc.request('POST', `/api/scenarios/${scenarioId}/run?wait=false`, { key: user.key });
  t.is(run.status, 202, run.text);
  const executionId = ex.body.data.executionId;
  const runId = run.body.data?.runId ?? run.body.runId;

  const execution = await until(
    async () => {
      const e = await db()('executions').where({ id: executionId }).first();
      return ['succeeded', 'failed', 'timed_out'].includes(e.status) ? e : undefined;
    },
    150_000,
    'the long execution to finish',
  );
  const finished = await until(
    async () => {
      const r = await db()('scenario_runs').where({ id: runId }).first();
      return ['completed', 'failed'].includes(r.status) ? r : undefined;
    },
    150_000,
    'the long run to finish',
  );

  // First (ava reports a test's first failed assertion): a worker whose heartbeat a loaded machine held up past the
  // lease would have its live job taken for dead and run again, which every check below would then only echo.
  for (const w of workers) t.false(w.output().includes('freed a job'), 'no live job was taken for dead');
  t.is(execution.status, 'succeeded');
  t.deepEqual(execution.result, { waited: LIFE_MS });
  t.is(execution.attempts, 1, 'the tool ran once');
  t.true(execution.completed_at - execution.started_at >= LIFE_MS, 'it really lived past every engine timer');
  t.is((await db()('tools').where({ name: 'slow' }).first()).execution_count, countBefore + 1, 'counted once');
  const asked = vendor.chatRequests().length - chatBefore;
  t.is(finished.status, 'completed', `${JSON.stringify(finished.error)}; attempt ${finished.attempt}, the model asked ${asked} times`);
  t.is(finished.attempt, 1, 'the run was claimed once');
  t.is(vendor.chatRequests().length - chatBefore, 2, 'the model was asked once and the judge once');
  t.is((await db()('scenarios').where({ id: scenarioId }).first()).total_runs, 1, 'statistics moved once');
});

test.serial('kill -9 of the worker running an execution: the other worker runs it again and it finishes', async (t) => {
  const ex = await svc.request('POST', `/api/tools/execute/${SLOW}?wait=false`, { key: user.key, body: { params: { ms: 10_000 } } });
  const id = ex.body.data.executionId;
  const holder = await holderOf('executionId', id);
  await until(async () => (await db()('executions').where({ id }).first()).status === 'running', 30_000, 'the execution to start');
  await stopProcess(holder, 'SIGKILL');
  startWorker(); // keep two alive for the next test; the survivor's reaper is the one already healthy
  const done = await until(
    async () => {
      const e = await db()('executions').where({ id }).first();
      return e.status === 'succeeded' ? e : undefined;
    },
    120_000,
    'the execution to be run again',
  );
  t.is(done.attempts, 2);
  t.deepEqual(done.result, { waited: 10_000 });
  t.deepEqual(await stillRunning(), { executions: 0, scenario_runs: 0, package_imports: 0 });
});

test.serial('kill -9 of the worker running a scenario run: it runs again as a new attempt and completes once', async (t) => {
  vendor.chat.push({ text: 'first attempt, never delivered', delayMs: 120_000 });
  const chatBefore = vendor.chatRequests().length;
  const run = await svc.request('POST', `/api/scenarios/${scenarioId}/run?wait=false`, { key: user.key });
  const runId = run.body.data?.runId ?? run.body.runId;
  const holder = await holderOf('runId', runId);
  await until(async () => vendor.chatRequests().length > chatBefore, 30_000, 'the first attempt to ask the model');
  vendor.chat.push({ text: 'second attempt: I waited.' }, JUDGE_PASS);
  const totalBefore = (await db()('scenarios').where({ id: scenarioId }).first()).total_runs;
  await stopProcess(holder, 'SIGKILL');
  startWorker();
  const done = await until(
    async () => {
      const r = await db()('scenario_runs').where({ id: runId }).first();
      return ['completed', 'failed'].includes(r.status) ? r : undefined;
    },
    120_000,
    'the run to be run again',
  );
  t.is(done.status, 'completed', JSON.stringify(done.error));
  t.is(done.attempt, 2);
  t.is(done.final_text, 'second attempt: I waited.');
  t.is((await db()('scenarios').where({ id: scenarioId }).first()).total_runs, totalBefore + 1, 'counted once');
  t.deepEqual(await stillRunning(), { executions: 0, scenario_runs: 0, package_imports: 0 });
});

test.serial('kill -9 of the worker running an import: the import runs again and the package is imported', async (t) => {
  const pending = svc.importPackage(`path:${path.join(FIXTURES_DIR, 'faults', 'slow-import')}`);
  const importId = await until(
    async () => {
      const row = await db()('package_imports').where({ status: 'running' }).first();
      return row?.id as string | undefined;
    },
    30_000,
    'the import to start',
  );
  const holder = await holderOf('importId', importId);
  await stopProcess(holder, 'SIGKILL');
  startWorker();
  const res = await pending;
  t.is(res.status, 201, res.text);
  t.is(res.body.data.package.name, '@fixtures/slow-import');
  t.is((await db()('package_imports').where({ id: importId }).first()).status, 'succeeded');
  t.deepEqual(await stillRunning(), { executions: 0, scenario_runs: 0, package_imports: 0 });
});
