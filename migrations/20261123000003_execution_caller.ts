import type { Knex } from 'knex';

// Who an execution counts against (`user:<id>`, or `ip:<address or /64>` for anonymous callers), so that a caller's
// queued and running executions can be capped; the partial index keeps that count cheap.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('executions', (t) => {
    t.text('caller');
  });
  await knex.raw(`create index executions_active_by_caller on executions (caller) where status in ('queued', 'running')`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists executions_active_by_caller');
  await knex.schema.alterTable('executions', (t) => {
    t.dropColumn('caller');
  });
}
