/**
 * Retention (issue 45): what is deleted once past its configured time, in bounded batches (RETENTION_BATCH_ROWS rows a
 * statement, oldest first), so that a sweep never holds a long transaction or many locks. An execution's params and
 * result and a scenario run's transcript (steps) are emptied and the row marked purged_at (its poll answers 410 GONE);
 * raw trending events are deleted (trending reads its rollups, migrations/20261206040001); trending hours older than
 * the longest period and health-check records older than the events' retention are deleted. Counts, statistics and trending come from counters and rollups, never these.
 */
import type { Db } from '../infra/db.js';

/** Rows one retention statement touches at most. */
export const RETENTION_BATCH_ROWS = 1000;

/** Empties up to RETENTION_BATCH_ROWS executions final for more than `days` days; answers how many. */
export async function purgeExecutionsBatch(db: Db, days: number, rows = RETENTION_BATCH_ROWS): Promise<number> {
  const r = await db.raw(
    `update executions set params = '{}'::jsonb, result = null, purged_at = now()
      where id in (select id from executions
                    where completed_at is not null and purged_at is null and completed_at < now() - make_interval(days => ?)
                    order by completed_at limit ?)`,
    [days, Math.min(rows, RETENTION_BATCH_ROWS)],
  );
  return r.rowCount ?? 0;
}

/** Empties the transcripts of up to RETENTION_BATCH_ROWS scenario runs final for more than `days` days. */
export async function purgeRunTranscriptsBatch(db: Db, days: number, rows = RETENTION_BATCH_ROWS): Promise<number> {
  const r = await db.raw(
    `update scenario_runs set steps = '[]'::jsonb, purged_at = now()
      where id in (select id from scenario_runs
                    where completed_at is not null and purged_at is null and completed_at < now() - make_interval(days => ?)
                    order by completed_at limit ?)`,
    [days, Math.min(rows, RETENTION_BATCH_ROWS)],
  );
  return r.rowCount ?? 0;
}

/** Deletes up to RETENTION_BATCH_ROWS raw trending events older than `days` days. */
export async function deleteEventsBatch(db: Db, days: number, rows = RETENTION_BATCH_ROWS): Promise<number> {
  const r = await db.raw(
    `delete from tool_events where id in (
       select id from tool_events where created_at < now() - make_interval(days => ?) order by created_at limit ?)`,
    [days, Math.min(rows, RETENTION_BATCH_ROWS)],
  );
  return r.rowCount ?? 0;
}

/** Deletes up to RETENTION_BATCH_ROWS health-check records older than `days` days (nothing reads them back). */
export async function deleteHealthChecksBatch(db: Db, days: number, rows = RETENTION_BATCH_ROWS): Promise<number> {
  const r = await db.raw(
    `delete from health_checks where id in (
       select id from health_checks where checked_at < now() - make_interval(days => ?) order by checked_at limit ?)`,
    [days, Math.min(rows, RETENTION_BATCH_ROWS)],
  );
  return r.rowCount ?? 0;
}

/**
 * Trending hours are kept for the longest period (30 days) and a day of margin, and never before the earliest
 * period window's start (trending_advance subtracts the hours that leave a window: migrations/20261207050001).
 */
export const TRENDING_KEPT_HOURS = 31 * 24;

export async function deleteTrendingHoursBatch(db: Db, rows = RETENTION_BATCH_ROWS): Promise<number> {
  const r = await db.raw(
    `delete from trending_hourly where (hour, tool_id) in (
       select hour, tool_id from trending_hourly where hour < date_trunc('hour', now(), 'UTC') - make_interval(hours => ?)
          and hour < coalesce((select min(start) from trending_windows), 'infinity')
        order by hour limit ?)`,
    [TRENDING_KEPT_HOURS, Math.min(rows, RETENTION_BATCH_ROWS)],
  );
  return r.rowCount ?? 0;
}

export async function deleteTrendingDaysBatch(db: Db, rows = RETENTION_BATCH_ROWS): Promise<number> {
  const r = await db.raw(
    `delete from trending_daily where (day, tool_id) in (
       select day, tool_id from trending_daily where day < date_trunc('day', now(), 'UTC') - make_interval(hours => ?)
        order by day limit ?)`,
    [TRENDING_KEPT_HOURS + 24, Math.min(rows, RETENTION_BATCH_ROWS)],
  );
  return r.rowCount ?? 0;
}

export interface RetentionDays {
  RETENTION_RESULTS_DAYS: number;
  RETENTION_TRANSCRIPTS_DAYS: number;
  RETENTION_EVENTS_DAYS: number;
}

/**
 * One sweep: each kind batch after batch until a batch comes back short, at most `maxBatches` batches a kind (the
 * rest waits for the next sweep). Answers how many rows of each kind.
 */
export async function sweepRetention(db: Db, days: RetentionDays, maxBatches = 100) {
  const drain = async (batch: () => Promise<number>) => {
    let total = 0;
    for (let i = 0; i < maxBatches; i++) {
      const n = await batch();
      total += n;
      if (n < RETENTION_BATCH_ROWS) break;
    }
    return total;
  };
  await db.raw('select trending_advance(now())');
  return {
    executions: await drain(() => purgeExecutionsBatch(db, days.RETENTION_RESULTS_DAYS)),
    scenarioRuns: await drain(() => purgeRunTranscriptsBatch(db, days.RETENTION_TRANSCRIPTS_DAYS)),
    events: await drain(() => deleteEventsBatch(db, days.RETENTION_EVENTS_DAYS)),
    trendingHours: await drain(() => deleteTrendingHoursBatch(db)),
    trendingDays: await drain(() => deleteTrendingDaysBatch(db)),
    healthChecks: await drain(() => deleteHealthChecksBatch(db, days.RETENTION_EVENTS_DAYS)),
  };
}
