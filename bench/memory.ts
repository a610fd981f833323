/**
 * `npm run bench:memory` (issue 45 item 5): memory of the service over many calls. Prints one JSON line.
 */
import os from 'node:os';
import { post, startBenchService, TEXT_TOOLS_DIR } from './service.js';

/**
 * RSS and heap of the service's process (API and worker in one process, as bench/service.ts runs
 * them) after garbage collection (run with NODE_OPTIONS=--expose-gc) at 1,000 calls (the warm-up) and at each
 * checkpoint up to BENCH_MEMORY_CALLS (default 100,000), 8 clients at once, the calls in turn: REST (a tool's
 * detail, the tool list), MCP (tools/list on a collection's endpoint, one session per client), SSE (an execution's
 * event stream, read to its end), and every 50th a REST execution waited for (the worker's path). Growth is against
 * the warm-up.
 */
async function memoryMain() {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const total = Number(process.env.BENCH_MEMORY_CALLS ?? 100_000);
  const checkpoints = [1000, 10_000, 50_000, 100_000, 250_000, 500_000, 1_000_000].filter((n) => n <= total);
  const svc = await startBenchService({ SANDBOX: 'process', WORKER_CONCURRENCY: '2' });
  const base = svc.api.url;
  const SLUG = '@toolshed-examples/text-tools/slugify';
  try {
    await post(base, '/api/admin/packages', { source: `path:${TEXT_TOOLS_DIR}`, official: true }, svc.config.ADMIN_TOKEN);
    const user = await post(base, '/api/admin/users', { username: 'bench_memory', tier: 'enterprise' }, svc.config.ADMIN_TOKEN);
    const key: string = user.data.apiKey.key;
    const collection = await post(base, '/api/collections', { name: 'Bench memory', uid: 'bench-memory' }, key);
    await post(base, `/api/collections/${collection.data.uid}/tools`, { toolId: SLUG }, key);
    const submitted = await fetch(`${base}/api/tools/execute/${SLUG}?wait=false`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ params: { text: 'Hello' } }),
    }).then((r) => r.json() as Promise<{ executionId: string }>);
    const headers = { authorization: `Bearer ${key}` };
    let calls = 0;
    const kinds = { rest: 0, mcp: 0, sse: 0, execute: 0 };
    const client = async () => {
      const mcp = new Client({ name: 'bench-memory', version: '1.0.0' });
      await mcp.connect(new StreamableHTTPClientTransport(new URL(`${base}/api/mcp/bench_memory/bench-memory/http`), { requestInit: { headers } }));
      try {
        while (calls < total) {
          const n = calls++;
          if (n % 50 === 49) {
            kinds.execute++;
            await fetch(`${base}/api/tools/execute/${SLUG}`, {
              method: 'POST',
              headers: { ...headers, 'content-type': 'application/json' },
              body: JSON.stringify({ params: { text: `Hello ${n}` } }),
            }).then((r) => r.text());
          } else if (n % 4 === 0) {
            kinds.rest++;
            await fetch(`${base}/api/tools/${SLUG}`, { headers }).then((r) => r.text());
          } else if (n % 4 === 1) {
            kinds.rest++;
            await fetch(`${base}/api/tools?limit=20`, { headers }).then((r) => r.text());
          } else if (n % 4 === 2) {
            kinds.mcp++;
            await mcp.listTools();
          } else {
            kinds.sse++;
            await fetch(`${base}/api/executions/${submitted.executionId}/events`, { headers }).then((r) => r.text());
          }
        }
      } finally {
        await mcp.close();
      }
    };
    const gc = (globalThis as { gc?: () => void }).gc;
    const samples: Record<string, { rss_mb: number; heap_used_mb: number }> = {};
    const sampler = (async () => {
      for (const cp of checkpoints) {
        while (calls < cp) await new Promise((r) => setTimeout(r, 200));
        gc?.();
        gc?.();
        const m = process.memoryUsage();
        samples[cp] = { rss_mb: Math.round(m.rss / 1048576), heap_used_mb: Math.round((m.heapUsed / 1048576) * 10) / 10 };
        console.error(`memory at ${cp} calls: ${JSON.stringify(samples[cp])}`);
      }
    })();
    const t0 = performance.now();
    await Promise.all(Array.from({ length: 8 }, client));
    await sampler;
    const warm = samples[checkpoints[0]!]!;
    const last = samples[checkpoints[checkpoints.length - 1]!]!;
    console.log(
      JSON.stringify({
        bench: 'memory',
        cpus: os.availableParallelism(),
        gc: Boolean(gc),
        calls: total,
        kinds,
        seconds: Math.round((performance.now() - t0) / 1000),
        samples,
        growth_after_warmup: {
          rss: Math.round((last.rss_mb / warm.rss_mb - 1) * 1000) / 10,
          heap_used: Math.round((last.heap_used_mb / warm.heap_used_mb - 1) * 1000) / 10,
        },
      }),
    );
  } finally {
    await svc.close();
  }
}

await memoryMain();
