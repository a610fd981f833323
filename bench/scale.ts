/**
 * `npm run bench:scale` (issue 45): every public read route and an execution's submit-and-poll, fresh and then with a
 * year of data, in the same run; then the retention sweep and the database's size per million executions after it.
 * Prints one JSON line.
 *
 * The year is seeded by SQL of the same shape as the service's own writes: packages and tools (their NOTIFY trigger
 * included), users, final executions with a 1 KB result spread over 365 days (and their tools' execution counts and
 * hourly statistics for the last 31 days, as finishExecution keeps them), and trending events from those users through
 * the tool_events trigger that keeps the trending rollups. Volumes are the issue's (10 M executions and events,
 * 100,000 tools in 10,000 packages, 50,000 users) times BENCH_SCALE (default 0.1: the 2-core machine cannot seed 10 M
 * rows of each within ~10 minutes). Collections and scenario runs are not seeded (no read route here reads them).
 * The sandbox is `process` (the guest code as a child process): the sandbox is not the subject.
 */
import os from 'node:os';
import { createDb, type Knex } from '../core/infra/db.js';
import { createUserWithKey } from '../core/auth/create-account.js';
import { sweepRetention } from '../core/repos/retention.js';
import { post, startBenchService, TEXT_TOOLS_DIR } from './service.js';

const SCALE = Number(process.env.BENCH_SCALE ?? 0.1);
const N = Number(process.env.BENCH_SCALE_REQUESTS ?? 60);
const V = {
  executions: Math.round(10_000_000 * SCALE),
  events: Math.round(10_000_000 * SCALE),
  tools: Math.round(100_000 * SCALE),
  packages: Math.round(10_000 * SCALE),
  users: Math.round(50_000 * SCALE),
};
const CHUNK = 100_000;

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.max(0, Math.ceil((p / 100) * s.length) - 1)]! * 10) / 10;
}

async function timed(n: number, fn: () => Promise<void>): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < 3; i++) await fn(); // warm-up
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  return { p50: pct(times, 50), p99: pct(times, 99) };
}

async function get(base: string, p: string, key: string): Promise<any> {
  const res = await fetch(base + p, { headers: { authorization: `Bearer ${key}` } });
  const body = await res.json();
  if (res.status !== 200) throw new Error(`${p}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

async function measure(base: string, key: string) {
  const SLUG = '@toolshed-examples/text-tools/slugify';
  const routes: Record<string, string> = {
    trending_day: '/api/tools/trending?period=day',
    trending_week: '/api/tools/trending?period=week',
    trending_month: '/api/tools/trending?period=month',
    trending_all: '/api/tools/trending?period=all',
    list: '/api/tools?limit=20',
    search: '/api/tools/search?q=slug%20text',
    detail: `/api/tools/${SLUG}`,
    stats: `/api/tools/${SLUG}/stats`,
  };
  const out: Record<string, { p50: number; p99: number }> = {};
  for (const [name, p] of Object.entries(routes)) out[name] = await timed(N, async () => void (await get(base, p, key)));
  out.submit_and_poll = await timed(Math.min(N, 30), async () => {
    const res = await fetch(`${base}/api/tools/execute/${SLUG}?wait=false`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ params: { text: 'Hello World' } }),
    });
    const body = (await res.json()) as { executionId?: string; data?: { executionId: string } };
    const executionId = body.data?.executionId ?? body.executionId;
    if (res.status !== 202 || !executionId) throw new Error(`execute: ${res.status} ${JSON.stringify(body)}`);
    for (;;) {
      const e = await get(base, `/api/executions/${executionId}`, key);
      if (['succeeded', 'failed', 'timed_out'].includes(e.data.status)) return;
      await new Promise((r) => setTimeout(r, 10));
    }
  });
  return out;
}

async function chunked(total: number, fn: (from: number, n: number) => Promise<unknown>): Promise<void> {
  for (let from = 0; from < total; from += CHUNK) await fn(from, Math.min(CHUNK, total - from));
}

/** A year of data, by SQL of the shape of the service's own writes. Answers the seconds each part took. */
async function seed(db: Knex): Promise<Record<string, number>> {
  const took: Record<string, number> = {};
  const step = async (name: string, fn: () => Promise<unknown>) => {
    const t0 = performance.now();
    await fn();
    took[name] = Math.round((performance.now() - t0) / 100) / 10;
  };
  await step('packages_tools_users', async () => {
    await db.raw(
      `insert into packages (name, version, category, description, source, install_path)
       select 'seed-pkg-' || g, '1.0.0', (array['text-analysis','data-processing','automation','web-scraping','database'])[1 + g % 5], 'Seeded package ' || g, 'seed', '/nowhere'
         from generate_series(1, ?) g`,
      [V.packages],
    );
    await db.raw(
      `insert into tools (package_id, name, export_name, description, health_status, quality_score)
       select p.id, 'seedTool' || g, 'seedTool' || g, 'Seeded tool ' || g || ' that converts and formats records', 'HEALTHY', random()
         from generate_series(1, ?) g join lateral (select id from packages where name = 'seed-pkg-' || (1 + g % ?)) p on true`,
      [V.tools, V.packages],
    );
    await db.raw(`insert into users (username, tier) select 'seed_user_' || g, 'free' from generate_series(1, ?) g`, [V.users]);
    await db.raw('create temporary table seed_tools as select row_number() over (order by id) as n, id from tools');
    await db.raw(`create temporary table seed_users as select row_number() over (order by id) as n, id from users where username like 'seed_user_%'`);
    await db.raw('create index on seed_tools (n)');
    await db.raw('create index on seed_users (n)');
  });
  const nTools = Number((await db.raw('select count(*) as n from seed_tools')).rows[0].n);
  // Popular tools get most calls: tool number ⌈n·u³⌉ (u uniform), user uniform, time uniform over the year.
  await step('executions', () =>
    chunked(V.executions, (from, n) =>
      db.raw(
        `insert into executions (tool_id, user_id, origin, status, params, result, execution_time_ms, attempts, created_at, started_at, completed_at)
         select t.id, u.id, 'api', s.status, '{"text":"hello world"}'::jsonb,
                case when s.status = 'succeeded' then jsonb_build_object('value', repeat('x', 1000)) end,
                20 + (g % 300), 1, s.at, s.at, s.at + interval '50 milliseconds'
           from generate_series(?::bigint, ?::bigint) g
           cross join lateral (select now() - random() * interval '365 days' as at,
                                      case when random() < 0.9 then 'succeeded' else 'failed' end as status,
                                      1 + floor(power(random(), 3) * ?)::int as tn, 1 + floor(random() * ?)::int as un, g as gg) s
           join seed_tools t on t.n = s.tn join seed_users u on u.n = s.un`,
        [from + 1, from + n, nTools, V.users],
      ),
    ),
  );
  await step('events', () =>
    chunked(V.events, (from, n) =>
      db.raw(
        `insert into tool_events (tool_id, kind, weight, caller, created_at)
         select t.id, case when s.ok then 'execution_succeeded' else 'execution_failed' end, case when s.ok then 1 else 0.25 end,
                'user:' || u.id::text, s.at
           from generate_series(?::bigint, ?::bigint) g
           cross join lateral (select now() - random() * interval '365 days' as at, random() < 0.9 as ok,
                                      1 + floor(power(random(), 3) * ?)::int as tn, 1 + floor(random() * ?)::int as un, g as gg) s
           join seed_tools t on t.n = s.tn join seed_users u on u.n = s.un`,
        [from + 1, from + n, nTools, V.users],
      ),
    ),
  );
  await step('counters_and_stats', async () => {
    await db.raw(`update tools t set execution_count = t.execution_count + c.n
                    from (select tool_id, count(*) as n from executions group by tool_id) c where c.tool_id = t.id`);
    await db.raw(`insert into tool_stats_hourly as h (tool_id, hour, calls, succeeded, platform_failed)
                  select tool_id, date_trunc('hour', completed_at, 'UTC'), count(*), count(*) filter (where status = 'succeeded'), 0
                    from executions where completed_at > now() - interval '31 days' group by 1, 2
                  on conflict (tool_id, hour) do update set calls = h.calls + excluded.calls, succeeded = h.succeeded + excluded.succeeded`);
  });
  await step('vacuum_analyze', () => db.raw('vacuum analyze'));
  return took;
}

const size = async (db: Knex) => Number((await db.raw('select pg_database_size(current_database()) as n')).rows[0].n);
const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);

async function main() {
  const svc = await startBenchService({ SANDBOX: 'process', WORKER_CONCURRENCY: '4' });
  const base = svc.api.url;
  const out: Record<string, unknown> = { bench: 'scale', cpus: os.availableParallelism(), scale: SCALE, volumes: V, requests_per_route: N };
  const db = createDb(svc.databaseUrl, { max: 2 });
  try {
    await post(base, '/api/admin/packages', { source: `path:${TEXT_TOOLS_DIR}`, official: true }, svc.config.ADMIN_TOKEN);
    const { secret: key } = await createUserWithKey(db, { username: 'bench', tier: 'pro' });
    out.fresh_ms = await measure(base, key);
    const t0 = performance.now();
    out.seed_seconds = await seed(db);
    out.seed_total_seconds = Math.round((performance.now() - t0) / 1000);
    const sizeBefore = await size(db);
    out.seeded_ms = await measure(base, key);
    const fresh = out.fresh_ms as Record<string, { p50: number }>;
    const seeded = out.seeded_ms as Record<string, { p50: number }>;
    out.p50_ratio = Object.fromEntries(Object.keys(fresh).map((k) => [k, Math.round((seeded[k]!.p50 / fresh[k]!.p50) * 100) / 100]));

    const t1 = performance.now();
    const swept = { executions: 0, scenarioRuns: 0, events: 0, trendingHours: 0, trendingDays: 0, healthChecks: 0 };
    for (;;) {
      const r = await sweepRetention(db, svc.config);
      for (const k of Object.keys(swept) as (keyof typeof swept)[]) swept[k] += r[k];
      if (Object.values(r).every((n) => n === 0)) break;
    }
    out.retention = {
      swept,
      seconds: Math.round((performance.now() - t1) / 1000),
      days: { results: svc.config.RETENTION_RESULTS_DAYS, events: svc.config.RETENTION_EVENTS_DAYS },
    };
    // The space retention frees is reused by later rows once vacuumed; VACUUM FULL shows the steady size at once.
    await db.raw('vacuum full executions');
    await db.raw('vacuum full tool_events');
    const sizeAfter = await size(db);
    const millions = V.executions / 1e6;
    out.db_mb = { before_retention: mb(sizeBefore), after_retention: mb(sizeAfter) };
    out.db_mb_per_million_executions = { before_retention: Math.round(mb(sizeBefore) / millions), after_retention: Math.round(mb(sizeAfter) / millions) };
    out.after_retention_ms = await measure(base, key);
    console.log(JSON.stringify(out));
  } finally {
    await db.destroy();
    await svc.close();
  }
}

await main();
