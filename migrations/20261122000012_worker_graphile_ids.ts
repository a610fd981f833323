import type { Knex } from 'knex';

// The Graphile Worker ids (jobs.locked_by) of each of our worker processes, so that the reaper can tell which
// locked jobs belong to a process that is gone.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workers', (t) => {
    t.specificType('graphile_ids', 'text[]').notNullable().defaultTo('{}');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workers', (t) => {
    t.dropColumn('graphile_ids');
  });
}
