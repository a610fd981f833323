import type { Knex } from 'knex';

// Liveness per job, not per lock id: each worker process lists the Graphile jobs it is running right now with every
// heartbeat (`job_ids`), and the reaper frees exactly the locked jobs that no live process lists. Scenario runs get
// the attempt number that owns them, so that only the owning attempt can make a run final.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workers', (t) => {
    t.specificType('job_ids', 'bigint[]').notNullable().defaultTo('{}');
    t.dropColumn('graphile_ids'); // the lock ids a process announced: replaced by the leases
  });
  await knex.schema.alterTable('scenario_runs', (t) => {
    t.integer('attempt').notNullable().defaultTo(0);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('scenario_runs', (t) => {
    t.dropColumn('attempt');
  });
  await knex.schema.alterTable('workers', (t) => {
    t.dropColumn('job_ids');
    t.specificType('graphile_ids', 'text[]').notNullable().defaultTo('{}');
  });
}
