import type { Knex } from 'knex';

// Worker processes announce themselves here; /health reports them and the reaper fails executions of dead ones.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('workers', (t) => {
    t.text('id').primary();
    t.text('hostname').notNullable();
    t.integer('pid').notNullable();
    t.timestamp('started_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_seen_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('workers');
}
