/**
 * tool_stats_*: each tool's calls, successes, run times and error codes per UTC hour, kept by finishExecution in the
 * statement that makes an execution final (TOOL_STATS_ROLLUP), so that reading a tool's figures over 24 h, 7 d or
 * 30 d sums at most 720 hourly rows per table and never scans executions. Every final execution counts once —
 * whatever its origin (api, mcp, agent, scenario) and whoever decided it (the worker, the reaper, a shutdown) — except
 * a cancelled one (error CANCELLED, core/executions/cancel.ts): its caller stopped it, so it is neither a call the tool
 * decided nor a failure of the platform's, and it is not counted at all; run
 * times are those recorded (an execution failed before it ran has none). See migrations/20261130020001.
 */
import type { Db } from '../infra/db.js';
import type { ExecutionErrorCode } from '../executions/execution-errors.js';

/**
 * Failures that are the platform's, not the tool's: the sandbox failed, the worker was lost or shut down mid-call, the
 * tool was deleted before it ran, or the code is not one we know. They count as calls and under their code, but not
 * against the tool's success rate (succeeded / (calls − platformFailed)).
 */
export const PLATFORM_ERROR_CODES: readonly ExecutionErrorCode[] = ['SANDBOX_ERROR', 'WORKER_LOST', 'WORKER_SHUTDOWN', 'NOT_FOUND', 'INTERNAL'];
const PLATFORM_CODES_SQL = PLATFORM_ERROR_CODES.map((c) => `'${c}'`).join(', ');

/** A success rate over the calls the tool decided: null when it decided none. */
export function successRate(t: { calls: number; succeeded: number; platformFailed: number }): number | null {
  const decided = t.calls - t.platformFailed;
  return decided > 0 ? t.succeeded / decided : null;
}

/**
 * CTEs to append after `u` (the finished execution: tool_id, status, error, execution_time_ms, completed_at). Each is
 * an upsert that adds to a counter row, which stays right when many executions of one tool finish at once.
 */
export const TOOL_STATS_ROLLUP = `
  , us as (select * from u where coalesce(error->>'code', '') <> 'CANCELLED')
  , ts_calls as (
      insert into tool_stats_hourly as h (tool_id, hour, calls, succeeded, platform_failed)
      select tool_id, date_trunc('hour', completed_at, 'UTC'), 1, (status = 'succeeded')::int,
             (status <> 'succeeded' and coalesce(error->>'code', 'UNKNOWN') in (${PLATFORM_CODES_SQL}))::int from us
      on conflict (tool_id, hour) do update
        set calls = h.calls + 1, succeeded = h.succeeded + excluded.succeeded, platform_failed = h.platform_failed + excluded.platform_failed)
  , ts_latency as (
      insert into tool_stats_latency as l (tool_id, hour, bucket_ms, count)
      select tool_id, date_trunc('hour', completed_at, 'UTC'), tool_latency_bucket(execution_time_ms), 1
        from us where execution_time_ms is not null
      on conflict (tool_id, hour, bucket_ms) do update set count = l.count + 1)
  , ts_errors as (
      insert into tool_stats_errors as e (tool_id, hour, code, count)
      select tool_id, date_trunc('hour', completed_at, 'UTC'), coalesce(error->>'code', 'UNKNOWN'), 1
        from us where status <> 'succeeded'
      on conflict (tool_id, hour, code) do update set count = e.count + 1)`;

/** A window is this many whole UTC hours, the current one included. */
export const STATS_WINDOWS = { '24h': 24, '7d': 24 * 7, '30d': 24 * 30 } as const;
export type StatsWindow = keyof typeof STATS_WINDOWS;

/** How many error codes a window lists. */
export const TOP_ERRORS = 5;

export interface ToolWindowStats {
  window: StatsWindow;
  calls: number;
  succeeded: number;
  /** Failures that were the platform's (PLATFORM_ERROR_CODES), not the tool's. */
  platformFailed: number;
  /** Ascending run-time buckets (ms) with how many executions fell in each. */
  latency: { bucketMs: number; count: number }[];
  /** Failures by error code, most frequent first (then by code), at most TOP_ERRORS. */
  topErrors: { code: string; count: number }[];
}

const WINDOW_NAMES = Object.keys(STATS_WINDOWS) as StatsWindow[];

/**
 * One scan of the longest window: a column per window summing `expr` over its hours (the hour of `at` and those
 * before it). `x.hour` and `b.until` are the row's hour and the last hour.
 */
const perWindow = (expr: string) =>
  WINDOW_NAMES.map((w) => `coalesce(sum(${expr}) filter (where x.hour > b.until - make_interval(hours => ${STATS_WINDOWS[w]})), 0)::int as "${w}"`).join(', ');
const LONGEST = Math.max(...Object.values(STATS_WINDOWS));
const scan = (table: string) =>
  `from (select date_trunc('hour', coalesce(?::timestamptz, now()), 'UTC') as until) b
     join ${table} x on x.tool_id = ? and x.hour > b.until - make_interval(hours => ${LONGEST}) and x.hour <= b.until`;

type PerWindow = Record<StatsWindow, number>;

/** One tool's figures for each window (at: the end of the windows, now by default; tests move it). */
export async function toolStats(db: Db, toolId: string, at?: Date): Promise<ToolWindowStats[]> {
  const b = [at?.toISOString() ?? null, toolId];
  // The three counters of tool_stats_hourly in one scan of its rows (a row per counter, each a column per window).
  const counters = `select c.counter, ${perWindow('c.n')} ${scan('tool_stats_hourly')}
     cross join lateral (values ('calls', x.calls), ('succeeded', x.succeeded), ('platformFailed', x.platform_failed)) c(counter, n)
     group by c.counter`;
  const [hourly, latency, errs] = await Promise.all([
    db.raw(counters, b),
    db.raw(`select x.bucket_ms, ${perWindow('x.count')} ${scan('tool_stats_latency')} group by x.bucket_ms order by x.bucket_ms`, b),
    db.raw(`select x.code, ${perWindow('x.count')} ${scan('tool_stats_errors')} group by x.code order by x.code`, b),
  ]);
  const counter = (name: string, window: StatsWindow) => (hourly.rows as (PerWindow & { counter: string })[]).find((r) => r.counter === name)?.[window] ?? 0;
  const latencyRows = latency.rows as (PerWindow & { bucket_ms: number })[];
  const errorRows = errs.rows as (PerWindow & { code: string })[];
  return WINDOW_NAMES.map((window) => ({
    window,
    calls: counter('calls', window),
    succeeded: counter('succeeded', window),
    platformFailed: counter('platformFailed', window),
    latency: latencyRows.filter((r) => r[window] > 0).map((r) => ({ bucketMs: r.bucket_ms, count: r[window] })),
    topErrors: errorRows
      .filter((r) => r[window] > 0)
      .sort((x, y) => y[window] - x[window] || (x.code < y.code ? -1 : 1))
      .slice(0, TOP_ERRORS)
      .map((r) => ({ code: r.code, count: r[window] })),
  }));
}

/** Calls and successes over one window for many tools at once (search results); tools with no call are absent. */
export interface CallTotals {
  calls: number;
  succeeded: number;
  platformFailed: number;
}

export async function toolCallTotals(db: Db, toolIds: string[], window: StatsWindow, at?: Date): Promise<Map<string, CallTotals>> {
  if (toolIds.length === 0) return new Map();
  const { rows } = await db.raw(
    `select tool_id, sum(calls)::int as calls, sum(succeeded)::int as succeeded, sum(platform_failed)::int as platform_failed
       from tool_stats_hourly
      where tool_id = any(?::uuid[])
        and hour between date_trunc('hour', coalesce(?::timestamptz, now()), 'UTC') - make_interval(hours => ?)
                     and date_trunc('hour', coalesce(?::timestamptz, now()), 'UTC')
      group by tool_id`,
    [toolIds, at?.toISOString() ?? null, STATS_WINDOWS[window] - 1, at?.toISOString() ?? null],
  );
  return new Map(
    (rows as { tool_id: string; calls: number; succeeded: number; platform_failed: number }[]).map((r) => [
      r.tool_id,
      { calls: r.calls, succeeded: r.succeeded, platformFailed: r.platform_failed },
    ]),
  );
}

/**
 * The nearest-rank percentile (0 < p ≤ 1) of bucketed run times: the smallest bucket at or below which at least
 * ⌈p·n⌉ of the n executions fall; null with none.
 */
export function percentileOf(latency: { bucketMs: number; count: number }[], p: number): number | null {
  const n = latency.reduce((sum, b) => sum + b.count, 0);
  if (n === 0) return null;
  const rank = Math.max(1, Math.ceil(p * n));
  let seen = 0;
  for (const b of latency) {
    seen += b.count;
    if (seen >= rank) return b.bucketMs;
  }
  return latency[latency.length - 1]!.bucketMs;
}

/** One tool's calls and successes per UTC day over the last `days` days (oldest first, days with no call included). */
export async function toolDailyCalls(db: Db, toolId: string, days: number, at?: Date): Promise<{ day: string; calls: number; succeeded: number }[]> {
  const { rows } = await db.raw(
    `with d as (
       select generate_series(date_trunc('day', coalesce(?::timestamptz, now()), 'UTC') - make_interval(days => ? - 1),
                              date_trunc('day', coalesce(?::timestamptz, now()), 'UTC'), interval '1 day') as day)
     select to_char(d.day at time zone 'UTC', 'YYYY-MM-DD') as day,
            coalesce(sum(h.calls), 0)::int as calls, coalesce(sum(h.succeeded), 0)::int as succeeded
       from d left join tool_stats_hourly h on h.tool_id = ? and h.hour >= d.day and h.hour < d.day + interval '1 day'
      group by d.day order by d.day`,
    [at?.toISOString() ?? null, days, at?.toISOString() ?? null, toolId],
  );
  return rows;
}

/** How long hourly rows are kept: the longest window and a day of margin. */
export const STATS_KEPT_HOURS = STATS_WINDOWS['30d'] + 24;

/** Deletes the hourly rows (calls, run times, errors) that ended more than `hours` ago; answers how many. */
export async function deleteToolStatsBefore(db: Db, hours: number): Promise<number> {
  const { rows } = await db.raw(
    `with cut as (select date_trunc('hour', now(), 'UTC') - make_interval(hours => ?) as before),
          a as (delete from tool_stats_hourly where hour < (select before from cut) returning 1),
          b as (delete from tool_stats_latency where hour < (select before from cut) returning 1),
          c as (delete from tool_stats_errors where hour < (select before from cut) returning 1)
     select (select count(*) from a) + (select count(*) from b) + (select count(*) from c) as n`,
    [hours],
  );
  return Number(rows[0].n);
}
