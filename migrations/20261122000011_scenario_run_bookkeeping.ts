import type { Knex } from 'knex';

// Bookkeeping for batches and their event streams: how many scenarios a batch skipped for lack of quota, and the
// order in which a batch's runs finished (assigned under the batch row lock, so a replayed stream never reorders).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('scenario_batches', (t) => {
    t.integer('skipped').notNullable().defaultTo(0);
  });
  await knex.schema.alterTable('scenario_runs', (t) => {
    t.integer('batch_seq');
  });
  await knex.raw("create index scenarios_last_pass on scenarios (last_run_at desc) where last_run_status = 'pass'");
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists scenarios_last_pass');
  await knex.schema.alterTable('scenario_runs', (t) => {
    t.dropColumn('batch_seq');
  });
  await knex.schema.alterTable('scenario_batches', (t) => {
    t.dropColumn('skipped');
  });
}
