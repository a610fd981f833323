/**
 * `npm run bench:faults`: the job engine's promises under faults. N executions of mixed durations (some longer than
 * the reaper's liveness window) across two worker processes, with a kill -9 of a worker about every 10 s (a fresh one
 * replaces it) and one Postgres restart. Prints one JSON line:
 * - lost: accepted executions not terminal within the bound (goal 0);
 * - duplicatedCompletions: completion effects on our records beyond one per execution (tool execution counts) (goal 0);
 * - interrupted: executions running on a worker at the moment it was killed; reRuns: attempts beyond the first
 *   (goal: equal).
 * Env: FAULTS_N (default 500), FAULTS_KILL_EVERY_MS (10000).
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bootedConfig, loadConfig } from '../core/infra/config.js';
import { createLogger } from '../core/infra/logger.js';
import { migrateAll } from '../core/infra/bootstrap.js';
import { startEmbeddedPostgres, type EmbeddedServer } from '../core/infra/embedded-postgres.js';
import { startApi } from '../api/server.js';
import { serviceEnv, spawnProcess, stopProcess, unmountBelow, until, type Child } from '../tests/helpers/processes.js';
import { post } from './service.js';

const N = Number(process.env.FAULTS_N ?? 500);
const KILL_EVERY_MS = Number(process.env.FAULTS_KILL_EVERY_MS ?? 10_000);
const LONG_MS = 25_000; // longer than the reaper's 20 s window
const DRAIN_BOUND_MS = 240_000;
const FIXTURE = path.resolve('tests/fixtures/security/nul-tools');
const SLOW = '@fixtures/nul-tools/slow';

/** Mixed durations: mostly short calls, one in 25 a long one. */
const durationOf = (i: number) => (i % 25 === 7 ? LONG_MS : 50 + ((i * 37) % 450));

async function main() {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolshed-faults-'));
  await fs.chmod(dir, 0o755);
  const pgDir = path.join(dir, 'pg');
  let pg: EmbeddedServer = await startEmbeddedPostgres({ dataDir: pgDir }); // durable, as `npm start` runs it
  const url = pg.url();
  await migrateAll(url);
  const config = bootedConfig(
    loadConfig({
      DATA_DIR: dir,
      SECRETS_KEY: crypto.randomBytes(24).toString('hex'),
      ADMIN_TOKEN: crypto.randomBytes(24).toString('hex'),
      LOG_LEVEL: 'warn',
      EXECUTION_TIMEOUT_MS: '60000',
      MAX_ACTIVE_EXECUTIONS: '100000',
      RATE_LIMIT_FREE_MINUTE: '1000000',
      RATE_LIMIT_FREE_DAY: '100000000',
    }),
  );
  const api = await startApi(config, url, createLogger('warn'), 0);
  const env = serviceEnv(config, url, { EXECUTION_TIMEOUT_MS: '60000', WORKER_CONCURRENCY: '4', SANDBOX_POOL_SIZE: '2', LOG_LEVEL: 'warn' });
  const workers: Child[] = [spawnProcess('worker/main.ts', env), spawnProcess('worker/main.ts', env)];
  const db = api.deps.db;
  const started = Date.now();
  try {
    await post(api.url, '/api/admin/packages', { source: `path:${FIXTURE}` }, config.ADMIN_TOKEN);

    const accepted: string[] = [];
    let refused = 0;
    let interrupted = 0;
    let kills = 0;
    let pgRestarts = 0;
    let submitting = true;

    // Faults: a kill -9 about every KILL_EVERY_MS (the oldest worker, replaced at once), one Postgres restart midway.
    const faults = (async () => {
      await new Promise((r) => setTimeout(r, 0));
      let next = Date.now() + KILL_EVERY_MS;
      while (submitting) {
        await new Promise((r) => setTimeout(r, 250));
        if (pgRestarts === 0 && accepted.length >= N / 2) {
          pgRestarts++;
          await pg.stop();
          await new Promise((r) => setTimeout(r, 2000));
          pg = await startEmbeddedPostgres({ dataDir: pgDir, port: pg.port }).catch((err) => {
            console.error('Postgres did not start again:', err);
            process.exit(1);
          });
        }
        if (Date.now() < next) continue;
        next = Date.now() + KILL_EVERY_MS;
        const victim = workers.shift()!;
        await stopProcess(victim, 'SIGKILL');
        kills++;
        // Exactly what the dead process was running when it died (it can no longer change anything).
        const { rows } = await db
          .raw(`select count(*)::int as n from executions e join workers w on w.id = e.worker_id where e.status = 'running' and w.pid = ?`, [
            victim.process.pid ?? 0,
          ])
          .catch(() => ({ rows: [{ n: 0 }] }));
        interrupted += rows[0].n;
        workers.push(spawnProcess('worker/main.ts', env));
      }
    })();

    // Submit N executions at a steady pace (the queue stays busy while faults happen).
    for (let i = 0; i < N; i++) {
      const res = await fetch(`${api.url}/api/tools/execute/${SLOW}?wait=false`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ params: { ms: durationOf(i) } }),
      }).catch(() => undefined);
      if (res?.status === 202) accepted.push(((await res.json()) as any).data.executionId);
      else {
        refused++;
        i--; // a refusal (the database was restarting) is retried: N executions are accepted
        await new Promise((r) => setTimeout(r, 500));
      }
      await new Promise((r) => setTimeout(r, 150));
    }
    submitting = false;
    await faults;
    const submittedAt = Date.now();

    const terminal = async () =>
      Number((await db('executions').whereIn('id', accepted).whereIn('status', ['succeeded', 'failed', 'timed_out']).count('* as n'))[0].n);
    await until(async () => (await terminal().catch(() => 0)) === accepted.length, DRAIN_BOUND_MS, 'every execution to end').catch(() => undefined);
    const drainS = (Date.now() - submittedAt) / 1000;

    const rows: { status: string; attempts: number; error: { code: string } | null }[] = await db('executions')
      .whereIn('id', accepted)
      .select('status', 'attempts', 'error');
    const byStatus = (s: string) => rows.filter((r) => r.status === s).length;
    const verdictsOfOurs = rows.filter((r) => ['WORKER_LOST', 'WORKER_SHUTDOWN'].includes(r.error?.code ?? '')).length;
    const ranToCompletion = rows.filter((r) => ['succeeded', 'failed', 'timed_out'].includes(r.status)).length - verdictsOfOurs;
    const tool = await db('tools').where({ name: 'slow' }).first();
    const events = Number(
      (await db('tool_events').where({ tool_id: tool.id }).whereIn('kind', ['execution_succeeded', 'execution_failed']).count('* as n'))[0].n,
    );
    const reRuns = rows.reduce((n, r) => n + Math.max(0, r.attempts - 1), 0);
    console.log(
      JSON.stringify({
        bench: 'faults',
        executions: accepted.length,
        longExecutions: accepted.filter((_, i) => durationOf(i) === LONG_MS).length,
        workers: 2,
        kills,
        pgRestarts,
        refusedDuringOutage: refused,
        lost: rows.length - (byStatus('succeeded') + byStatus('failed') + byStatus('timed_out')) + (accepted.length - rows.length),
        duplicatedCompletions: Math.max(0, tool.execution_count - ranToCompletion) + Math.max(0, events - ranToCompletion),
        interrupted,
        reRuns,
        succeeded: byStatus('succeeded'),
        failed: byStatus('failed'),
        timedOut: byStatus('timed_out'),
        failedByReaper: verdictsOfOurs,
        drainSeconds: Math.round(drainS),
        totalSeconds: Math.round((Date.now() - started) / 1000),
      }),
    );
  } finally {
    await Promise.all(workers.map((w) => stopProcess(w, 'SIGKILL')));
    await api.close();
    await pg.stop();
    unmountBelow(dir);
    await fs.rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
