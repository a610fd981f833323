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
import { createDb } from '../core/infra/db.js';
import { migrateAll } from '../core/infra/bootstrap.js';
import { createUserWithKey } from '../core/auth/create-account.js';
import { freePort, startEmbeddedPostgres } from '../core/infra/embedded-postgres.js';
import { createEmbeddedSearch } from '../core/search/embedded.js';
import { syntheticTools } from './synthetic-tools.js';
import { createMetrics } from '../core/infra/metrics.js';

const N = Number(process.env.BENCH_TOOLS ?? 10_000);
/** Each mode gets ROUNDS slices of SLICE_SECONDS per route; the figures are the medians of the slices. */
const SLICE_SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
const WARMUP_SECONDS = 2;
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

interface Pass {
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
}

async function load(url: string, paths: string[], key: string, duration: number): Promise<Pass> {
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
  const servers: ReturnType<typeof spawn>[] = [];
  const scrapers: NodeJS.Timeout[] = [];
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
    /** One API process, as `web` runs in production; with `metrics`, METRICS_TOKEN is set and a scraper reads it every 5 s. */
    const startServer = async (metrics: boolean) => {
      const port = await freePort();
      // BENCH_NODE_ARGS: extra node flags for the servers (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile a route).
      const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
      const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'api/server.ts'], {
        env: {
          PATH: process.env.PATH,
          ...(process.env.DEBUG ? { DEBUG: process.env.DEBUG } : {}),
          DATABASE_URL: url,
          PORT: String(port),
          HOST: '127.0.0.1',
          LOG_LEVEL: 'warn',
          DATA_DIR: dir,
          // The search load is queries of 1–3 words, which the sentence encoder (on by default) never reads; with it on,
          // a fresh 10,000-tool catalogue would be encoded in the background for minutes and weigh on every route.
          // SEARCH_ENCODER=use measures that.
          SEARCH_ENCODER: process.env.SEARCH_ENCODER ?? 'none',
          ADMIN_TOKEN: crypto.randomBytes(24).toString('hex'),
          SECRETS_KEY: crypto.randomBytes(24).toString('hex'),
          RATE_LIMIT_ENTERPRISE_MINUTE: '1000000000',
          RATE_LIMIT_ENTERPRISE_DAY: process.env.BENCH_DAY_LIMIT ?? '1000000000',
          ...(metrics ? { METRICS_TOKEN: metricsToken } : {}),
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      servers.push(child);
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
      if (metrics) scrapers.push(setInterval(() => void scrape().catch(() => undefined), 5000));
      return base;
    };
    const allRoutes: Record<string, string[]> = {
      'GET /api/tools': ['/api/tools', '/api/tools?limit=50&offset=100', '/api/tools?category=security'],
      'GET /api/tools/search': queries.slice(0, 1000).map((q) => `/api/tools/search?q=${encodeURIComponent(q)}`),
      'GET /api/tools/:id': ids.slice(0, 2000).map((id) => `/api/tools/${id}`),
    };
    // BENCH_ROUTES=search (a substring of the route names): load only those routes.
    const only = process.env.BENCH_ROUTES;
    const routePaths = Object.fromEntries(Object.entries(allRoutes).filter(([route]) => !only || route.includes(only)));
    // What counting one request costs in process (a counter and a histogram), independent of the machine's load.
    const metrics = createMetrics();
    const ops = ['/api/tools', '/api/tools/search', '/api/tools/*ref'];
    for (let i = 0; i < 20_000; i++) metrics.httpRequest('GET', ops[i % 3], 200, 0.002);
    const t0 = performance.now();
    for (let i = 0; i < 200_000; i++) metrics.httpRequest('GET', ops[i % 3], 200, 0.002);
    const metricsCostPerRequestUs = Number((((performance.now() - t0) / 200_000) * 1000).toFixed(2));

    // Both servers run side by side for the whole comparison, and the load alternates between them in short slices
    // (off-on, then on-off): a machine whose load drifts (a shared 2-core box) weighs on both modes alike. Restarting
    // one server per mode, as this bench once did, let one 10 s pass differ from the next of the same mode by 30 %.
    const off = await startServer(false);
    const on = await startServer(true);
    for (const paths of Object.values(routePaths)) for (const base of [off, on]) await load(base, paths, key, WARMUP_SECONDS);
    const slices: Record<string, { off: Pass[]; on: Pass[] }> = {};
    for (const [route, paths] of Object.entries(routePaths)) {
      slices[route] = { off: [], on: [] };
      for (let round = 0; round < ROUNDS; round++) {
        for (const mode of round % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
          slices[route][mode].push(await load(mode === 'off' ? off : on, paths, key, SLICE_SECONDS));
        }
      }
    }
    const median = (passes: Pass[]): Pass => {
      const pick = (f: (p: Pass) => number) => {
        const xs = passes.map(f).sort((a, b) => a - b);
        return xs.length % 2 ? xs[(xs.length - 1) / 2] : (xs[xs.length / 2 - 1] + xs[xs.length / 2]) / 2;
      };
      return {
        reqPerSec: Math.round(pick((p) => p.reqPerSec)),
        p50Ms: pick((p) => p.p50Ms),
        p99Ms: pick((p) => p.p99Ms),
        non2xx: passes.reduce((n, p) => n + p.non2xx, 0),
        errors: passes.reduce((n, p) => n + p.errors, 0),
      };
    };
    const routes = Object.fromEntries(Object.entries(slices).map(([route, s]) => [route, median(s.off)]));
    const metricsOn = Object.fromEntries(Object.entries(slices).map(([route, s]) => [route, median(s.on)]));
    const metricsLossPercent = Object.fromEntries(
      Object.entries(routes).map(([route, o]) => [route, Number((((o.reqPerSec - metricsOn[route].reqPerSec) / o.reqPerSec) * 100).toFixed(1))]),
    );
    console.log(
      JSON.stringify({
        bench: 'api',
        tools: N,
        sliceSeconds: SLICE_SECONDS,
        rounds: ROUNDS,
        connections: CONNECTIONS,
        rateLimiting: 'on (postgres, enterprise key with configured limits)',
        routes,
        metricsOn,
        metricsLossPercent,
        metricsCostPerRequestUs,
        slicesReqPerSec: Object.fromEntries(
          Object.entries(slices).map(([route, x]) => [route, { off: x.off.map((p) => p.reqPerSec), on: x.on.map((p) => p.reqPerSec) }]),
        ),
        searchInProcess: {
          queries: times.length,
          p50Ms: Number(percentile(times, 50).toFixed(3)),
          p99Ms: Number(percentile(times, 99).toFixed(3)),
        },
      }),
    );
  } finally {
    for (const t of scrapers) clearInterval(t);
    await Promise.all(
      servers.map((child) => {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        return child.exitCode === null && child.signalCode === null ? exited : undefined;
      }),
    );
    await pg.stop();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
