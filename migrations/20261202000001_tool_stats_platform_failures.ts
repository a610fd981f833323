import type { Knex } from 'knex';

// Per-tool statistics keep the platform's failures apart (core/repos/tool-stats.ts, PLATFORM_ERROR_CODES): a sandbox
// that failed, a worker lost or shut down mid-call, a tool deleted before it ran are not the tool's doing, so a tool's
// success rate is its successes over the calls it decided. Filled from the error counts already rolled up.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table tool_stats_hourly add column platform_failed integer not null default 0');
  await knex.raw(`
    update tool_stats_hourly h set platform_failed = e.n
      from (select tool_id, hour, sum(count)::int as n from tool_stats_errors
             where code in ('SANDBOX_ERROR', 'WORKER_LOST', 'WORKER_SHUTDOWN', 'NOT_FOUND', 'INTERNAL')
             group by tool_id, hour) e
     where h.tool_id = e.tool_id and h.hour = e.hour`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table tool_stats_hourly drop column platform_failed');
}
