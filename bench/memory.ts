/**
 * `npm run bench:memory` (issue 45 item 5): does a long life keep something per call? The service runs as the
 * Procfile runs it, one `web` and one `worker` process on one Postgres (bench/cluster.ts; SANDBOX=process: the guest
 * code as a child process, the sandbox is not the subject), and each kind of call is made on its own, 8 clients at
 * once, in segments up to checkpoints (BENCH_MEMORY_WARMUP calls, default 500, then 1 k, 2 k, 5 k, 10 k, 20 k, 50 k,
 * 100 k, 1 M: the kinds that run through the queue reach tens of thousands in an hour, not 100 k); between segments no
 * call is in flight and both processes report RSS and heap used after a forced GC, and so does the bench's own
 * process (its clients). A kind goes on to its next checkpoint only if its measured rate says it gets there within
 * BENCH_MEMORY_KIND_SECONDS (default 240).
 * Growth is against the sample after the warm-up. Kinds (BENCH_MEMORY_KINDS, comma list, default all):
 *   rest        GET a tool's detail and the tool list, in turn
 *   mcp_list    tools/list on a collection's MCP endpoint (one session per client)
 *   sse_replay  an execution's event stream, of one execution finished before: replays and ends
 *   mcp_call    tools/call (an execution through the queue and the worker)
 *   execute     POST /api/tools/execute waited for (REST)
 *   sse_live    POST …?wait=false, then its event stream read until it ends
 *   scenario    POST /api/scenarios/:id/run with the offline provider (an agent loop calling slugify)
 * BENCH_MEMORY_SNAPSHOTS=dir writes a heap snapshot of each process at each checkpoint (after its sample).
 * Prints one JSON line.
 */
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { post, TEXT_TOOLS_DIR } from './service.js';
import { lazySchemaValidator } from '../core/infra/mcp-schema-validator.js';
import { startCluster, type ServiceProcess } from './cluster.js';
import type { ChildSample } from './process-child.js';

const KINDS = ['rest', 'mcp_list', 'sse_replay', 'mcp_call', 'execute', 'sse_live', 'scenario'] as const;
type Kind = (typeof KINDS)[number];
const WARMUP = Number(process.env.BENCH_MEMORY_WARMUP ?? 500);
const KIND_SECONDS = Number(process.env.BENCH_MEMORY_KIND_SECONDS ?? 240);
const CLIENTS = Number(process.env.BENCH_MEMORY_CLIENTS ?? 8);
const SNAPSHOTS = process.env.BENCH_MEMORY_SNAPSHOTS;
const CHECKPOINTS = [WARMUP, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000, 1_000_000].filter((n, i, a) => i === 0 || n > a[0]!);
const SLUG = '@toolshed-examples/text-tools/slugify';

interface Target {
  base: string;
  headers: Record<string, string>;
  finishedExecution: string;
  scenarioId: string;
  mcpUrl: URL;
}

/** One client's call of a kind; throws on an answer that is not what the kind expects. */
type Call = (n: number) => Promise<void>;

async function expectOk(res: Response, what: string): Promise<string> {
  const text = await res.text();
  if (!res.ok) throw new Error(`${what}: ${res.status} ${text.slice(0, 200)}`);
  return text;
}

async function clientFor(kind: Kind, t: Target): Promise<{ call: Call; close(): Promise<void> }> {
  const { base, headers } = t;
  const json = { ...headers, 'content-type': 'application/json' };
  if (kind === 'mcp_list' || kind === 'mcp_call') {
    // The SDK's default validator compiles each listed tool's output schema into one Ajv it keeps, on every listTools():
    // the bench's own heap grew 2.5 KB a call that way. Toolshed's (nothing kept between calls) is given instead. Its
    // RSS still grows off the heap (199 → 342 MB over 10,000 calls, heap flat): not explained yet.
    const mcp = new Client({ name: 'bench-memory', version: '1.0.0' }, { jsonSchemaValidator: lazySchemaValidator });
    // The transport passes one long-lived AbortSignal to every fetch, and undici takes a request's abort listener off a
    // signal only when the Request is garbage-collected (nodejs/node#47449): at hundreds of calls a second the bench's
    // own process printed a MaxListenersExceededWarning by the thousand. The signal only aborts what is in flight when
    // the client closes, and the bench closes its clients with nothing in flight, so its requests go without one (0
    // warnings in 100,000 calls).
    const noSignal: typeof fetch = (url, init) => fetch(url, { ...init, signal: undefined });
    await mcp.connect(new StreamableHTTPClientTransport(t.mcpUrl, { requestInit: { headers }, fetch: noSignal }));
    const name = (await mcp.listTools()).tools.find((x) => x.name.includes('slugify'))!.name;
    const call: Call =
      kind === 'mcp_list'
        ? async () => void (await mcp.listTools())
        : async (n) => {
            const r = await mcp.callTool({ name, arguments: { text: `Hello ${n}` } });
            if (r.isError) throw new Error(`tools/call: ${JSON.stringify(r.content).slice(0, 200)}`);
          };
    return { call, close: () => mcp.close() };
  }
  const calls: Record<Exclude<Kind, 'mcp_list' | 'mcp_call'>, Call> = {
    rest: async (n) => {
      const p = n % 2 ? `/api/tools/${SLUG}` : '/api/tools?limit=20';
      await expectOk(await fetch(base + p, { headers }), p);
    },
    sse_replay: async () => {
      const text = await expectOk(await fetch(`${base}/api/executions/${t.finishedExecution}/events`, { headers }), 'sse');
      if (!text.includes('event: done')) throw new Error(`sse replay did not end with the execution: ${text.slice(-200)}`);
    },
    execute: async (n) => {
      const body = JSON.stringify({ params: { text: `Hello ${n}` } });
      await expectOk(await fetch(`${base}/api/tools/execute/${SLUG}`, { method: 'POST', headers: json, body }), 'execute');
    },
    sse_live: async (n) => {
      const body = JSON.stringify({ params: { text: `Hello ${n}` } });
      const sub = JSON.parse(await expectOk(await fetch(`${base}/api/tools/execute/${SLUG}?wait=false`, { method: 'POST', headers: json, body }), 'submit'));
      const id = sub.data?.executionId ?? sub.executionId;
      const text = await expectOk(await fetch(`${base}/api/executions/${id}/events`, { headers }), 'sse live');
      if (!text.includes('event: done')) throw new Error(`sse live did not end with the execution: ${text.slice(-200)}`);
    },
    scenario: async () => {
      const text = await expectOk(await fetch(`${base}/api/scenarios/${t.scenarioId}/run`, { method: 'POST', headers: json, body: '{}' }), 'scenario run');
      if (JSON.parse(text).data?.status !== 'completed') throw new Error(`scenario run: ${text.slice(0, 200)}`);
    },
  };
  return { call: calls[kind], close: async () => undefined };
}

/** Calls of one kind numbered from..to-1, CLIENTS at once; resolves once every one has answered. */
async function runSegment(clients: { call: Call }[], from: number, to: number, errors: string[]): Promise<void> {
  let next = from;
  await Promise.all(
    clients.map(async (c) => {
      while (next < to) {
        const n = next++;
        try {
          await c.call(n);
        } catch (err) {
          errors.push(String(err));
          if (errors.length > 20) throw new Error(`too many failed calls: ${errors.slice(0, 3).join(' | ')}`);
        }
      }
    }),
  );
}

/** The bench's own process (its clients), after a forced GC (`npm run bench:memory` runs it with --expose-gc). */
const selfSample = () => {
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return { rss_mb: Math.round(m.rss / 1e5) / 10, heap_used_mb: Math.round(m.heapUsed / 1e5) / 10 };
};

const sampleBoth = async (api: ServiceProcess, worker: ServiceProcess) => {
  const [a, w] = await Promise.all([api.sample(), worker.sample()]);
  return { api: a, worker: w, bench: selfSample() };
};
type Pair = Awaited<ReturnType<typeof sampleBoth>>;
const growth = (now: ChildSample, base: ChildSample) => ({
  rss_pct: Math.round((now.rss_mb / base.rss_mb - 1) * 1000) / 10,
  heap_pct: Math.round((now.heap_used_mb / base.heap_used_mb - 1) * 1000) / 10,
});

async function setUp(base: string, adminToken: string): Promise<Target> {
  await post(base, '/api/admin/packages', { source: `path:${TEXT_TOOLS_DIR}`, official: true }, adminToken);
  for (let i = 0; (await fetch(`${base}/api/tools/${SLUG}`)).status !== 200; i++) {
    if (i > 600) throw new Error('the text tools were not imported');
    await new Promise((r) => setTimeout(r, 100));
  }
  const user = await post(base, '/api/admin/users', { username: 'bench_memory', tier: 'enterprise' }, adminToken);
  const key: string = user.data.apiKey.key;
  const headers = { authorization: `Bearer ${key}` };
  const collection = await post(base, '/api/collections', { name: 'Bench memory', uid: 'bench-memory' }, key);
  await post(base, `/api/collections/${collection.data.uid}/tools`, { toolId: SLUG }, key);
  const scenario = await post(base, '/api/scenarios', { collectionId: collection.data.id, prompt: 'Slugify "Hello memory bench" with slugify' }, key);
  const executed = await post(base, `/api/tools/execute/${SLUG}`, { params: { text: 'Hello' } }, key);
  return {
    base,
    headers,
    finishedExecution: executed.executionId ?? executed.data?.executionId,
    scenarioId: scenario.data.id,
    mcpUrl: new URL(`${base}/api/mcp/bench_memory/bench-memory/http`),
  };
}

async function main() {
  const only = (process.env.BENCH_MEMORY_KINDS ?? KINDS.join(',')).split(',') as Kind[];
  const cluster = await startCluster({ apis: 1, workers: 1, env: { WORKER_CONCURRENCY: '4' } });
  const [api] = cluster.apis as [ServiceProcess];
  const [worker] = cluster.workers as [ServiceProcess];
  const t0 = performance.now();
  try {
    const target = await setUp(api.url, cluster.adminToken);
    if (!target.finishedExecution) throw new Error('no execution id from the set-up execution');
    const started = await sampleBoth(api, worker);
    console.error(`memory after set-up: ${JSON.stringify(started)}`);
    const kinds: Record<string, unknown> = {};
    for (const kind of only) {
      const clients = await Promise.all(Array.from({ length: CLIENTS }, () => clientFor(kind, target)));
      const errors: string[] = [];
      const samples: Record<number, Pair> = {};
      const k0 = performance.now();
      let clientCpu = process.cpuUsage();
      let done = 0;
      let calling = 0; // seconds spent in calls, not in samples or snapshots: what the rate and the budget count
      for (const cp of CHECKPOINTS) {
        if (done > 0 && calling + ((cp - done) * calling) / done > KIND_SECONDS) break;
        const s0 = performance.now();
        await runSegment(clients, done, cp, errors);
        calling += (performance.now() - s0) / 1000;
        done = cp;
        samples[cp] = await sampleBoth(api, worker);
        if (cp === WARMUP) clientCpu = process.cpuUsage();
        console.error(`${kind} at ${cp} calls (${Math.round((performance.now() - k0) / 1000)} s): ${JSON.stringify(samples[cp])}`);
        if (SNAPSHOTS) {
          for (const p of [api, worker]) await p.snapshot(path.join(SNAPSHOTS, `${kind}-${p.role}-${cp}.heapsnapshot`));
        }
      }
      const seconds = calling;
      const clientUsed = process.cpuUsage(clientCpu);
      await Promise.all(clients.map((c) => c.close()));
      const warm = samples[WARMUP]!;
      const last = samples[done]!;
      kinds[kind] = {
        calls: done,
        calls_per_s: Math.round((done / seconds) * 10) / 10,
        failed: errors.length,
        samples,
        growth_after_warmup: done > WARMUP ? { api: growth(last.api, warm.api), worker: growth(last.worker, warm.worker) } : null,
        // CPU each process spent per call after the warm-up: with the rate, how much of a core the service used.
        cpu_ms_per_call:
          done > WARMUP
            ? {
                api: Math.round(((last.api.cpu_s - warm.api.cpu_s) / (done - WARMUP)) * 1e4) / 10,
                worker: Math.round(((last.worker.cpu_s - warm.worker.cpu_s) / (done - WARMUP)) * 1e4) / 10,
                bench_clients: Math.round((clientUsed.user + clientUsed.system) / 100 / (done - WARMUP)) / 10,
              }
            : null,
      };
      if (errors.length) console.error(`${kind}: ${errors.length} failed, first: ${errors[0]}`);
    }
    console.log(
      JSON.stringify({
        bench: 'memory',
        cpus: os.availableParallelism(),
        load: os.loadavg().map((x) => Math.round(x)),
        processes: '1 web + 1 worker (SANDBOX=process, WORKER_CONCURRENCY=4)',
        clients: CLIENTS,
        warmup_calls: WARMUP,
        kind_seconds: KIND_SECONDS,
        seconds: Math.round((performance.now() - t0) / 1000),
        after_setup: started,
        kinds,
      }),
    );
  } finally {
    await cluster.close();
  }
}

await main();
