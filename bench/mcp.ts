/**
 * `tsx bench/mcp.ts`: what the MCP endpoint adds to a tool call. One service in-process as the tests run it
 * (embedded Postgres, migrations, real Graphile Worker, gVisor sandboxes with a warm pool of 2, the API on a loopback
 * port), @toolshed-examples/text-tools imported, then `slugify` called 100 times through execute (25) and 100 times
 * through MCP `tools/call` from the SDK's real Client, sequentially, alternating, 150 ms apart (so that the sandbox
 * pool has refilled), after a warm-up. Prints one JSON line.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ApiHandle } from '../api/server.js';
import { post, startBenchService, TEXT_TOOLS_DIR } from './service.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 100);
const WARMUP = 10;
const SPACING_MS = 150;
const TOOL = '@toolshed-examples/text-tools/slugify';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const round = (n: number) => Math.round(n * 100) / 100;

interface Sample {
  ms: number;
  executionId: string;
}

async function timed(fn: () => Promise<string>): Promise<Sample> {
  const t0 = performance.now();
  const executionId = await fn();
  return { ms: performance.now() - t0, executionId };
}

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);

/**
 * Calls slugify `calls` times through execute (25) and through MCP tools/call, alternating, spaced so the pool
 * refills; returns the figures. The caller has imported text-tools; a collection and a user are made here.
 */
export async function measureMcp(api: ApiHandle, adminToken: string, calls = CALLS) {
  const user = await post(api.url, '/api/admin/users', { username: `bench_${Date.now()}`, tier: 'enterprise' }, adminToken);
  const key: string = user.data.apiKey.key;
  const username: string = user.data.user.username;
  const collection = await post(api.url, '/api/collections', { name: 'Bench tools', uid: `bench-tools-${Date.now()}` }, key);
  const uid: string = collection.data.uid;
  await post(api.url, `/api/collections/${uid}/tools`, { toolId: TOOL }, key);
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${api.url}/api/mcp/${username}/${uid}/http`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  try {
    const params = { text: 'Benchmarking the MCP endpoint' };
    const viaExecute = async () => {
      const res = await post(api.url, `/api/tools/execute/${TOOL}`, { params }, key);
      if (!res.success) throw new Error(JSON.stringify(res));
      return res.executionId as string;
    };
    const viaMcp = async () => {
      const res = await client.callTool({ name: 'slugify', arguments: params });
      if (res.isError) throw new Error(JSON.stringify(res));
      return res._meta?.['toolshed/executionId'] as string;
    };
    const execute: Sample[] = [];
    const mcp: Sample[] = [];
    for (let i = 0; i < WARMUP + calls; i++) {
      const e = await timed(viaExecute);
      await sleep(SPACING_MS);
      const m = await timed(viaMcp);
      await sleep(SPACING_MS);
      if (i >= WARMUP) {
        execute.push(e);
        mcp.push(m);
      }
    }
    // The part of each call outside its execution's lifetime (queue + sandbox run, as the database recorded it):
    // what the HTTP path itself costs, without the sandbox's jitter, which dwarfs it on a busy machine.
    const lifetimes = new Map<string, number>(
      (
        await api.deps
          .db('executions')
          .whereIn(
            'id',
            [...execute, ...mcp].map((s) => s.executionId),
          )
          .select('id', api.deps.db.raw('extract(epoch from (completed_at - created_at)) * 1000 as ms'))
      ).map((r: { id: string; ms: string }) => [r.id, Number(r.ms)]),
    );
    const outside = (samples: Sample[]) => sorted(samples.map((s) => s.ms - lifetimes.get(s.executionId)!));
    const [e, m] = [sorted(execute.map((s) => s.ms)), sorted(mcp.map((s) => s.ms))];
    const [eOut, mOut] = [outside(execute), outside(mcp)];
    return {
      execute_p50_ms: round(percentile(e, 50)),
      execute_p99_ms: round(percentile(e, 99)),
      mcp_call_p50_ms: round(percentile(m, 50)),
      mcp_call_p99_ms: round(percentile(m, 99)),
      mcp_overhead_p50_ms: round(percentile(mOut, 50) - percentile(eOut, 50)),
      execute_outside_execution_p50_ms: round(percentile(eOut, 50)),
      mcp_outside_execution_p50_ms: round(percentile(mOut, 50)),
    };
  } finally {
    await client.close().catch(() => undefined);
  }
}

async function main() {
  const svc = await startBenchService();
  try {
    await post(svc.api.url, '/api/admin/packages', { source: `path:${TEXT_TOOLS_DIR}` }, svc.config.ADMIN_TOKEN);
    console.log(JSON.stringify({ bench: 'mcp', ...(await measureMcp(svc.api, svc.config.ADMIN_TOKEN!)) }));
  } finally {
    await svc.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`)
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
