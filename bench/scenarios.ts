/**
 * `npm run bench:scenarios` (tsx bench/scenarios.ts): batch evaluation throughput with the offline provider. The bench
 * service (bench/service.ts: embedded Postgres, Graphile Worker at the default concurrency of 4, gVisor sandboxes with
 * a warm pool of 2, the API); a collection of the text-tools, 50 scenarios for it (generated offline with the
 * similarity check skipped, topped up with written ones), then one run-all with `repeat` 3 (BENCH_REPEAT), followed on
 * its SSE stream until `done`. Prints one JSON line: runs per minute (runs / wall time from the run-all request to
 * `done`), p50/p99 run time (started → completed, from the run rows), p50 queued → completed, and the report's lag:
 * from the last run's completion (its completed_at) to the batch's completed_at and to the `done` event's arrival, and
 * the CPU this process (API and worker; not Postgres or the sandboxes) spent per run.
 */
import os from 'node:os';
import { createDb } from '../core/infra/db.js';
import { createUserWithKey } from '../core/auth/create-account.js';
import { importPackage } from '../worker/import/index.js';
import { startBenchService, TEXT_TOOLS_DIR } from './service.js';

const SCENARIOS = Number(process.env.BENCH_SCENARIOS ?? 50);
const REPEAT = Number(process.env.BENCH_REPEAT ?? 3);
const WRITTEN = [
  (text: string) => `Slugify "${text}" with slugify`,
  (text: string) => `Count the words in "${text}" with textStatistics`,
  (text: string) => `Convert "${text}" to camel case with convertCase`,
];
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]) : null;
};

async function main() {
  // The default WORKER_CONCURRENCY (4), not the benches' usual 8: what a default deployment does.
  const svc = await startBenchService({
    WORKER_CONCURRENCY: process.env.WORKER_CONCURRENCY ?? '4',
    // Tool calls share sandboxes per user and package by default; `off` boots one per call, as before issue 25.
    SCENARIO_SANDBOX_REUSE: process.env.SCENARIO_SANDBOX_REUSE ?? 'caller-package',
    RATE_LIMIT_PRO_MINUTE: '1000000',
    RATE_LIMIT_PRO_DAY: '100000000',
  });
  const { api, worker, config } = svc;
  const db = createDb(svc.databaseUrl, { max: 2 });
  try {
    const imported = await importPackage(worker.deps, { source: `path:${TEXT_TOOLS_DIR}`, official: true });
    if (!imported.ok) throw new Error(imported.error.message);
    const { secret: key } = await createUserWithKey(db, { username: 'bench', tier: 'pro' });
    const call = async (method: string, p: string, body?: unknown) => {
      const res = await fetch(api.url + p, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const c = (await call('POST', '/api/collections', { name: 'Bench scenarios' })).body.data;
    const tools: { id: string }[] = await db('tools').select('id');
    for (const t of tools) await call('POST', `/api/collections/${c.id}/tools`, { toolId: t.id });
    // Generated prompts first; the offline generator runs out of distinct ones, so written ones make up the rest.
    let made = 0;
    for (let round = 0; round < 5 && made < SCENARIOS; round++) {
      const res = await call('POST', `/api/collections/${c.id}/scenarios/generate`, { count: Math.min(10, SCENARIOS - made), skipSimilarityCheck: true });
      if (res.status !== 201) throw new Error(`generate: ${res.status} ${JSON.stringify(res.body)}`);
      made += res.body.data.scenarios.length;
    }
    for (let i = 0; made < SCENARIOS; i++, made++) {
      const prompt = WRITTEN[i % WRITTEN.length](`Bench phrase number ${i} for the run`);
      const res = await call('POST', '/api/scenarios', { collectionId: c.id, prompt });
      if (res.status !== 201) throw new Error(`create: ${res.status} ${JSON.stringify(res.body)}`);
    }

    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const batch = await call('POST', `/api/collections/${c.id}/scenarios/run-all`, { repeat: REPEAT });
    if (batch.status !== 202) throw new Error(`run-all: ${batch.status} ${JSON.stringify(batch.body)}`);
    const batchId = batch.body.data.batchId;
    const stream = await fetch(`${api.url}/api/scenario-batches/${batchId}/events`, { signal: AbortSignal.timeout(600_000) });
    // The stream ends after `done`: note when its first byte arrives.
    let text = '';
    let doneAt = 0;
    const decoder = new TextDecoder();
    for await (const chunk of stream.body!) {
      text += decoder.decode(chunk as Uint8Array, { stream: true });
      if (!doneAt && text.includes('event: done')) doneAt = Date.now();
    }
    const wallMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);

    const runs: { started_at: Date; completed_at: Date; created_at: Date; status: string; success: boolean }[] = await db('scenario_runs')
      .where({ batch_id: batchId })
      .select('started_at', 'completed_at', 'created_at', 'status', 'success');
    const b = await db('scenario_batches').where({ id: batchId }).first('completed_at');
    // completed_at is the finishing transaction's start: the last run's commit follows it by the transaction's length.
    const lastRunAt = Math.max(...runs.map((r) => r.completed_at.getTime()));
    const runMs = runs.map((r) => r.completed_at.getTime() - r.started_at.getTime());
    const queuedMs = runs.map((r) => r.completed_at.getTime() - r.created_at.getTime());
    console.log(
      JSON.stringify({
        bench: 'scenarios',
        provider: worker.deps.llm.provider,
        cpus: os.availableParallelism(),
        worker_concurrency: config.WORKER_CONCURRENCY,
        scenario_sandbox_reuse: config.SCENARIO_SANDBOX_REUSE,
        sandbox_pool: config.SANDBOX_POOL_SIZE,
        scenarios: SCENARIOS,
        repeat: REPEAT,
        runs: runs.length,
        runs_per_min: Math.round((runs.length / (wallMs / 60_000)) * 10) / 10,
        p50_run_ms: pct(runMs, 50),
        p99_run_ms: pct(runMs, 99),
        p50_queued_to_done_ms: pct(queuedMs, 50),
        wall_s: Math.round(wallMs / 100) / 10,
        // This process only (API + worker; not Postgres, not the runsc sandboxes): our own cost per run, whatever the load.
        node_cpu_ms_per_run: Math.round((cpu.user + cpu.system) / 1000 / runs.length),
        report_after_last_run_ms: b.completed_at.getTime() - lastRunAt,
        done_event_after_last_run_ms: doneAt - lastRunAt,
        passed: runs.filter((r) => r.success).length,
        failed_verdicts: runs.filter((r) => r.status === 'completed' && !r.success).length,
        failed: runs.filter((r) => r.status === 'failed').length,
      }),
    );
  } finally {
    await db.destroy();
    await svc.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
