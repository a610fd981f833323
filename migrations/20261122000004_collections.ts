import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('collections', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('uid').notNullable().unique();
    t.uuid('owner_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('description');
    t.boolean('is_public').notNullable().defaultTo(true);
    t.integer('like_count').notNullable().defaultTo(0);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('create index collections_public_created on collections (created_at desc) where is_public');
  await knex.schema.createTable('collection_tools', (t) => {
    t.uuid('collection_id').notNullable().references('collections.id').onDelete('CASCADE');
    t.uuid('tool_id').notNullable().references('tools.id').onDelete('CASCADE');
    t.timestamp('added_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['collection_id', 'tool_id']);
  });
  await knex.schema.createTable('collection_likes', (t) => {
    t.uuid('collection_id').notNullable().references('collections.id').onDelete('CASCADE');
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['collection_id', 'user_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('collection_likes');
  await knex.schema.dropTable('collection_tools');
  await knex.schema.dropTable('collections');
}
