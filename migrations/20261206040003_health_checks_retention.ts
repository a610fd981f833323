import type { Knex } from 'knex';

// health_checks grows by one row per tool per check (every 6 hours) and nothing read it back or deleted it: the
// retention sweep (core/repos/retention.ts) now deletes rows older than RETENTION_EVENTS_DAYS, oldest first, by this index.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create index health_checks_checked on health_checks (checked_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index health_checks_checked');
}
