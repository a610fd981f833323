import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  // Fixed-window request counters (api/middleware/rate-limit.ts), shared by every API process.
  await knex.schema.createTable('rate_limits', (t) => {
    t.string('key', 255).primary();
    t.integer('points').notNullable().defaultTo(0);
    t.bigInteger('expire');
  });
  // Daily scenario-run quota, taken with one UPDATE … RETURNING.
  await knex.schema.createTable('scenario_quota', (t) => {
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.date('day').notNullable();
    t.integer('used').notNullable().defaultTo(0);
    t.primary(['user_id', 'day']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('scenario_quota');
  await knex.schema.dropTable('rate_limits');
}
