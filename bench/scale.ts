/**
 * `npm run bench:scale` (issue 45): every public read route and an execution's submit-and-poll, fresh and with a
 * year of data, in the same run: two services with the same first day (every example package, 30 public collections,
 * a call of each tool), one of them then seeded; the routes are read from both in turn, so that the machine's load
 * falls on both alike. Then the retention sweep and the database's size per million executions after it.
 * Prints one JSON line.
 *
 * The year is seeded by SQL of the same shape as the service's own writes (bulk INSERT…SELECT generate_series into
 * the raw tables): packages and tools (their NOTIFY trigger included), users, final executions with a 1 KB result
 * spread over 365 days (and their tools' execution counts and hourly statistics for the last 31 days, as
 * finishExecution keeps them), trending events from those users (executions and collection adds), public collections
 * of five tools each, scenarios, batches and completed scenario runs with a transcript, and the scenarios' statistics.
 * For the bulk load the tool_events trending trigger and the collection_tools revision trigger are disabled; the
 * trending rollups are then built by trending_rebuild() (one INSERT…SELECT GROUP BY a table, the trigger's rules:
 * migrations/20261207050001, in key order since 20261208060001) and the triggers enabled again. As pg_restore loads
 * data: the executions and events side by side on two connections, their plain indexes (and the rollups') dropped
 * first and built again after by one sort each, and the big statements run with session_replication_role = replica
 * (no per-row foreign-key check: every id is read from its table) and memory for their sorts. Volumes are the issue's (10 M executions and events,
 * 100,000 tools in 10,000 packages, 50,000 users, 100,000 collections, 1 M scenario runs) times BENCH_SCALE (default 1).
 * Retention: the scheduled sweep (sweepRetention, batches of 1000) runs for BENCH_RETENTION_SECONDS (default 120) to
 * measure its rate, then the rest of the same rows are emptied or deleted by the same statements without the batch
 * limit (the sweep would take hours on this machine), and the size is taken after VACUUM FULL.
 * The sandbox is `process` (the guest code as a child process): the sandbox is not the subject.
 *
 * BENCH_MODE=queue measures the queue under a long transaction (memory over many calls: bench/memory.ts).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createDb, type Knex } from '../core/infra/db.js';
import { createUserWithKey } from '../core/auth/create-account.js';
import { sweepRetention, TRENDING_KEPT_HOURS } from '../core/repos/retention.js';
import { type BenchService, post, startBenchService, TEXT_TOOLS_DIR } from './service.js';

const SCALE = Number(process.env.BENCH_SCALE ?? 1);
const RETENTION_SECONDS = Number(process.env.BENCH_RETENTION_SECONDS ?? 120);
const N = Number(process.env.BENCH_SCALE_REQUESTS ?? 60);
const V = {
  executions: Math.round(10_000_000 * SCALE),
  events: Math.round(10_000_000 * SCALE),
  tools: Math.round(100_000 * SCALE),
  packages: Math.round(10_000 * SCALE),
  users: Math.round(50_000 * SCALE),
  collections: Math.round(100_000 * SCALE),
  scenario_runs: Math.round(1_000_000 * SCALE),
};
const CHUNK = 250_000;

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.max(0, Math.ceil((p / 100) * s.length) - 1)]! * 10) / 10;
}

/**
 * Each of `fns` n times, taken in turn (a, b, b, a, …), so that every one meets the same load of the machine: p50 and
 * p99 of each.
 */
async function timed(n: number, fns: (() => Promise<void>)[]): Promise<{ p50: number; p99: number }[]> {
  for (let i = 0; i < 3; i++) for (const fn of fns) await fn(); // warm-up
  const times: number[][] = fns.map(() => []);
  for (let i = 0; i < n; i++) {
    const order = fns.map((_, k) => k);
    if (i % 2 === 1) order.reverse();
    for (const k of order) {
      const t0 = performance.now();
      await fns[k]!();
      times[k]!.push(performance.now() - t0);
    }
  }
  return times.map((t) => ({ p50: pct(t, 50), p99: pct(t, 99) }));
}

async function get(base: string, p: string, key: string): Promise<any> {
  const res = await fetch(base + p, { headers: { authorization: `Bearer ${key}` } });
  const body = await res.json();
  if (res.status !== 200) throw new Error(`${p}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

/** A service the routes are read from, with the bench user's key and the admin token. */
interface Target {
  base: string;
  key: string;
  admin: string;
}

/** Every route of every target, the targets' requests taken in turn; one record of figures per target. */
async function measure(targets: Target[]) {
  const SLUG = '@toolshed-examples/text-tools/slugify';
  const routes: Record<string, [string, string?]> = {
    trending_day: ['/api/tools/trending?period=day'],
    trending_week: ['/api/tools/trending?period=week'],
    trending_month: ['/api/tools/trending?period=month'],
    trending_all: ['/api/tools/trending?period=all'],
    list: ['/api/tools?limit=20'],
    search: ['/api/tools/search?q=slug%20text'],
    detail: [`/api/tools/${SLUG}`],
    stats: [`/api/tools/${SLUG}/stats`],
    collections_list: ['/api/collections?limit=20'],
    collection_detail: ['/api/collections/bench-collection'],
    my_collections: ['/api/auth/me/collections?limit=20'],
    scenarios_list: ['/api/scenarios?limit=20'],
    scenarios_featured: ['/api/scenarios/featured'],
    batch_history: ['/api/collections/bench-collection/scenario-batches'],
    registry_servers: ['/v0.1/servers?limit=30'],
    operator: ['/api/admin/operations', 'admin'],
  };
  const out: Record<string, { p50: number; p99: number }>[] = targets.map(() => ({}));
  const put = (name: string, figures: { p50: number; p99: number }[]) => figures.forEach((f, k) => (out[k]![name] = f));
  for (const [name, [p, admin]] of Object.entries(routes)) {
    put(
      name,
      await timed(
        N,
        targets.map((x) => async () => void (await get(x.base, p, admin ? x.admin : x.key))),
      ),
    );
  }
  const submitAndPoll = async ({ base, key }: Target) => {
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
  };
  put(
    'submit_and_poll',
    await timed(
      Math.min(N, 30),
      targets.map((x) => () => submitAndPoll(x)),
    ),
  );
  return out;
}

async function chunked(total: number, fn: (from: number, n: number) => Promise<unknown>): Promise<void> {
  for (let from = 0; from < total; from += CHUNK) await fn(from, Math.min(CHUNK, total - from));
}

/**
 * A bulk statement as pg_restore --disable-triggers runs its data: in a transaction whose session_replication_role is
 * `replica`, so that no row fires the foreign-key checks (every id is read from its table) or a trigger; with memory
 * for its sorts and hashes. Only for tables no API cache listens to (executions, events, runs, the trending rollups).
 */
async function bulk(db: Knex, sql: string, bindings: unknown[] = []): Promise<void> {
  await db.transaction(async (trx) => {
    await trx.raw('set local session_replication_role = replica');
    await trx.raw(`set local work_mem = '256MB'`);
    await trx.raw(sql, bindings as never);
  });
}

/**
 * The table's plain indexes (not a constraint's, not unique: an ON CONFLICT may need those), dropped for a bulk load
 * and answered as their definitions, to be built again after it by one sort each, as pg_restore builds them.
 */
async function dropPlainIndexes(db: Knex, tables: string[]): Promise<string[]> {
  const { rows } = await db.raw(
    `select i.indexrelid::regclass::text as name, pg_get_indexdef(i.indexrelid) as def
       from pg_index i where i.indrelid = any(?::regclass[]) and not i.indisunique and not i.indisprimary
        and not exists (select 1 from pg_constraint c where c.conindid = i.indexrelid)`,
    [tables],
  );
  for (const r of rows as { name: string }[]) await db.raw(`drop index ${r.name}`);
  return (rows as { def: string }[]).map((r) => r.def);
}

async function createIndexes(db: Knex, defs: string[]): Promise<void> {
  // Two at a time (the pool's two connections), each with memory to sort in.
  const queue = [...defs];
  const one = async () => {
    for (let def = queue.shift(); def; def = queue.shift()) {
      const d = def;
      await db.transaction(async (trx) => {
        await trx.raw(`set local maintenance_work_mem = '512MB'`);
        await trx.raw(d);
      });
    }
  };
  await Promise.all([one(), one()]);
}

/**
 * The fresh service's own collections, scenario and batch (of the bench user), which the routes read: besides
 * bench-collection, 29 more public collections of the text tools, so that a first day already fills the pages the
 * seeded run reads (collections list 20, registry 30): fresh and seeded then build the same page and a ratio compares
 * the same work. Created now, by `bench`, they stay the newest and first by name once the year is seeded.
 */
async function benchFixtures(db: Knex, userId: string): Promise<void> {
  await db.raw(`insert into collections (uid, owner_id, name, description, is_public) values ('bench-collection', ?, 'Bench collection', 'Text tools', true)`, [
    userId,
  ]);
  await db.raw(`insert into collection_tools (collection_id, tool_id)
                select c.id, t.id from collections c, tools t where c.uid = 'bench-collection' and t.name = 'slugify'`);
  await db.raw(
    `insert into collections (uid, owner_id, name, description, is_public)
     select 'bench-page-' || lpad(g::text, 2, '0'), ?, 'Bench page ' || g, 'Text tools', true from generate_series(1, 29) g`,
    [userId],
  );
  await db.raw(`insert into collection_tools (collection_id, tool_id)
                select c.id, t.id from collections c join packages p on p.name = '@toolshed-examples/text-tools' join tools t on t.package_id = p.id
                 where c.uid like 'bench-page-%'`);
  // A first day's calls: each tool once, by the bench user (the trending trigger on: every period has a full page).
  await db.raw(`insert into tool_events (tool_id, kind, weight, caller, created_at) select id, 'execution_succeeded', 1, 'user:' || ?, now() from tools`, [
    userId,
  ]);
  await db.raw(`insert into scenarios (collection_id, created_by, prompt, name, tags)
                select id, owner_id, 'Slugify Hello World', 'Bench scenario', '{bench}' from collections where uid = 'bench-collection'`);
  await db.raw(`with b as (insert into scenario_batches (collection_id, user_id, total, completed_at)
                           select id, owner_id, 3, now() from collections where uid = 'bench-collection' returning id, user_id)
                insert into scenario_runs (scenario_id, user_id, batch_id, status, success, verdict, steps, created_at, started_at, completed_at)
                select s.id, b.user_id, b.id, 'completed', true, 'pass', '[]'::json, now(), now(), now()
                  from b, scenarios s, generate_series(1, 3) where s.name = 'Bench scenario'`);
}

/** A year of data, by SQL of the shape of the service's own writes. Answers the seconds each part took. */
async function seed(db: Knex): Promise<Record<string, number>> {
  const took: Record<string, number> = {};
  const step = async (name: string, fn: () => Promise<unknown>) => {
    const t0 = performance.now();
    await fn();
    took[name] = Math.round((performance.now() - t0) / 100) / 10;
    console.error(`seeded ${name} in ${took[name]} s`);
  };
  await db.raw('alter table tool_events disable trigger tool_events_trending');
  await db.raw('alter table collection_tools disable trigger collection_tools_revision');
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
    await db.raw('create unlogged table seed_tools as select row_number() over (order by id) as n, id from tools');
    await db.raw(`create unlogged table seed_users as select row_number() over (order by id) as n, id from users where username like 'seed_user_%'`);
    await db.raw('create index on seed_tools (n)');
    await db.raw('create index on seed_users (n)');
  });
  const nTools = Number((await db.raw('select count(*) as n from seed_tools')).rows[0].n);
  // The executions and the events are loaded side by side (two connections), their plain indexes dropped first and
  // built again after.
  const dropped = await dropPlainIndexes(db, ['executions', 'tool_events']);
  // Popular tools get most calls: tool number ⌈n·u³⌉ (u uniform), user uniform, time uniform over the year.
  const executions = step('executions', () =>
    chunked(V.executions, (from, n) =>
      bulk(
        db,
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
  const events = step('events', () =>
    chunked(V.events, (from, n) =>
      bulk(
        db,
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
  await Promise.all([executions, events]);
  await step('indexes', () => createIndexes(db, dropped));
  // Public collections of five tools each, by users, over the year; each add is a collection_add event of its owner.
  await step('collections', async () => {
    await chunked(V.collections, (from, n) =>
      db.raw(
        `insert into collections (uid, owner_id, name, description, is_public, created_at, updated_at)
         select 'seed-c-' || g, u.id, 'Seeded collection ' || g, 'Tools for records', true, s.at, s.at
           from generate_series(?::bigint, ?::bigint) g
           cross join lateral (select now() - random() * interval '365 days' as at, 1 + floor(random() * ?)::int as un, g as gg) s
           join seed_users u on u.n = s.un`,
        [from + 1, from + n, V.users],
      ),
    );
    await db.raw(
      `insert into collection_tools (collection_id, tool_id, added_at)
                  select c.id, t.id, c.created_at from collections c cross join generate_series(1, 5) k
                    cross join lateral (select 1 + floor(power(random(), 3) * ?)::int as tn, k as kk, c.id as cc) s
                    join seed_tools t on t.n = s.tn
                   where c.uid like 'seed-c-%' on conflict do nothing`,
      [nTools],
    );
    await db.raw(`insert into tool_events (tool_id, kind, weight, user_id, created_at)
                  select ct.tool_id, 'collection_add', 3, c.owner_id, ct.added_at
                    from collection_tools ct join collections c on c.id = ct.collection_id where c.uid like 'seed-c-%'
                  on conflict do nothing`);
  });
  // A scenario for every fifth collection; batches of ten completed runs (one of every ten a failure) over the year,
  // 365 of them the bench collection's (one a day); then the scenarios' statistics, as recordRunStats keeps them.
  await step('scenario_runs', async () => {
    await db.raw(`insert into scenarios (collection_id, created_by, prompt, name, tags, created_at)
                  select c.id, c.owner_id, 'Convert the records of ' || c.name, 'Scenario of ' || c.uid, '{seeded}', c.created_at
                    from collections c where c.uid like 'seed-c-%' and c.uid::text ~ '[05]$'`);
    await db.raw('create unlogged table seed_scenarios as select row_number() over (order by id) as n, id, collection_id from scenarios');
    await db.raw('create index on seed_scenarios (n)');
    const nScenarios = Number((await db.raw('select count(*) as n from seed_scenarios')).rows[0].n);
    const batches = Math.ceil(V.scenario_runs / 10);
    await db.raw(
      `insert into scenario_batches (collection_id, user_id, total, created_at, completed_at)
       select sc.collection_id, u.id, 10, s.at, s.at + interval '2 minutes'
         from generate_series(1, ?) g
         cross join lateral (select now() - random() * interval '365 days' as at, 1 + floor(random() * ?)::int as sn,
                                    1 + floor(random() * ?)::int as un, g as gg) s
         join seed_scenarios sc on sc.n = s.sn join seed_users u on u.n = s.un
       union all
       select c.id, c.owner_id, 10, now() - make_interval(days => d), now() - make_interval(days => d) + interval '2 minutes'
         from collections c cross join generate_series(1, 365) d where c.uid = 'bench-collection'`,
      [Math.max(0, batches - 365), nScenarios, V.users],
    );
    await db.raw(`create unlogged table seed_batches as
                  select b.id, b.user_id, b.created_at, s.id as scenario_id
                    from scenario_batches b join lateral (select id from scenarios where collection_id = b.collection_id limit 1) s on true`);
    await bulk(
      db,
      `insert into scenario_runs (scenario_id, user_id, batch_id, batch_seq, status, success, verdict, reason, steps, final_text,
                                             created_at, started_at, completed_at)
                  select b.scenario_id, b.user_id, b.id, k, 'completed', k <> 10, case when k <> 10 then 'pass' else 'fail' end,
                         'The agent called the tool and answered', json_build_array(json_build_object('type', 'tool_call', 'tool', 'seedTool1',
                         'input', json_build_object('text', repeat('r', 200)), 'output', repeat('o', 600))),
                         'Done', b.created_at, b.created_at, b.created_at + make_interval(secs => k * 10)
                    from seed_batches b cross join generate_series(1, 10) k`,
    );
    await db.raw(`update scenarios s set total_runs = st.n, last_run_at = st.last_at, last_run_status = 'pass', consecutive_passes = 1,
                         quality_score = (st.passes + 1)::float8 / (st.n + 2)
                    from (select scenario_id, count(*) as n, count(*) filter (where success) as passes, max(completed_at) as last_at
                            from scenario_runs group by 1) st where st.scenario_id = s.id`);
  });
  await step('counters_and_stats', async () => {
    await db.raw(`update tools t set execution_count = t.execution_count + c.n
                    from (select tool_id, count(*) as n from executions group by tool_id) c where c.tool_id = t.id`);
    await db.raw(`insert into tool_stats_hourly as h (tool_id, hour, calls, succeeded, platform_failed)
                  select tool_id, date_trunc('hour', completed_at, 'UTC'), count(*), count(*) filter (where status = 'succeeded'), 0
                    from executions where completed_at > now() - interval '31 days' group by 1, 2
                  on conflict (tool_id, hour) do update set calls = h.calls + excluded.calls, succeeded = h.succeeded + excluded.succeeded`);
  });
  await step('trending_rebuild', async () => {
    const rollupIndexes = await dropPlainIndexes(db, ['trending_hourly', 'trending_daily', 'trending_totals', 'trending_period_scores']);
    await bulk(db, 'select trending_rebuild()');
    await createIndexes(db, rollupIndexes);
    await db.raw('alter table tool_events enable trigger tool_events_trending');
    await db.raw('alter table collection_tools enable trigger collection_tools_revision');
  });
  // The loader's own numbering tables (unlogged, so that both connections see them) go before the size is taken.
  await db.raw('drop table seed_tools, seed_users, seed_scenarios, seed_batches');
  await step('vacuum_analyze', () => db.raw('vacuum analyze'));
  return took;
}

/** What the scheduled sweep deletes, without its batch limit (the same conditions): the rest once its rate is measured. */
async function retentionUnbatched(db: Knex, days: { RETENTION_RESULTS_DAYS: number; RETENTION_TRANSCRIPTS_DAYS: number; RETENTION_EVENTS_DAYS: number }) {
  const n = async (sql: string, b: unknown[]) => (await db.raw(sql, b as never)).rowCount ?? 0;
  return {
    executions: await n(
      `update executions set params = '{}'::jsonb, result = null, purged_at = now()
        where completed_at is not null and purged_at is null and completed_at < now() - make_interval(days => ?)`,
      [days.RETENTION_RESULTS_DAYS],
    ),
    scenarioRuns: await n(
      `update scenario_runs set steps = '[]'::jsonb, purged_at = now()
        where completed_at is not null and purged_at is null and completed_at < now() - make_interval(days => ?)`,
      [days.RETENTION_TRANSCRIPTS_DAYS],
    ),
    events: await n('delete from tool_events where created_at < now() - make_interval(days => ?)', [days.RETENTION_EVENTS_DAYS]),
    trendingHours: await n(
      `delete from trending_hourly where hour < date_trunc('hour', now(), 'UTC') - make_interval(hours => ?)
          and hour < coalesce((select min(start) from trending_windows), 'infinity')`,
      [TRENDING_KEPT_HOURS],
    ),
    trendingDays: await n(`delete from trending_daily where day < date_trunc('day', now(), 'UTC') - make_interval(hours => ?)`, [TRENDING_KEPT_HOURS + 24]),
  };
}

const size = async (db: Knex) => Number((await db.raw('select pg_database_size(current_database()) as n')).rows[0].n);
const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);

/** A service's first day: every example package (61 tools, so that its list, search and trending pages are as full as
 * a seeded one's), the bench user and benchFixtures. */
async function firstDay(svc: BenchService, db: Knex): Promise<Target> {
  const base = svc.api.url;
  const admin = svc.config.ADMIN_TOKEN;
  const examples = path.dirname(TEXT_TOOLS_DIR);
  for (const dir of (await fs.readdir(examples)).sort()) {
    await post(base, '/api/admin/packages', { source: `path:${path.join(examples, dir)}`, official: true }, admin);
  }
  const { secret: key, user } = await createUserWithKey(db, { username: 'bench', tier: 'pro' });
  await benchFixtures(db, user.id);
  return { base, key, admin };
}

/**
 * The seeded service and a fresh one side by side: both get the same first day, one is then given a year; the routes
 * are read from both in turn (a, b, b, a, …), so that a ratio compares them under the same load of the machine.
 */
async function scaleMain() {
  const svc = await startBenchService({ SANDBOX: 'process', WORKER_CONCURRENCY: '4' });
  let freshSvc: BenchService | undefined;
  let freshDb: Knex | undefined;
  const out: Record<string, unknown> = { bench: 'scale', cpus: os.availableParallelism(), scale: SCALE, volumes: V, requests_per_route: N };
  // Two loading connections side by side, and spares: a loaded machine may be slow to hand one back.
  const db = createDb(svc.databaseUrl, { max: 4 });
  try {
    const seededTarget = await firstDay(svc, db);
    const t0 = performance.now();
    out.seed_seconds = await seed(db);
    out.seed_total_seconds = Math.round((performance.now() - t0) / 1000);
    out.rows = (
      await db.raw(`select relname, n_live_tup from pg_stat_user_tables
                     where relname in ('executions','tool_events','tools','packages','users','collections','collection_tools','scenarios',
                                       'scenario_batches','scenario_runs','trending_hourly','trending_daily','trending_last_seen','trending_period_scores')
                     order by relname`)
    ).rows.map((r: { relname: string; n_live_tup: string }) => [r.relname, Number(r.n_live_tup)]);
    // The seeded tools reach the search index by the service's own sync (NOTIFY, then a re-read): measured only once
    // the index holds them, so that search is timed on a year's index, not the first day's.
    const indexed = async () => Number((await get(seededTarget.base, '/api/tools/search?q=seeded%20records&limit=1', seededTarget.key)).results.total);
    const tIndex = performance.now();
    while ((out.search_index_seeded_tools = await indexed()) < V.tools) {
      if (performance.now() - tIndex > 600_000) throw new Error(`the search index holds ${out.search_index_seeded_tools} of ${V.tools} seeded tools`);
      await new Promise((r) => setTimeout(r, 1000));
    }
    const sizeBefore = await size(db);
    freshSvc = await startBenchService({ SANDBOX: 'process', WORKER_CONCURRENCY: '4' });
    freshDb = createDb(freshSvc.databaseUrl, { max: 1 });
    const freshTarget = await firstDay(freshSvc, freshDb);
    console.error('measuring fresh and seeded');
    [out.fresh_ms, out.seeded_ms] = await measure([freshTarget, seededTarget]);
    const fresh = out.fresh_ms as Record<string, { p50: number }>;
    const seeded = out.seeded_ms as Record<string, { p50: number }>;
    out.p50_ratio = Object.fromEntries(Object.keys(fresh).map((k) => [k, Math.round((seeded[k]!.p50 / fresh[k]!.p50) * 100) / 100]));
    console.error(JSON.stringify({ seeded: out.seeded_ms, ratio: out.p50_ratio }));
    const hold = Number(process.env.BENCH_SCALE_HOLD_SECONDS ?? 0); // keeps the seeded service up, to EXPLAIN its queries
    if (hold > 0) {
      console.error(`holding ${svc.databaseUrl} at ${seededTarget.base} for ${hold} s`);
      await new Promise((r) => setTimeout(r, hold * 1000));
    }

    // The scheduled sweep for a while (its rate), then the rest by the same conditions unbatched.
    const t1 = performance.now();
    const swept = { executions: 0, scenarioRuns: 0, events: 0, trendingHours: 0, trendingDays: 0, healthChecks: 0 };
    let done = false;
    while (performance.now() - t1 < RETENTION_SECONDS * 1000) {
      const r = await sweepRetention(db, svc.config, 20);
      for (const k of Object.keys(swept) as (keyof typeof swept)[]) swept[k] += r[k];
      if (Object.values(r).every((n) => n === 0)) {
        done = true;
        break;
      }
    }
    const sweptSeconds = (performance.now() - t1) / 1000;
    const t2 = performance.now();
    const rest = done ? null : await retentionUnbatched(db, svc.config);
    out.retention = {
      swept,
      sweep_seconds: Math.round(sweptSeconds),
      sweep_rows_per_second: Math.round(Object.values(swept).reduce((a, b) => a + b, 0) / sweptSeconds),
      rest_unbatched: rest,
      rest_seconds: Math.round((performance.now() - t2) / 1000),
      days: { results: svc.config.RETENTION_RESULTS_DAYS, transcripts: svc.config.RETENTION_TRANSCRIPTS_DAYS, events: svc.config.RETENTION_EVENTS_DAYS },
    };
    // The space retention frees is reused by later rows once vacuumed; VACUUM FULL shows the steady size at once.
    for (const t of ['executions', 'tool_events', 'scenario_runs', 'trending_hourly', 'trending_daily']) await db.raw(`vacuum full ${t}`);
    const sizeAfter = await size(db);
    const millions = V.executions / 1e6;
    out.db_mb = { before_retention: mb(sizeBefore), after_retention: mb(sizeAfter) };
    out.db_mb_per_million_executions = { before_retention: Math.round(mb(sizeBefore) / millions), after_retention: Math.round(mb(sizeAfter) / millions) };
    [out.fresh_at_after_retention_ms, out.after_retention_ms] = await measure([freshTarget, seededTarget]);
    out.total_seconds = Math.round((performance.now() - t0) / 1000);
    console.log(JSON.stringify(out));
  } finally {
    await db.destroy();
    await svc.close();
    await freshDb?.destroy();
    await freshSvc?.close();
  }
}

/**
 * BENCH_MODE=queue: Graphile Worker's dequeue (SKIP LOCKED) with and without a transaction held open for
 * BENCH_QUEUE_SECONDS (default 60) by another client. A runner of a no-op task (bench_noop, concurrency 4) on the
 * service's database, jobs added 500 at a time to keep 2,000 waiting; jobs/s over each phase and its first and last
 * tenth. Phases: none; an idle `BEGIN; SELECT 1;` (READ COMMITTED: after its statement it holds no snapshot, so
 * vacuum is not held back); `BEGIN; SELECT txid_current();` (a transaction with an id, as any that wrote a row: the
 * xmin horizon stays at it, dead job rows pile up). The metric toolshed_db_oldest_transaction_age_seconds is read
 * from the same query the API's /metrics uses, at the end of each phase.
 */
async function queueMain() {
  const { run } = await import('graphile-worker');
  const { oldestTransactionSeconds } = await import('../core/repos/operations.js');
  const seconds = Number(process.env.BENCH_QUEUE_SECONDS ?? 60);
  const svc = await startBenchService({ SANDBOX: 'process', WORKER_CONCURRENCY: '2' });
  const db = createDb(svc.databaseUrl, { max: 4 });
  let done = 0;
  const runner = await run({
    connectionString: svc.databaseUrl,
    concurrency: 4,
    noHandleSignals: true,
    pollInterval: 1000,
    taskList: {
      bench_noop: async () => {
        done++;
      },
    },
  });
  const waiting = async () =>
    Number(
      (
        await db.raw(`select count(*) as n from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
                      where t.identifier = 'bench_noop'`)
      ).rows[0].n,
    );
  const phase = async (name: string, hold?: string) => {
    const holder = hold ? createDb(svc.databaseUrl, { max: 1 }) : undefined;
    const trx = holder ? await holder.transaction() : undefined;
    if (trx && hold) await trx.raw(hold);
    const t0 = performance.now();
    const marks: { t: number; done: number }[] = [];
    const start = done;
    while (performance.now() - t0 < seconds * 1000) {
      if ((await waiting()) < 2000) await db.raw(`select graphile_worker.add_job('bench_noop', '{}'::json) from generate_series(1, 500)`);
      marks.push({ t: performance.now() - t0, done: done - start });
      await new Promise((r) => setTimeout(r, 100));
    }
    const rate = (from: number, to: number) => {
      const a = marks.find((m) => m.t >= from * seconds * 1000) ?? marks[0]!;
      const b = [...marks].reverse().find((m) => m.t <= to * seconds * 1000) ?? marks[marks.length - 1]!;
      return Math.round(((b.done - a.done) / Math.max(0.001, (b.t - a.t) / 1000)) * 10) / 10;
    };
    const oldest = await oldestTransactionSeconds(db);
    const dead = (await db.raw(`select n_dead_tup from pg_stat_user_tables where schemaname = 'graphile_worker' and relname = '_private_jobs'`)).rows[0]
      ?.n_dead_tup;
    await trx?.commit();
    await holder?.destroy();
    // Let vacuum catch up between phases.
    await db.raw('vacuum graphile_worker._private_jobs');
    return {
      phase: name,
      jobs_per_second: rate(0, 1),
      first_tenth: rate(0, 0.1),
      last_tenth: rate(0.9, 1),
      oldest_transaction_seconds: oldest,
      dead_job_rows: Number(dead),
    };
  };
  try {
    const out = {
      bench: 'scale:queue',
      cpus: os.availableParallelism(),
      seconds,
      phases: [
        await phase('no open transaction'),
        await phase('idle BEGIN; SELECT 1;', 'select 1'),
        await phase('BEGIN; SELECT txid_current();', 'select txid_current()'),
      ],
    };
    console.log(JSON.stringify(out));
  } finally {
    await runner.stop();
    await db.destroy();
    await svc.close();
  }
}

const MODE = process.env.BENCH_MODE ?? 'scale';
if (MODE === 'scale') await scaleMain();
else if (MODE === 'queue') await queueMain();
else throw new Error(`BENCH_MODE: scale or queue, not ${MODE} (memory: npm run bench:memory)`);
