import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('agents', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('description');
    t.text('system_prompt');
    t.text('model');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.schema.createTable('agent_collections', (t) => {
    t.uuid('agent_id').notNullable().references('agents.id').onDelete('CASCADE');
    t.uuid('collection_id').notNullable().references('collections.id').onDelete('CASCADE');
    t.primary(['agent_id', 'collection_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('agent_collections');
  await knex.schema.dropTable('agents');
}
