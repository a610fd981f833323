/**
 * Trending from rollups (issue 45): the answers read from trending_hourly / trending_totals (kept by the tool_events
 * trigger) are those of the raw computation over the events (one weight per caller and tool per period, a collection
 * add once per user, ratings and reviews each), in whole UTC hours, for every period; also when time passes over a
 * period's edge, for events written concurrently and out of order, and through the HTTP route.
 */
import test from 'ava';
import path from 'node:path';
import { trendingScores } from '../core/repos/feedback.js';
import { sweepRetention } from '../core/repos/retention.js';
import { TRENDING_PERIODS, type TrendingPeriod } from '../core/tools/scoring.js';
import { EXAMPLES_DIR, FIXTURES_DIR, startService, type Service } from './helpers/service.js';

let svc: Service;
let toolIds: string[] = [];
const userIds: string[] = [];
test.before(async () => {
  svc = await startService({ sandbox: 'process' });
  for (const source of [path.join(EXAMPLES_DIR, 'color-tools'), path.join(FIXTURES_DIR, 'packages', 'echo-tools')]) {
    const res = await svc.importPackage(`path:${source}`);
    if (res.status !== 201) throw new Error(res.text);
  }
  toolIds = (await svc.api.deps.db('tools').select('id').orderBy('id')).map((r: { id: string }) => r.id).slice(0, 6);
  for (let i = 0; i < 4; i++) userIds.push((await svc.createUser()).id);
});
test.after.always(() => svc?.close());

const PERIODS = Object.keys(TRENDING_PERIODS) as TrendingPeriod[];

/** The raw computation (the route's before the rollups), its period in whole UTC hours ending at `at`. */
async function rawScores(period: TrendingPeriod, at: Date): Promise<Map<string, number>> {
  const days = TRENDING_PERIODS[period];
  const { rows } = await svc.api.deps.db.raw(
    `select tool_id, sum(weight)::float8 as score from (
       select e.tool_id, max(e.weight) as weight from tool_events e
        where e.tool_id = any(?::uuid[])
          and (?::int is null or date_trunc('hour', e.created_at, 'UTC') > date_trunc('hour', ?::timestamptz, 'UTC') - make_interval(hours => ?::int * 24))
        group by e.tool_id,
                 case when e.kind = 'collection_add' and e.user_id is not null then 'u' || e.user_id::text
                      when e.kind in ('execution_succeeded', 'execution_failed') and e.caller is not null then 'x' || e.caller
                      else 'e' || e.id::text end) g
      group by tool_id`,
    [toolIds, days, at.toISOString(), days],
  );
  return new Map((rows as { tool_id: string; score: number }[]).map((r) => [r.tool_id, r.score]));
}

async function rolledScores(period: TrendingPeriod, at?: Date): Promise<Map<string, number>> {
  const rows = await trendingScores(svc.api.deps.db, { period, limit: 1000, at });
  return new Map(rows.filter((r) => toolIds.includes(r.tool_id)).map((r) => [r.tool_id, r.score]));
}

function assertSame(t: import('ava').ExecutionContext, rolled: Map<string, number>, raw: Map<string, number>, label: string) {
  t.deepEqual([...rolled.keys()].sort(), [...raw.keys()].sort(), `${label}: the same tools`);
  for (const [id, score] of raw) t.true(Math.abs((rolled.get(id) ?? 0) - score) < 1e-9, `${label}: ${id} ${rolled.get(id)} vs ${score}`);
}

/** A small deterministic generator (the same events every run). */
function lcg(seed: number) {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

const HOUR = 3600_000;

test.serial('the rollups answer as the raw events do, for every period, now and as time passes over each period edge', async (t) => {
  const db = svc.api.deps.db;
  const rnd = lcg(45);
  const now = Date.now();
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)]!;
  // 600 events over 40 days, written in random order (not by time), a third of them at once; callers and users few
  // enough that each repeats across periods; some exactly on the hour that is a period's edge.
  const events = Array.from({ length: 600 }, (_, i) => {
    const ageHours = i % 10 === 0 ? pick([23, 24, 167, 168, 719, 720]) : rnd() * 24 * 40;
    const created_at = new Date(Math.floor((now - ageHours * HOUR) / HOUR) * HOUR + (i % 10 === 0 ? 0 : Math.floor(rnd() * HOUR)));
    const tool_id = pick(toolIds);
    const r = rnd();
    if (r < 0.45) return { tool_id, kind: 'execution_succeeded', weight: 1, caller: pick(['user:a', 'user:b', 'ip:1.2.3.4', 'ip:5.6.7.8']), created_at };
    if (r < 0.7) return { tool_id, kind: 'execution_failed', weight: 0.25, caller: pick(['user:a', 'user:b', 'ip:1.2.3.4', 'ip:9.9.9.9']), created_at };
    if (r < 0.8) return { tool_id, kind: 'collection_add', weight: 3, user_id: pick(userIds), created_at };
    if (r < 0.9) return { tool_id, kind: 'rating', weight: pick([0.6, 1.2, 1.8, 2.4, 3]), created_at };
    if (r < 0.95) return { tool_id, kind: 'review', weight: 2, created_at };
    return { tool_id, kind: 'execution_succeeded', weight: 1, created_at }; // an old row with no caller: weighs alone
  });
  // The collection-add index allows one row per user, tool and UTC day; the others do nothing, as in the product.
  const insertOne = (e: (typeof events)[number]) =>
    db.raw(`insert into tool_events (tool_id, kind, weight, caller, user_id, created_at) values (?, ?, ?, ?, ?, ?) on conflict do nothing`, [
      e.tool_id,
      e.kind,
      e.weight,
      'caller' in e ? (e.caller ?? null) : null,
      'user_id' in e ? (e.user_id ?? null) : null,
      e.created_at,
    ]);
  for (const e of events.slice(0, 400)) await insertOne(e);
  await Promise.all(events.slice(400).map(insertOne));

  for (const offsetHours of [0, 1, 23, 24, 25, 24 * 7, 24 * 7 + 1, 24 * 30, 24 * 30 + 5]) {
    const at = new Date(now + offsetHours * HOUR);
    for (const period of PERIODS) {
      assertSame(t, await rolledScores(period, at), await rawScores(period, at), `${period} +${offsetHours}h`);
    }
  }
  // A caller who succeeded 8 days ago and failed yesterday: 0.25 in the week, 1 in the month.
  const [tool] = toolIds;
  const before = { week: (await rolledScores('week')).get(tool!) ?? 0, month: (await rolledScores('month')).get(tool!) ?? 0 };
  await db('tool_events').insert({ tool_id: tool, kind: 'execution_succeeded', weight: 1, caller: 'ip:8.8.8.8', created_at: new Date(now - 8 * 24 * HOUR) });
  await db('tool_events').insert({ tool_id: tool, kind: 'execution_failed', weight: 0.25, caller: 'ip:8.8.8.8', created_at: new Date(now - 24 * HOUR) });
  t.is(((await rolledScores('week')).get(tool!) ?? 0) - before.week, 0.25);
  t.is(((await rolledScores('month')).get(tool!) ?? 0) - before.month, 1);
  for (const period of PERIODS) assertSame(t, await rolledScores(period), await rawScores(period, new Date()), `${period} after the boundary caller`);

  // The route answers the same, rounded to two decimals, best first.
  for (const period of PERIODS) {
    const res = await svc.request('GET', `/api/tools/trending?period=${period}&limit=100`);
    t.is(res.status, 200);
    const raw = await rawScores(period, new Date());
    const served = (res.body.data as { id: string; trendingScore: number }[]).filter((x) => toolIds.includes(x.id));
    t.deepEqual(
      served.map((x) => [x.id, x.trendingScore]),
      [...raw.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([id, s]) => [id, Math.round(s * 100) / 100]),
      period,
    );
  }
});

test.serial(
  'a period window last advanced hours ago moves on at the next request and answers as the raw events; a retention sweep changes nothing',
  async (t) => {
    const db = svc.api.deps.db;
    const rnd = lcg(7);
    const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)]!;
    const event = (ageHours: number) => ({
      tool_id: pick(toolIds),
      kind: rnd() < 0.6 ? 'execution_succeeded' : 'execution_failed',
      weight: 0,
      caller: pick(['user:a', 'user:c', 'ip:7.7.7.7']),
      created_at: new Date(Date.now() - ageHours * HOUR),
    });
    const insert = async (n: number, maxAgeHours: number) => {
      for (let i = 0; i < n; i++) {
        const e = event(rnd() * maxAgeHours);
        await db('tool_events').insert({ ...e, weight: e.kind === 'execution_succeeded' ? 1 : 0.25 });
      }
    };
    // As if each window had last been advanced `lag` hours ago (its scores the sum of its hours from then on), with
    // events arriving since; then a request moves it over the hours that left it (some of them a whole period).
    for (const lag of [1, 5, 23, 30, 170, 800]) {
      await db.transaction(async (trx) => {
        await trx.raw('select pg_advisory_xact_lock(4520261207)');
        await trx.raw(`update trending_windows set start = date_trunc('hour', now(), 'UTC') - make_interval(hours => hours - 1 + ?)`, [lag]);
        await trx.raw('delete from trending_period_scores');
        await trx.raw(`insert into trending_period_scores (period, tool_id, score)
                     select w.period, x.tool_id, sum(x.score) from trending_windows w join trending_hourly x on x.hour >= w.start
                      group by 1, 2 having sum(x.score) <> 0`);
      });
      await insert(15, 24 * 32);
      for (const period of PERIODS) assertSame(t, await rolledScores(period), await rawScores(period, new Date()), `${period} lag ${lag}h`);
      const { rows } = await db.raw(
        `select count(*)::int as n from trending_windows where start = date_trunc('hour', now(), 'UTC') - make_interval(hours => hours - 1)`,
      );
      t.is(rows[0].n, 3, `lag ${lag}h: every window starts at its period's first hour`);
    }

    const before = Object.fromEntries(await Promise.all(PERIODS.map(async (p) => [p, [...(await rolledScores(p)).entries()].sort()] as const)));
    const swept = await sweepRetention(db, { RETENTION_RESULTS_DAYS: 30, RETENTION_TRANSCRIPTS_DAYS: 90, RETENTION_EVENTS_DAYS: 31 });
    t.true(swept.events > 0 && swept.trendingHours > 0, `the sweep deleted old events and hours: ${JSON.stringify(swept)}`);
    for (const period of PERIODS) t.deepEqual([...(await rolledScores(period)).entries()].sort(), before[period], `${period} after the retention sweep`);
    // New events after the sweep still add to every period as the raw computation over the events kept says.
    await insert(10, 20);
    for (const period of ['day', 'week', 'month'] as const)
      assertSame(t, await rolledScores(period), await rawScores(period, new Date()), `${period} after the sweep`);
  },
);
