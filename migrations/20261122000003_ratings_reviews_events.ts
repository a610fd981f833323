import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('tool_ratings', (t) => {
    t.uuid('tool_id').notNullable().references('tools.id').onDelete('CASCADE');
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.smallint('rating').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['tool_id', 'user_id']);
    t.check('rating between 1 and 5', [], 'tool_ratings_range');
  });
  await knex.schema.createTable('tool_reviews', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('tool_id').notNullable().references('tools.id').onDelete('CASCADE');
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.smallint('rating').notNullable();
    t.text('title');
    t.text('body').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['tool_id', 'user_id']);
    t.check('rating between 1 and 5', [], 'tool_reviews_range');
  });
  // One row per trending-relevant event; trending sums their weights over a period.
  await knex.schema.createTable('tool_events', (t) => {
    t.bigIncrements('id');
    t.uuid('tool_id').notNullable().references('tools.id').onDelete('CASCADE');
    t.text('kind').notNullable();
    t.double('weight').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.check("kind in ('execution_succeeded','execution_failed','rating','review','collection_add')", [], 'tool_events_kind_check');
  });
  await knex.raw('create index tool_events_created_tool on tool_events (created_at, tool_id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('tool_events');
  await knex.schema.dropTable('tool_reviews');
  await knex.schema.dropTable('tool_ratings');
}
