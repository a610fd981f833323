import type { Knex } from 'knex';

// Retention (issue 45; core/repos/retention.ts): an execution's params and result, and a scenario run's transcript,
// are deleted once past their retention; the row stays (status, times, who: what counts and histories read) with
// purged_at set, so that its poll can answer 410 GONE rather than 404. The partial indexes give the sweep the oldest
// rows not yet purged without walking those already purged.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table executions add column purged_at timestamptz');
  await knex.raw('alter table scenario_runs add column purged_at timestamptz');
  await knex.raw('create index executions_unpurged on executions (completed_at) where completed_at is not null and purged_at is null');
  await knex.raw('create index scenario_runs_unpurged on scenario_runs (completed_at) where completed_at is not null and purged_at is null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index scenario_runs_unpurged');
  await knex.raw('drop index executions_unpurged');
  await knex.raw('alter table scenario_runs drop column purged_at');
  await knex.raw('alter table executions drop column purged_at');
}
