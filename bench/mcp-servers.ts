/**
 * `npm run bench:mcp-servers`: MCP servers from npm, over HTTP against the real service (embedded Postgres, API and
 * Graphile Worker in this process, gVisor sandboxes). Figures: import time of server-everything (from node_modules);
 * boot-to-ready (a sandbox from the warm pool, the server started, initialize + tools/list answered), from the
 * server's one-file bundle and from its bin, alternating; warm call p50/p99, cold call p50 with a pooled sandbox (no
 * server waiting) and with the pool off too, of server-everything's `echo` beside the plain tool text-tools/slugify in
 * the same run; then BENCH_MCP_SERVERS real servers (the list below) imported from npm one after the other, each with its
 * import time, tool count, or failure and why; a failure is also tried as a plain `node <bin>` outside the sandbox
 * (the official client over stdio), to tell our failures from the server's own. Prints one JSON line.
 */
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { placeholderEnv, planMcpServer } from '../core/packages/mcp-server.js';
import { installPackage } from '../sandbox/packages.js';
import { parseSource } from '../core/packages/source.js';
import { startBenchService, TEXT_TOOLS_DIR } from './service.js';
import type { GvisorRunner } from '../sandbox/gvisor-runner.js';
import { createUserWithKey } from '../core/auth/create-account.js';

const N = Number(process.env.BENCH_CALLS ?? 20);
const EVERYTHING_DIR = path.resolve(new URL('../node_modules/@modelcontextprotocol/server-everything', import.meta.url).pathname);
const KEY = (name: string) => [{ name, secret: true }];

/** Real servers from npm, with what each needs to start. */
const SERVERS: { source: string; body?: Record<string, unknown> }[] = [
  { source: 'npm:@modelcontextprotocol/server-everything' },
  { source: 'npm:@modelcontextprotocol/server-memory' },
  { source: 'npm:@modelcontextprotocol/server-sequential-thinking' },
  { source: 'npm:@modelcontextprotocol/server-filesystem', body: { args: ['/tmp'] } },
  { source: 'npm:@modelcontextprotocol/server-github', body: { env: KEY('GITHUB_PERSONAL_ACCESS_TOKEN') } },
  { source: 'npm:@modelcontextprotocol/server-brave-search', body: { env: KEY('BRAVE_API_KEY') } },
  { source: 'npm:@modelcontextprotocol/server-slack', body: { env: [...KEY('SLACK_BOT_TOKEN'), { name: 'SLACK_TEAM_ID' }] } },
  { source: 'npm:@modelcontextprotocol/server-postgres', body: { args: ['postgresql://localhost/db'] } },
  { source: 'npm:@playwright/mcp' },
  { source: 'npm:chrome-devtools-mcp' },
  { source: 'npm:tavily-mcp', body: { env: KEY('TAVILY_API_KEY') } },
  { source: 'npm:@upstash/context7-mcp' },
  { source: 'npm:firecrawl-mcp', body: { env: KEY('FIRECRAWL_API_KEY') } },
  { source: 'npm:mongodb-mcp-server' },
  { source: 'npm:@notionhq/notion-mcp-server', body: { env: KEY('NOTION_TOKEN') } },
  { source: 'npm:exa-mcp-server', body: { env: KEY('EXA_API_KEY') } },
  { source: 'npm:@supabase/mcp-server-supabase', body: { env: KEY('SUPABASE_ACCESS_TOKEN') } },
  { source: 'npm:mcp-server-kubernetes' },
  { source: 'npm:@wonderwhy-er/desktop-commander' },
  { source: 'npm:figma-developer-mcp', body: { args: ['--stdio'], env: KEY('FIGMA_API_KEY') } },
].slice(0, Number(process.env.BENCH_MCP_SERVERS ?? 20));

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]) : null;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function request(base: string, p: string, body: unknown, token?: string) {
  const t0 = performance.now();
  const res = await fetch(base + p, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any, ms: performance.now() - t0 };
}

/** `n` calls one after the other, spaced below the pool's refill rate, or each once `ready()` says so. */
async function calls(
  base: string,
  tool: string,
  params: unknown,
  n: number,
  spacingMs: number,
  o: { ready?: () => Promise<unknown>; key?: string } = {},
): Promise<{ ms: number[]; failed: number }> {
  const ms: number[] = [];
  let failed = 0;
  for (let i = 0; i < n; i++) {
    await o.ready?.();
    const r = await request(base, `/api/tools/execute/${tool}`, { params }, o.key);
    if (r.status === 200 && r.body.success) ms.push(r.ms);
    else failed++;
    await sleep(spacingMs);
  }
  return { ms, failed };
}

/** The same server as a plain `node <bin>` outside any sandbox: does it list its tools? */
async function outsideSandbox(cacheDir: string, source: string, body: Record<string, unknown> = {}): Promise<string> {
  try {
    const parsed = parseSource(source);
    if ('error' in parsed) return parsed.error;
    const installed = await installPackage(cacheDir, parsed);
    const plan = planMcpServer(installed.packageJson, { kind: 'mcp', ...body } as never);
    if ('errors' in plan) return plan.errors[0].message;
    const env = placeholderEnv(plan.plan.env);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [path.join(installed.dir, plan.plan.bin), ...plan.plan.args],
      env: { PATH: process.env.PATH ?? '', HOME: os.tmpdir(), ...env },
      stderr: 'ignore',
    });
    const client = new Client({ name: 'bench', version: '1' });
    try {
      await client.connect(transport, { timeout: 30_000 });
      const listed = await client.listTools(undefined, { timeout: 30_000 });
      return `lists ${listed.tools.length} tools outside the sandbox`;
    } finally {
      // A server that failed still runs as our child: it would keep the bench from exiting.
      await client.close().catch(() => {});
      await transport.close().catch(() => {});
    }
  } catch (err) {
    return `fails outside the sandbox too: ${(err as Error).message.slice(0, 200)}`;
  }
}

async function main() {
  const svc = await startBenchService();
  const api = svc.api;
  const admin = svc.config.ADMIN_TOKEN;
  const out: Record<string, unknown> = { bench: 'mcp-servers', cpus: os.availableParallelism(), calls: N };
  try {
    // BENCH_MCP_SERVERS_ONLY=1: only the list of real servers (their imports and server starts), not the headline figures.
    if (process.env.BENCH_MCP_SERVERS_ONLY !== '1') await headline(svc, out);
    // Server starts per import: every describe of an MCP server the worker's sandbox runs while one import is under way.
    let starts = 0;
    const sandbox = svc.worker.deps.sandbox;
    const describe = sandbox.describe.bind(sandbox);
    sandbox.describe = (pkg, opts) => {
      if (pkg.mcp) starts++;
      return describe(pkg, opts);
    };
    const servers: Record<string, unknown>[] = [];
    for (const s of SERVERS) {
      starts = 0;
      const r = await request(api.url, '/api/admin/packages', { source: s.source, ...(s.body ?? {}) }, admin);
      const entry: Record<string, unknown> = { source: s.source, status: r.status, import_ms: Math.round(r.ms), starts };
      if (r.status === 201) {
        entry.tools = r.body.data.tools.length;
        const row = await svc.worker.deps.db('packages').where({ name: r.body.data.package.name }).first();
        entry.in_guest = row?.manifest?.mcp?.inGuest === true;
        entry.bundled = typeof row?.manifest?.mcp?.bundle === 'string';
      } else {
        entry.error = String(r.body?.error?.message ?? JSON.stringify(r.body)).slice(0, 300);
        entry.outside = await outsideSandbox(path.join(svc.dir, 'outside-cache'), s.source, s.body);
      }
      servers.push(entry);
      process.stderr.write(`${JSON.stringify(entry)}\n`);
    }
    out.servers_imported = servers.filter((x) => x.status === 201).length;
    out.servers_tried = servers.length;
    const counts = servers.map((x) => x.starts as number);
    out.starts_per_import_p50 = pct(counts, 50);
    out.starts_per_import_max = counts.length ? Math.max(...counts) : null;
    out.servers = servers;
  } finally {
    await svc.close();
  }
  console.log(JSON.stringify(out));
}

/** Import time, boot-to-ready and call latencies of server-everything beside text-tools' slugify. */
async function headline(svc: Awaited<ReturnType<typeof startBenchService>>, out: Record<string, unknown>) {
  const api = svc.api;
  const admin = svc.config.ADMIN_TOKEN;
  {
    await request(api.url, '/api/admin/packages', { source: `path:${TEXT_TOOLS_DIR}` }, admin);
    const imp = await request(api.url, '/api/admin/packages', { source: `path:${EVERYTHING_DIR}` }, admin);
    if (imp.status !== 201) throw new Error(`server-everything import: ${JSON.stringify(imp.body)}`);
    out.everything_import_ms = Math.round(imp.ms);
    out.everything_tools = imp.body.data.tools.length;

    // Boot-to-ready: a sandbox from the pool, the server started, initialize and tools/list answered.
    const row = await svc.worker.deps.db('packages').where({ name: '@modelcontextprotocol/server-everything' }).first();
    out.everything_in_guest = row.manifest.mcp.inGuest === true;
    const ref = { name: row.name, version: row.version, dir: row.install_path, mcp: row.manifest.mcp };
    out.everything_bundle = ref.mcp.bundle ?? null;
    // From its one-file bundle (sandbox/mcp-bundle.ts) and from its bin, alternating.
    const ready: number[] = [];
    const readyUnbundled: number[] = [];
    const { bundle: _bundle, ...unbundled } = ref.mcp;
    for (let i = 0; i < 5; i++) {
      for (const [mcp, into] of [
        [ref.mcp, ready],
        [unbundled, readyUnbundled],
      ] as const) {
        const d = await svc.worker.deps.sandbox.describe({ ...ref, mcp }, { timeoutMs: 30_000 });
        if (d.kind === 'ok') into.push(d.durationMs);
        await sleep(800);
      }
    }
    out.boot_to_ready_p50_ms = pct(ready, 50);
    out.boot_to_ready_unbundled_p50_ms = pct(readyUnbundled, 50);
    // The same server started as a child `node <bin>` (as before servers ran in the guest's own process).
    const childReady: number[] = [];
    for (let i = 0; i < 5; i++) {
      const d = await svc.worker.deps.sandbox.describe({ ...ref, mcp: { ...unbundled, inGuest: false } }, { timeoutMs: 30_000 });
      if (d.kind === 'ok') childReady.push(d.durationMs);
      await sleep(800);
    }
    out.boot_to_ready_child_p50_ms = pct(childReady, 50);

    const echo = ['@modelcontextprotocol/server-everything/echo', { message: 'bench' }] as const;
    const plain = ['@toolshed-examples/text-tools/slugify', { text: 'Bench run' }] as const;
    // Warm: each call finds a server started and initialised for it (mcp-warm.ts), as each plain call finds a booted
    // sandbox; the bench waits for it rather than guessing how long a start takes under load.
    const warmServer = () => (svc.worker.deps.sandbox as GvisorRunner).mcpWarm.whenWarm({ pkg: ref, env: {} }, 60_000);
    await calls(api.url, echo[0], echo[1], 2, 800, { ready: warmServer });
    await calls(api.url, plain[0], plain[1], 2, 800);
    const warmMcp = await calls(api.url, echo[0], echo[1], N, 0, { ready: warmServer });
    const warmPlain = await calls(api.url, plain[0], plain[1], N, 800);
    // Back to back, as fast as they come: how many find a warm server when calls outpace starts on 2 cores.
    const burst = await calls(api.url, echo[0], echo[1], N, 0);
    Object.assign(out, {
      mcp_warm_p50_ms: pct(warmMcp.ms, 50),
      mcp_warm_p99_ms: pct(warmMcp.ms, 99),
      mcp_warm_failed: warmMcp.failed,
      plain_warm_p50_ms: pct(warmPlain.ms, 50),
      plain_warm_p99_ms: pct(warmPlain.ms, 99),
      mcp_back_to_back_p50_ms: pct(burst.ms, 50),
      mcp_back_to_back_failed: burst.failed,
    });
    // Caller-package mode: one server per caller and package serves its calls one after the other.
    await svc.swapWorker({ SANDBOX_REUSE: 'caller-package' });
    const db = svc.worker.deps.db;
    const { secret: key } = await createUserWithKey(db, { username: 'bench', tier: 'pro' });
    await calls(api.url, echo[0], echo[1], 2, 0, { key });
    const reuse = await calls(api.url, echo[0], echo[1], N, 0, { key });
    Object.assign(out, { mcp_reuse_p50_ms: pct(reuse.ms, 50), mcp_reuse_p99_ms: pct(reuse.ms, 99), mcp_reuse_failed: reuse.failed });
    // Cold with a pooled sandbox: no server waiting; a booted sandbox from the pool gets the package and starts it.
    await svc.swapWorker({ SANDBOX_MCP_WARM: '0' });
    const pooled = async () => {
      while (svc.worker.deps.sandbox.poolStats?.().ready === 0) await sleep(50);
    };
    const coldPooled = await calls(api.url, echo[0], echo[1], Math.max(5, N / 2), 200, { ready: pooled });
    Object.assign(out, { mcp_cold_pooled_p50_ms: pct(coldPooled.ms, 50), mcp_cold_pooled_failed: coldPooled.failed });
    // Cold: no booted sandbox and no started server.
    await svc.swapWorker({ SANDBOX_POOL_SIZE: '0', SANDBOX_MCP_WARM: '0' });
    const coldMcp = await calls(api.url, echo[0], echo[1], Math.max(5, N / 2), 200);
    const coldPlain = await calls(api.url, plain[0], plain[1], Math.max(5, N / 2), 200);
    Object.assign(out, { mcp_cold_p50_ms: pct(coldMcp.ms, 50), plain_cold_p50_ms: pct(coldPlain.ms, 50), mcp_cold_failed: coldMcp.failed });
    await svc.swapWorker({});
    // The headline figures, also on stderr: the server list that follows can take tens of minutes.
    process.stderr.write(`${JSON.stringify(out)}\n`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
