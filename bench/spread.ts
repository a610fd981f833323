/**
 * `npm run bench:spread` (issue 45 item 4, "out of one machine"): the service as 1 `web` + 1 `worker` process and as
 * 2 + 2 on one Postgres (bench/cluster.ts: the Procfile's entries, SANDBOX=process, WORKER_CONCURRENCY=4 each), the
 * clients spread round-robin over the API processes. For each layout: REST reads per second (a tool's detail and the
 * list, BENCH_SPREAD_CLIENTS clients, default 16, for BENCH_SPREAD_SECONDS, default 30), executions per second
 * (waited REST executions, the same clients and time) and each process's RSS and heap after a forced GC at the end.
 * With 2 APIs, consistency across them: an SSE client on API 1 sees an execution submitted through API 2 end; a
 * package imported through API 1 is found by search on API 2 (ms until it is); three callers' search-and-run on
 * API 1 lift the tool they ran to first place for the same query on API 2 (ms until it does; learning's table is
 * rebuilt at most once per SEARCH_LEARNING_REFRESH_MS, 10 s by default). Prints one JSON line.
 */
import os from 'node:os';
import path from 'node:path';
import { post, TEXT_TOOLS_DIR } from './service.js';
import { startCluster, type Cluster } from './cluster.js';

const CLIENTS = Number(process.env.BENCH_SPREAD_CLIENTS ?? 16);
const SECONDS = Number(process.env.BENCH_SPREAD_SECONDS ?? 30);
const TEXT = '@toolshed-examples/text-tools';
const SLUG = `${TEXT}/slugify`;
const COLOR_TOOLS_DIR = path.resolve(TEXT_TOOLS_DIR, '../color-tools');

async function until<T>(what: string, ms: number, fn: () => Promise<T | false | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function throughput(urls: string[], call: (base: string, n: number) => Promise<void>): Promise<{ per_s: number; failed: number }> {
  const end = performance.now() + SECONDS * 1000;
  let done = 0;
  let failed = 0;
  let n = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      const base = urls[c % urls.length]!;
      while (performance.now() < end) {
        try {
          await call(base, n++);
          done++;
        } catch {
          failed++;
        }
      }
    }),
  );
  return { per_s: Math.round((done / SECONDS) * 10) / 10, failed };
}

const searchNames = async (base: string, q: string, key: string) => {
  const res = await fetch(`${base}/api/tools/search?q=${encodeURIComponent(q)}&limit=20`, { headers: { authorization: `Bearer ${key}` } });
  const body = (await res.json()) as any;
  return (body.results.tools as { name: string }[]).map((x) => x.name);
};

async function consistency(cluster: Cluster, adminToken: string, key: string) {
  const [a1, a2] = cluster.apis.map((a) => a.url) as [string, string];
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  // SSE on API 1 of an execution submitted through API 2, the stream opened at once (it is live, not a replay).
  const sub = await fetch(`${a2}/api/tools/execute/${SLUG}?wait=false`, { method: 'POST', headers, body: JSON.stringify({ params: { text: 'Across APIs' } }) });
  const id = ((await sub.json()) as any).data.executionId as string;
  const t0 = performance.now();
  const text = await (await fetch(`${a1}/api/executions/${id}/events`, { headers, signal: AbortSignal.timeout(60_000) })).text();
  const statuses = [...text.matchAll(/"status":"(\w+)"/g)].map((m) => m[1]);
  const sse = { ended_with_done: text.includes('event: done'), statuses: [...new Set(statuses)], ms: Math.round(performance.now() - t0) };
  // A package imported through API 1, searched on API 2.
  const t1 = performance.now();
  const imported = post(a1, '/api/admin/packages', { source: `path:${COLOR_TOOLS_DIR}`, official: true }, adminToken);
  await imported;
  const importedAt = performance.now();
  await until('contrastRatio found on API 2', 60_000, async () => (await searchNames(a2, 'contrast ratio of two colours', key)).includes('contrastRatio'));
  const search = { import_ms: Math.round(importedAt - t1), found_on_other_api_after_import_ms: Math.round(performance.now() - importedAt) };
  // Learning: three callers search and run the second hit on API 1; API 2 ranks it first.
  const q = 'convert text';
  const before = await searchNames(a2, q, key);
  const target = before[1]!;
  for (let i = 0; i < 3; i++) {
    const u = await post(a1, '/api/admin/users', { username: `bench_spread_${i}` }, adminToken);
    const k: string = u.data.apiKey.key;
    await searchNames(a1, q, k);
    const r = await fetch(`${a1}/api/tools/execute/${TEXT}/${target}?wait=false`, {
      method: 'POST',
      headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' },
      body: JSON.stringify({ params: { text: 'Hello World' } }),
    });
    if (r.status !== 202) throw new Error(`execute ${target}: ${r.status}`);
  }
  const t2 = performance.now();
  await until(`${target} first on API 2`, 60_000, async () => (await searchNames(a2, q, key))[0] === target);
  const learning = { query: q, tool: target, was: before.indexOf(target) + 1, first_on_other_api_after_ms: Math.round(performance.now() - t2) };
  return { sse, search, learning };
}

async function layout(apis: number, workers: number) {
  const cluster = await startCluster({ apis, workers, env: { WORKER_CONCURRENCY: '4' } });
  try {
    const base = cluster.apis[0]!.url;
    await post(base, '/api/admin/packages', { source: `path:${TEXT_TOOLS_DIR}`, official: true }, cluster.adminToken);
    const user = await post(base, '/api/admin/users', { username: 'bench_spread', tier: 'enterprise' }, cluster.adminToken);
    const key: string = user.data.apiKey.key;
    const headers = { authorization: `Bearer ${key}` };
    const urls = cluster.apis.map((a) => a.url);
    for (const u of urls) await until(`text tools on ${u}`, 60_000, async () => (await fetch(`${u}/api/tools/${SLUG}`)).status === 200);
    const get = async (b: string, n: number) => {
      const res = await fetch(b + (n % 2 ? `/api/tools/${SLUG}` : '/api/tools?limit=20'), { headers });
      await res.text();
      if (!res.ok) throw new Error(String(res.status));
    };
    const exec = async (b: string, n: number) => {
      const res = await fetch(`${b}/api/tools/execute/${SLUG}`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ params: { text: `Hello ${n}` } }),
      });
      await res.text();
      if (!res.ok) throw new Error(String(res.status));
    };
    for (let i = 0; i < 50; i++) await get(urls[i % urls.length]!, i); // warm-up
    const rest = await throughput(urls, get);
    const executions = await throughput(urls, exec);
    const all = [...cluster.apis, ...cluster.workers];
    const memory = Object.fromEntries(await Promise.all(all.map(async (p, i) => [`${p.role}${i < apis ? i + 1 : i - apis + 1}`, await p.sample()])));
    const checks = apis > 1 ? await consistency(cluster, cluster.adminToken, key) : undefined;
    return { apis, workers, rest_reads_per_s: rest, executions_per_s: executions, memory, consistency: checks };
  } finally {
    await cluster.close();
  }
}

const one = await layout(1, 1);
const two = await layout(2, 2);
console.log(
  JSON.stringify({
    bench: 'spread',
    cpus: os.availableParallelism(),
    load: os.loadavg().map((x) => Math.round(x)),
    clients: CLIENTS,
    seconds: SECONDS,
    sandbox: 'process',
    layouts: [one, two],
  }),
);
