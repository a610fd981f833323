import type { Knex } from 'knex';

// A collection's batch history (GET /api/collections/:id/scenario-batches) is read newest first.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create index scenario_batches_collection_created on scenario_batches (collection_id, created_at desc, id desc)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists scenario_batches_collection_created');
}
