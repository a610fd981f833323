/**
 * `npm run bench:tool-stats`: what the per-tool statistics cost (core/repos/tool-stats.ts). Against embedded Postgres
 * (durability off, as the other benchmarks): finishExecution — which now also adds to the hourly rollup — for 2,000
 * running executions at 8 at once, all of one tool (every finish updates the same rollup rows: the worst contention)
 * and spread over 50 tools; then reading one tool's figures (toolStats + toolDailyCalls, as GET /api/tools/:id/stats
 * does) and 100 tools' 7-day totals (as search does) over a rollup filled densely for 30 days (720 hours × 40 run-time
 * buckets × 5 error codes per tool). Prints one JSON line.
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { migrateAll } from '../core/infra/bootstrap.js';
import { createDb, type Knex } from '../core/infra/db.js';
import { startEmbeddedPostgres } from '../core/infra/embedded-postgres.js';
import { finishExecution } from '../core/repos/executions.js';
import { toolCallTotals, toolDailyCalls, toolStats } from '../core/repos/tool-stats.js';

const FINISHES = Number(process.env.TOOL_STATS_FINISHES ?? 2000);
const CONCURRENCY = 8;
const READS = 200;

async function makeTools(db: Knex, n: number): Promise<string[]> {
  const [pkg] = await db('packages')
    .insert({ name: `bench-${crypto.randomUUID()}`, version: '1.0.0', category: 'automation', source: 'bench', install_path: '/nowhere' })
    .returning('id');
  const rows = await db('tools')
    .insert(Array.from({ length: n }, (_, i) => ({ package_id: pkg.id, name: `t${i}`, export_name: `t${i}` })))
    .returning('id');
  return rows.map((r: { id: string }) => r.id);
}

/** Finishes FINISHES running executions of the given tools, CONCURRENCY at once; answers finishes per second. */
async function finishRate(db: Knex, tools: string[]): Promise<number> {
  const ids = Array.from({ length: FINISHES }, () => crypto.randomUUID());
  await db.batchInsert(
    'executions',
    ids.map((id, i) => ({ id, tool_id: tools[i % tools.length], origin: 'api', status: 'running', attempts: 1 })),
    500,
  );
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < ids.length) {
        const i = next++;
        const failed = i % 5 === 0;
        await finishExecution(db, ids[i]!, {
          status: failed ? 'failed' : 'succeeded',
          executionTimeMs: 20 + (i % 300),
          ...(failed ? { error: { code: 'TOOL_ERROR', message: 'x' } } : { result: { ok: true } }),
        });
      }
    }),
  );
  return Math.round((FINISHES / (performance.now() - started)) * 1000 * 10) / 10;
}

async function fillDense(db: Knex, toolId: string): Promise<void> {
  await db.raw(
    `insert into tool_stats_hourly (tool_id, hour, calls, succeeded)
     select ?, h, 100, 90 from generate_series(date_trunc('hour', now(), 'UTC') - interval '719 hours', date_trunc('hour', now(), 'UTC'), interval '1 hour') h
     on conflict do nothing`,
    [toolId],
  );
  await db.raw(
    `insert into tool_stats_latency (tool_id, hour, bucket_ms, count)
     select ?, h, b * 7, 3 from generate_series(date_trunc('hour', now(), 'UTC') - interval '719 hours', date_trunc('hour', now(), 'UTC'), interval '1 hour') h,
            generate_series(1, 40) b
     on conflict do nothing`,
    [toolId],
  );
  await db.raw(
    `insert into tool_stats_errors (tool_id, hour, code, count)
     select ?, h, 'CODE_' || c, c from generate_series(date_trunc('hour', now(), 'UTC') - interval '719 hours', date_trunc('hour', now(), 'UTC'), interval '1 hour') h,
            generate_series(1, 5) c
     on conflict do nothing`,
    [toolId],
  );
}

async function timed(n: number, fn: () => Promise<unknown>): Promise<{ p50: number; p95: number }> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const at = (p: number) => Math.round(times[Math.ceil(p * times.length) - 1]! * 100) / 100;
  return { p50: at(0.5), p95: at(0.95) };
}

async function main(): Promise<void> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolshed-bench-stats-'));
  const pg = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), durability: 'none' });
  const admin = createDb(pg.url(), { max: 1 });
  await admin.raw('create database bench');
  await admin.destroy();
  await migrateAll(pg.url('bench'));
  const db = createDb(pg.url('bench'), { max: CONCURRENCY + 2 });
  try {
    const [one] = await makeTools(db, 1);
    const oneToolPerSecond = await finishRate(db, [one!]);
    const spreadPerSecond = await finishRate(db, await makeTools(db, 50));
    const dense = await makeTools(db, 100);
    for (const id of dense) await fillDense(db, id);
    const statsMs = await timed(READS, () => Promise.all([toolStats(db, dense[0]!), toolDailyCalls(db, dense[0]!, 30)]));
    const searchTotalsMs = await timed(READS, () => toolCallTotals(db, dense, '7d'));
    console.log(
      JSON.stringify({
        bench: 'tool-stats',
        finishes: FINISHES,
        concurrency: CONCURRENCY,
        finishesPerSecondOneTool: oneToolPerSecond,
        finishesPerSecond50Tools: spreadPerSecond,
        statsReadMs: statsMs,
        searchTotals100ToolsMs: searchTotalsMs,
        denseHoursPerTool: 720,
      }),
    );
  } finally {
    await db.destroy();
    await pg.stop();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

await main();
