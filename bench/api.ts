/**
 * `npm run bench:api`: the HTTP API under load with 10,000 synthetic tools. The server runs in its own process
 * (as `web` does in production) with rate limiting on — an enterprise key whose limits are set high, so that every
 * request still takes its counters in Postgres. autocannon drives 50 connections for 10 s per route.
 * The routes run four times, against a server with Prometheus metrics off, on, on, off (on: METRICS_TOKEN set, scraped
 * every 5 s during the load, as Prometheus would): `routes` (off) and `metricsOn` are means of two passes each, with
 * `metricsLossPercent` per route.
 * Prints one JSON line.
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { createDb } from '../core/db.js';
import { migrateAll } from '../core/bootstrap.js';
import { createUserWithKey } from '../core/accounts.js';
import { freePort, startEmbeddedPostgres } from '../core/embedded-postgres.js';
import { createEmbeddedSearch } from '../core/search/embedded.js';
import { syntheticTools } from './synthetic-tools.js';
import { createMetrics } from '../core/metrics.js';

const N = Number(process.env.BENCH_TOOLS ?? 10_000);
const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = 50;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function seed(url: string, docs: ReturnType<typeof syntheticTools>) {
  const db = createDb(url, { max: 4 });
  const byPackage = new Map<string, typeof docs>();
  for (const d of docs) byPackage.set(d.packageName, [...(byPackage.get(d.packageName) ?? []), d]);
  for (const [name, tools] of byPackage) {
    const [pkg] = await db('packages')
      .insert({ name, version: '1.0.0', category: tools[0].category, source: `npm:${name}@1.0.0`, install_path: '/nonexistent' })
      .returning('id');
    const rows = tools.map((t) => ({
      package_id: pkg.id,
      name: t.name,
      export_name: t.name,
      description: t.description,
      health_status: t.healthStatus,
      quality_score: t.qualityScore,
      input_schema: JSON.stringify({ type: 'object', properties: { input: { type: 'string', description: 'input' } } }),
    }));
    for (let i = 0; i < rows.length; i += 500)
      await db('tools')
        .insert(rows.slice(i, i + 500))
        .onConflict(['package_id', 'name'])
        .ignore();
  }
  const ids: string[] = (await db('tools').select('id')).map((r: { id: string }) => r.id);
  const { secret } = await createUserWithKey(db, { username: 'bench', tier: 'enterprise' });
  await db.destroy();
  return { ids, key: secret };
}

function queriesFrom(docs: ReturnType<typeof syntheticTools>, n: number): string[] {
  const out: string[] = [];
  for (let i = 0; out.length < n; i++) {
    const d = docs[(i * 7919) % docs.length];
    const words = d.description
      .toLowerCase()
      .replace(/[^a-z0-9 ]/g, ' ')
      .split(/\s+/)
      .filter((w) => w.length > 3);
    out.push(words.slice(i % 3, (i % 3) + 1 + (i % 3)).join(' ') || d.name);
  }
  return out;
}

async function load(url: string, paths: string[], key: string, duration = DURATION) {
  let i = 0;
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration,
    headers: { authorization: `Bearer ${key}` },
    requests: [{ setupRequest: (req) => ({ ...req, path: paths[i++ % paths.length] }) }],
  });
  return {
    reqPerSec: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

async function main() {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolshed-bench-'));
  await fs.chmod(dir, 0o755);
  // A throwaway server, durability off as every earlier run measured it; `npm start`'s own writes durably.
  const pg = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), durability: 'none' });
  const serverUrl = pg.url();
  const adminDb = createDb(serverUrl, { max: 1 });
  await adminDb.raw('create database bench');
  await adminDb.destroy();
  const url = pg.url('bench');
  let server: ReturnType<typeof spawn> | undefined;
  try {
    await migrateAll(url);
    const docs = syntheticTools(N);
    const { ids, key } = await seed(url, docs);

    // In-process engine latency over the same corpus.
    const engine = createEmbeddedSearch();
    await engine.replaceAll(docs);
    const queries = queriesFrom(docs, 3000);
    for (const q of queries.slice(0, 300)) await engine.search({ q, limit: 10 });
    const times: number[] = [];
    for (const q of queries) {
      const t0 = performance.now();
      await engine.search({ q, limit: 10 });
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);

    const metricsToken = crypto.randomBytes(16).toString('hex');
    const run = async (metrics: boolean, duration = DURATION) => {
      const port = await freePort();
      server = spawn(process.execPath, ['--import', 'tsx', 'api/server.ts'], {
        env: {
          PATH: process.env.PATH,
          DATABASE_URL: url,
          PORT: String(port),
          HOST: '127.0.0.1',
          LOG_LEVEL: 'warn',
          DATA_DIR: dir,
          ADMIN_TOKEN: crypto.randomBytes(24).toString('hex'),
          SECRETS_KEY: crypto.randomBytes(24).toString('hex'),
          RATE_LIMIT_ENTERPRISE_MINUTE: '1000000000',
          RATE_LIMIT_ENTERPRISE_DAY: process.env.BENCH_DAY_LIMIT ?? '1000000000',
          ...(metrics ? { METRICS_TOKEN: metricsToken } : {}),
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      const base = `http://127.0.0.1:${port}`;
      for (let i = 0; i < 300; i++) {
        const ok = await fetch(`${base}/health`).then(
          (r) => r.ok,
          () => false,
        );
        if (ok) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const check = await fetch(`${base}/api/tools?limit=1`, { headers: { authorization: `Bearer ${key}` } });
      if (check.headers.get('x-ratelimit-limit') !== '1000000000') throw new Error('rate limiting is not on');
      const scrape = async () => {
        const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } });
        await res.text();
        return res.status;
      };
      // Off, /metrics is an unknown path (the bearer, not an API key, gets a 401 first).
      if (((await scrape()) === 200) !== metrics) throw new Error(`metrics should be ${metrics ? 'on' : 'off'}`);
      const scraper = metrics ? setInterval(() => void scrape().catch(() => undefined), 5000) : undefined;
      try {
        return {
          'GET /api/tools': await load(base, ['/api/tools', '/api/tools?limit=50&offset=100', '/api/tools?category=security'], key, duration),
          'GET /api/tools/search': await load(
            base,
            queries.slice(0, 1000).map((q) => `/api/tools/search?q=${encodeURIComponent(q)}`),
            key,
            duration,
          ),
          'GET /api/tools/:id': await load(
            base,
            ids.slice(0, 2000).map((id) => `/api/tools/${id}`),
            key,
            duration,
          ),
        };
      } finally {
        clearInterval(scraper);
        server.kill('SIGTERM');
        await new Promise((resolve) => server?.once('exit', resolve));
        server = undefined;
      }
    };
    // What counting one request costs in process (a counter and a histogram), independent of the machine's load.
    const metrics = createMetrics();
    const ops = ['/api/tools', '/api/tools/search', '/api/tools/*ref'];
    for (let i = 0; i < 20_000; i++) metrics.httpRequest('GET', ops[i % 3], 200, 0.002);
    const t0 = performance.now();
    for (let i = 0; i < 200_000; i++) metrics.httpRequest('GET', ops[i % 3], 200, 0.002);
    const metricsCostPerRequestUs = Number((((performance.now() - t0) / 200_000) * 1000).toFixed(2));
    // Off, on, on, off: a load that drifts during the run (a shared machine) weighs on both modes alike; each mode's
    // figure is the mean of its two passes.
    // A short pass first, not counted: the database just seeded (autovacuum, cold caches) would weigh on the first only.
    await run(false, Math.max(1, Math.round(DURATION / 3)));
    const passes = [await run(false), await run(true), await run(true), await run(false)];
    const mean = (a: (typeof passes)[0], b: (typeof passes)[0]) =>
      Object.fromEntries(
        Object.entries(a).map(([route, x]) => {
          const y = b[route as keyof typeof b];
          return [
            route,
            {
              reqPerSec: Math.round((x.reqPerSec + y.reqPerSec) / 2),
              p50Ms: (x.p50Ms + y.p50Ms) / 2,
              p99Ms: (x.p99Ms + y.p99Ms) / 2,
              non2xx: x.non2xx + y.non2xx,
              errors: x.errors + y.errors,
            },
          ];
        }),
      ) as (typeof passes)[0];
    const routes = mean(passes[0]!, passes[3]!);
    const metricsOn = mean(passes[1]!, passes[2]!);
    const metricsLossPercent = Object.fromEntries(
      Object.entries(routes).map(([route, off]) => {
        const on = metricsOn[route as keyof typeof metricsOn];
        return [route, Number((((off.reqPerSec - on.reqPerSec) / off.reqPerSec) * 100).toFixed(1))];
      }),
    );
    console.log(
      JSON.stringify({
        bench: 'api',
        tools: N,
        seconds: DURATION,
        connections: CONNECTIONS,
        rateLimiting: 'on (postgres, enterprise key with configured limits)',
        routes,
        metricsOn,
        metricsLossPercent,
        metricsCostPerRequestUs,
        passesReqPerSec: passes.map((p) => Object.values(p).map((r) => r.reqPerSec)),
        searchInProcess: {
          queries: times.length,
          p50Ms: Number(percentile(times, 50).toFixed(3)),
          p99Ms: Number(percentile(times, 99).toFixed(3)),
        },
      }),
    );
  } finally {
    server?.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    await pg.stop();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
