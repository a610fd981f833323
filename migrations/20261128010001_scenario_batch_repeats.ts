import type { Knex } from 'knex';

/**
 * Repeats (issue 25 item 1): a batch runs each of its scenarios `repeat` times (1 for the batches before this);
 * `scenario_runs.repeat_index` is a batch run's place among the runs of its scenario (1..repeat), so that the batch
 * can show each scenario's verdicts in repeat order. Null for runs outside a batch and for batches before this.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('scenario_batches', (t) => {
    t.smallint('repeat').notNullable().defaultTo(1);
  });
  await knex.schema.alterTable('scenario_runs', (t) => {
    t.smallint('repeat_index');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('scenario_runs', (t) => {
    t.dropColumn('repeat_index');
  });
  await knex.schema.alterTable('scenario_batches', (t) => {
    t.dropColumn('repeat');
  });
}
