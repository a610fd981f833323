import type { Knex } from 'knex';

// A scenario run's job priority is the number of runs its user already has queued or running (core/scenarios/scenario-runs.ts);
// the partial index keeps that count cheap.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create index scenario_runs_active_by_user on scenario_runs (user_id) where status in ('queued', 'running')`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists scenario_runs_active_by_user');
}
