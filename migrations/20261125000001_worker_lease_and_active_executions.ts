import type { Knex } from 'knex';

// Each worker's own lease window, stored with its heartbeat: a reaper judges another process by that process's
// window, not its own (workers configured with different WORKER_LEASE_SECONDS freed each other's live jobs).
// And an index over the executions not yet final, which the reaper scans for records whose job is gone or has
// failed for good (so that none stays queued or running for ever).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('workers', (t) => {
    t.integer('lease_seconds').notNullable().defaultTo(20);
  });
  await knex.raw("create index executions_active on executions (created_at) where status in ('queued', 'running')");
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists executions_active');
  await knex.schema.alterTable('workers', (t) => {
    t.dropColumn('lease_seconds');
  });
}
