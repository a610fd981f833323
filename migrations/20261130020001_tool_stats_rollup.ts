import type { Knex } from 'knex';

// Per-tool statistics (issue 26; core/repos/tool-stats.ts): an hourly rollup that finishExecution keeps in the same
// statement that makes an execution final, so that GET /api/tools/:id/stats and search read at most 720 hours of a
// tool, never its executions. Three tables, each a plain counter row per (tool, UTC hour[, key]) so that concurrent
// finishes add with INSERT … ON CONFLICT DO UPDATE: calls and successes; run times by bucket (exact under 100 ms, else
// rounded up to two significant digits, by tool_latency_bucket); failures by error code. Filled once from the
// executions already final in the last 31 days.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create function tool_latency_bucket(ms integer) returns integer immutable language sql as $$
      select case when ms < 100 then greatest(ms, 0)
                  else (ceil(ms::numeric / p) * p)::integer end
        from (select power(10::numeric, floor(log(greatest(ms, 1)::numeric)) - 1) as p) x
    $$`);
  await knex.raw(`
    create table tool_stats_hourly (
      tool_id uuid not null references tools(id) on delete cascade,
      hour timestamptz not null,
      calls integer not null default 0,
      succeeded integer not null default 0,
      primary key (tool_id, hour))`);
  await knex.raw(`
    create table tool_stats_latency (
      tool_id uuid not null references tools(id) on delete cascade,
      hour timestamptz not null,
      bucket_ms integer not null,
      count integer not null default 0,
      primary key (tool_id, hour, bucket_ms))`);
  await knex.raw(`
    create table tool_stats_errors (
      tool_id uuid not null references tools(id) on delete cascade,
      hour timestamptz not null,
      code text not null,
      count integer not null default 0,
      primary key (tool_id, hour, code))`);
  const recent = `from executions
     where status in ('succeeded', 'failed', 'timed_out') and completed_at >= now() - interval '31 days'`;
  const hour = `date_trunc('hour', completed_at, 'UTC')`;
  await knex.raw(`
    insert into tool_stats_hourly (tool_id, hour, calls, succeeded)
    select tool_id, ${hour}, count(*), count(*) filter (where status = 'succeeded') ${recent}
     group by 1, 2`);
  await knex.raw(`
    insert into tool_stats_latency (tool_id, hour, bucket_ms, count)
    select tool_id, ${hour}, tool_latency_bucket(execution_time_ms), count(*) ${recent} and execution_time_ms is not null
     group by 1, 2, 3`);
  await knex.raw(`
    insert into tool_stats_errors (tool_id, hour, code, count)
    select tool_id, ${hour}, coalesce(error->>'code', 'UNKNOWN'), count(*) ${recent} and status <> 'succeeded'
     group by 1, 2, 3`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table tool_stats_errors');
  await knex.raw('drop table tool_stats_latency');
  await knex.raw('drop table tool_stats_hourly');
  await knex.raw('drop function tool_latency_bucket(integer)');
}
