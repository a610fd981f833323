import type { Knex } from 'knex';

// The operator's page (GET /api/admin/operations) reads the last hour of finished executions and scenario runs:
// recent failures and a per-minute chart. Without these indexes each refresh scanned both tables.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create index if not exists executions_completed on executions (completed_at) where completed_at is not null');
  await knex.raw('create index if not exists scenario_runs_completed on scenario_runs (completed_at) where completed_at is not null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists executions_completed');
  await knex.raw('drop index if exists scenario_runs_completed');
}
