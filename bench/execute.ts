/**
 * `npm run bench:execute`: end-to-end execution figures, all in one run, over HTTP against the real service
 * (embedded Postgres, API and Graphile Worker in this process as `npm start` runs them, gVisor sandboxes):
 * latency of a trivial tool with requests spaced below the pool's refill rate and with 8 concurrent clients,
 * executions/s at saturation (one-shot, warm pool), the same with the pool off (cold sandboxes), reuse mode (with
 * tracing off and on: tracingCost; BENCH_ONLY=tracing runs only that), and this machine's bare `runsc` create-and-destroy
 * rate. Prints one JSON line.
 */
import os from 'node:os';
import path from 'node:path';
import { createDb } from '../core/infra/db.js';
import { createUserWithKey } from '../core/auth/create-account.js';
import { prepareRootfs } from '../sandbox/rootfs.js';
import { bareRate, removeCgroupParent } from './bare-runsc.js';
import { measureMcp } from './mcp.js';
import { post, startBenchService, TEXT_TOOLS_DIR } from './service.js';
import { startTracing } from '../core/infra/tracing.js';
import { startOtlpReceiver } from '../tests/helpers/otlp-receiver.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const TRACING_ROUNDS = Number(process.env.BENCH_TRACING_ROUNDS ?? 6);
const ONLY = process.env.BENCH_ONLY;
const TOOL = '/api/tools/execute/@toolshed-examples/text-tools/slugify';
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] * 10) / 10 : null;
};
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Load {
  latencies: number[];
  failed: number;
  perSecond: number;
}

/** `clients` loops, each sending one execution after the other for `seconds`. */
async function closedLoop(base: string, clients: number, seconds: number, key?: string, spacingMs = 0): Promise<Load> {
  const latencies: number[] = [];
  let failed = 0;
  const end = Date.now() + seconds * 1000;
  let i = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (Date.now() < end) {
        const t0 = performance.now();
        const res = await fetch(base + TOOL, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
          body: JSON.stringify({ params: { text: `Bench run ${i++}` } }),
        });
        const body = (await res.json()) as { success?: boolean };
        if (res.status !== 200 || body.success !== true) failed++;
        else latencies.push(performance.now() - t0);
        if (spacingMs) await sleep(spacingMs);
      }
    }),
  );
  return { latencies, failed, perSecond: (latencies.length + failed) / ((performance.now() - started) / 1000) };
}

/**
 * What tracing costs (issue 26, goal <= 10 % of throughput): the reuse load (the fastest path, so the most sensitive
 * to per-call overhead) with tracing off and exporting to a local OTLP receiver, in TRACING_ROUNDS short slices each,
 * alternating (off-on, then on-off) so that drift of a shared machine falls on both; the figures are the medians.
 */
async function tracingCost(base: string, key: string): Promise<Record<string, number | string>> {
  const receiver = await startOtlpReceiver();
  const rates: Record<'off' | 'on', number[]> = { off: [], on: [] };
  const slice = Math.max(2, Math.round(SECONDS / 2));
  try {
    for (let r = 0; r < TRACING_ROUNDS; r++) {
      for (const mode of r % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
        const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: mode === 'on' ? receiver.url : undefined, OTEL_EXPORTER_OTLP_HEADERS: {} };
        const tracing = [await startTracing(otel, 'toolshed-api'), await startTracing(otel, 'toolshed-worker')];
        const load = await closedLoop(base, 10, slice, key);
        rates[mode].push(load.perSecond);
        for (const t of tracing) await t.close();
      }
    }
  } finally {
    await receiver.close();
  }
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  };
  const off = median(rates.off);
  const on = median(rates.on);
  return {
    tracing_off_per_s: round(off),
    tracing_on_per_s: round(on),
    tracing_loss_pct: round((100 * (off - on)) / off, 1),
    tracing_spans_received: receiver.spans().length,
    tracing_slices_per_s: `off ${rates.off.map((x) => round(x, 1)).join(' ')}; on ${rates.on.map((x) => round(x, 1)).join(' ')}`,
  };
}

async function main() {
  const svc = await startBenchService();
  const api = svc.api;
  const out: Record<string, unknown> = { bench: 'execute', cpus: os.availableParallelism(), tool: 'text-tools/slugify', seconds: SECONDS };
  try {
    await post(api.url, '/api/admin/packages', { source: `path:${TEXT_TOOLS_DIR}`, official: true }, svc.config.ADMIN_TOKEN);
    const db = createDb(svc.databaseUrl, { max: 1 });
    const { secret: key } = await createUserWithKey(db, { username: 'bench', tier: 'pro' });
    await db.destroy();

    // BENCH_ONLY=tracing: only the reuse load with tracing off and on (issue 26's figure), for a quick rerun.
    if (ONLY === 'tracing') {
      await svc.swapWorker({ SANDBOX_REUSE: 'caller-package', SANDBOX_POOL_SIZE: '2' });
      await closedLoop(api.url, 1, 2, key);
      Object.assign(out, await tracingCost(api.url, key));
      console.log(JSON.stringify(out));
      return;
    }
    // Warm pool, requests spaced below its refill rate (a sandbox boots in ~0.5 s on this machine).
    await closedLoop(api.url, 1, 3, undefined, 600);
    const spaced = await closedLoop(api.url, 1, SECONDS * 2, undefined, 600);
    Object.assign(out, {
      warm_spaced_p50_ms: pct(spaced.latencies, 50),
      warm_spaced_p99_ms: pct(spaced.latencies, 99),
      warm_spaced_n: spaced.latencies.length,
    });

    const eight = await closedLoop(api.url, 8, SECONDS);
    Object.assign(out, { c8_p50_ms: pct(eight.latencies, 50), c8_p99_ms: pct(eight.latencies, 99), c8_per_s: round(eight.perSecond), c8_failed: eight.failed });

    const saturation = await closedLoop(api.url, 16, SECONDS);
    Object.assign(out, {
      saturation_per_s: round(saturation.perSecond),
      saturation_failed: saturation.failed,
      saturation_p50_ms: pct(saturation.latencies, 50),
    });

    // MCP tools/call next to execute (25), spaced: what the MCP path adds.
    const mcp = await measureMcp(api, svc.config.ADMIN_TOKEN!, 40);
    Object.assign(out, { mcp_call_p50_ms: mcp.mcp_call_p50_ms, mcp_execute_p50_ms: mcp.execute_p50_ms, mcp_overhead_p50_ms: mcp.mcp_overhead_p50_ms });

    await svc.swapWorker({ SANDBOX_POOL_SIZE: '0' });
    const coldSpaced = await closedLoop(api.url, 1, SECONDS, undefined, 200);
    const cold = await closedLoop(api.url, 16, SECONDS);
    Object.assign(out, {
      cold_spaced_p50_ms: pct(coldSpaced.latencies, 50),
      cold_saturation_per_s: round(cold.perSecond),
      cold_failed: cold.failed + coldSpaced.failed,
    });

    await svc.swapWorker({ SANDBOX_REUSE: 'caller-package', SANDBOX_POOL_SIZE: '2' });
    await closedLoop(api.url, 1, 2, key);
    const reuse = await closedLoop(api.url, 10, SECONDS, key);
    Object.assign(out, { reuse_c10_per_s: round(reuse.perSecond), reuse_c10_p50_ms: pct(reuse.latencies, 50), reuse_failed: reuse.failed });
    Object.assign(out, await tracingCost(api.url, key));
    await svc.worker.close();

    // The physical limit: bare sandboxes created and destroyed, 2 at a time (one per core).
    const bareDir = path.join(svc.dir, 'bare');
    const rootfs = prepareRootfs(bareDir, process.execPath);
    await bareRate(bareDir, rootfs, 2, 4);
    const bare = await bareRate(bareDir, rootfs, 2, 24);
    const bareNode = await bareRate(bareDir, rootfs, 2, 24, ['/usr/bin/node', '-e', '0']);
    Object.assign(out, {
      bare_runsc_per_s: round(bare),
      bare_runsc_node_per_s: round(bareNode),
      one_shot_vs_bare_runsc: round((out.saturation_per_s as number) / bare),
      one_shot_vs_bare_node_sandbox: round((out.saturation_per_s as number) / bareNode),
    });
  } finally {
    await svc.close();
    removeCgroupParent();
  }
  console.log(JSON.stringify(out));
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
