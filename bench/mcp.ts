/**
 * `tsx bench/mcp.ts`: what the MCP endpoint adds to a tool call. One service in-process as the tests run it
 * (embedded Postgres, migrations, real Graphile Worker, gVisor sandboxes with a warm pool of 2, the API on a loopback
 * port), @toolshed-examples/text-tools imported, then `slugify` called 100 times through execute (25) and 100 times
 * through MCP `tools/call` from the SDK's real Client, sequentially, alternating, 150 ms apart (so that the sandbox
 * pool has refilled), after a warm-up. Prints one JSON line.
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { loadConfig } from '../core/config.js';
import { createDb } from '../core/db.js';
import { createLogger } from '../core/logger.js';
import { migrateAll } from '../core/bootstrap.js';
import { startEmbeddedPostgres } from '../core/embedded-postgres.js';
import { startWorkerProcess } from '../worker/main.js';
import { startApi } from '../api/server.js';

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

async function main() {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolshed-bench-mcp-'));
  await fs.chmod(dir, 0o755);
  const pg = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg') });
  const admin = createDb(pg.url(), { max: 1 });
  await admin.raw('create database bench');
  await admin.destroy();
  const url = pg.url('bench');
  await migrateAll(url);
  const config = loadConfig({
    DATA_DIR: dir,
    ADMIN_TOKEN: crypto.randomBytes(24).toString('hex'),
    SECRETS_KEY: crypto.randomBytes(32).toString('hex'),
    SANDBOX: 'gvisor',
    SANDBOX_POOL_SIZE: '2',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_ENTERPRISE_MINUTE: '1000000000',
    RATE_LIMIT_ENTERPRISE_DAY: '1000000000',
  });
  const logger = createLogger(config.LOG_LEVEL);
  const worker = await startWorkerProcess(config, url, logger, { cron: false });
  const api = await startApi(config, url, logger, 0);
  let client: Client | undefined;
  try {
    const post = async (p: string, body: unknown, token: string) => {
      const res = await fetch(api.url + p, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const json = await res.json();
      if (res.status >= 300) throw new Error(`${p}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    };
    const examples = path.resolve(new URL('../examples/tools/text-tools', import.meta.url).pathname);
    await post('/api/admin/packages', { source: `path:${examples}` }, config.ADMIN_TOKEN!);
    const user = await post('/api/admin/users', { username: 'bench', tier: 'enterprise' }, config.ADMIN_TOKEN!);
    const key: string = user.data.apiKey.key;
    await post('/api/collections', { name: 'Bench tools', uid: 'bench-tools' }, key);
    await post('/api/collections/bench-tools/tools', { toolId: TOOL }, key);

    client = new Client({ name: 'bench', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${api.url}/api/mcp/bench/bench-tools/http`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    const params = { text: 'Benchmarking the MCP endpoint' };
    const viaExecute = async () => {
      const res = await post(`/api/tools/execute/${TOOL}`, { params }, key);
      if (!res.success) throw new Error(JSON.stringify(res));
      return res.executionId as string;
    };
    const viaMcp = async () => {
      const res = await client!.callTool({ name: 'slugify', arguments: params });
      if (res.isError) throw new Error(JSON.stringify(res));
      return res._meta?.['toolshed/executionId'] as string;
    };

    const execute: Sample[] = [];
    const mcp: Sample[] = [];
    for (let i = 0; i < WARMUP + CALLS; i++) {
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
        await api.deps.db('executions')
          .whereIn('id', [...execute, ...mcp].map((s) => s.executionId))
          .select('id', api.deps.db.raw('extract(epoch from (completed_at - created_at)) * 1000 as ms'))
      ).map((r: { id: string; ms: string }) => [r.id, Number(r.ms)]),
    );
    const outside = (samples: Sample[]) => sorted(samples.map((s) => s.ms - lifetimes.get(s.executionId)!));
    const [e, m] = [sorted(execute.map((s) => s.ms)), sorted(mcp.map((s) => s.ms))];
    const [eOut, mOut] = [outside(execute), outside(mcp)];
    console.log(
      JSON.stringify({
        bench: 'mcp',
        execute_p50_ms: round(percentile(e, 50)),
        execute_p99_ms: round(percentile(e, 99)),
        mcp_call_p50_ms: round(percentile(m, 50)),
        mcp_call_p99_ms: round(percentile(m, 99)),
        mcp_overhead_p50_ms: round(percentile(mOut, 50) - percentile(eOut, 50)),
        execute_outside_execution_p50_ms: round(percentile(eOut, 50)),
        mcp_outside_execution_p50_ms: round(percentile(mOut, 50)),
      }),
    );
  } finally {
    await client?.close().catch(() => undefined);
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
