/**
 * `npm run bench:scenarios` (tsx bench/scenarios.ts): batch evaluation throughput with the offline provider. One
 * service in-process as `npm start` runs it (embedded Postgres, migrations, Graphile Worker with its default
 * concurrency, gVisor sandboxes with a warm pool, the API on a loopback port); a collection of the text-tools, 50
 * scenarios generated for it (offline generator, similarity check skipped), then one run-all, followed on its SSE
 * stream until `done`. Prints one JSON line: runs per minute (50 / wall time from the run-all request to `done`),
 * p50/p99 run time (started → completed, from the run rows) and p50 queued → completed.
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../core/config.js';
import { createDb } from '../core/db.js';
import { createLogger } from '../core/logger.js';
import { migrateAll } from '../core/bootstrap.js';
import { createUserWithKey } from '../core/accounts.js';
import { startEmbeddedPostgres } from '../core/embedded-postgres.js';
import { startWorkerProcess } from '../worker/main.js';
import { startApi } from '../api/server.js';
import { importPackage } from '../worker/import.js';

const SCENARIOS = Number(process.env.BENCH_SCENARIOS ?? 50);
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
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolshed-bench-scenarios-'));
  await fs.chmod(dir, 0o755);
  const pg = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg') });
  const admin = createDb(pg.url(), { max: 1 });
  await admin.raw('create database bench');
  await admin.destroy();
  const url = pg.url('bench');
  await migrateAll(url);
  const logger = createLogger('warn');
  const config = loadConfig({
    DATA_DIR: dir,
    SECRETS_KEY: crypto.randomBytes(24).toString('hex'),
    ADMIN_TOKEN: crypto.randomBytes(24).toString('hex'),
    RATE_LIMIT_PRO_MINUTE: '1000000',
    RATE_LIMIT_PRO_DAY: '100000000',
    ...(process.env.WORKER_CONCURRENCY ? { WORKER_CONCURRENCY: process.env.WORKER_CONCURRENCY } : {}),
  });
  const worker = await startWorkerProcess(config, url, logger, { cron: false });
  const api = await startApi(config, url, logger, 0);
  const db = createDb(url, { max: 2 });
  try {
    const imported = await importPackage(worker.deps, { source: `path:${path.resolve('examples/tools/text-tools')}`, official: true });
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
    const batch = await call('POST', `/api/collections/${c.id}/scenarios/run-all`);
    if (batch.status !== 202) throw new Error(`run-all: ${batch.status} ${JSON.stringify(batch.body)}`);
    const stream = await fetch(`${api.url}/api/scenario-batches/${batch.body.data.batchId}/events`, { signal: AbortSignal.timeout(600_000) });
    await stream.text(); // ends after `done`
    const wallMs = performance.now() - t0;

    const runs: { started_at: Date; completed_at: Date; created_at: Date; status: string; success: boolean }[] = await db('scenario_runs')
      .where({ batch_id: batch.body.data.batchId })
      .select('started_at', 'completed_at', 'created_at', 'status', 'success');
    const runMs = runs.map((r) => r.completed_at.getTime() - r.started_at.getTime());
    const queuedMs = runs.map((r) => r.completed_at.getTime() - r.created_at.getTime());
    console.log(
      JSON.stringify({
        bench: 'scenarios',
        provider: worker.deps.llm.provider,
        cpus: os.availableParallelism(),
        worker_concurrency: config.WORKER_CONCURRENCY,
        sandbox_pool: config.SANDBOX_POOL_SIZE,
        scenarios: runs.length,
        runs_per_min: Math.round((runs.length / (wallMs / 60_000)) * 10) / 10,
        p50_run_ms: pct(runMs, 50),
        p99_run_ms: pct(runMs, 99),
        p50_queued_to_done_ms: pct(queuedMs, 50),
        wall_s: Math.round(wallMs / 100) / 10,
        passed: runs.filter((r) => r.success).length,
        failed_verdicts: runs.filter((r) => r.status === 'completed' && !r.success).length,
        failed: runs.filter((r) => r.status === 'failed').length,
      }),
    );
  } finally {
    await db.destroy();
    await api.close();
    await worker.close();
    await pg.stop();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
