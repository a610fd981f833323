import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('users', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('username').notNullable();
    t.text('name');
    t.text('tier').notNullable().defaultTo('free');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.check("tier in ('free','pro','enterprise')", [], 'users_tier_check');
  });
  await knex.raw('create unique index users_username_lower on users (lower(username))');
  await knex.schema.createTable('api_keys', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('name');
    t.text('prefix').notNullable();
    t.text('key_hash').notNullable().unique();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_used_at', { useTz: true });
    t.timestamp('revoked_at', { useTz: true });
    t.index(['user_id']);
  });
  // API processes cache key lookups; this tells all of them at once when a key is revoked, or a tier changes.
  await knex.raw(`
    create function toolshed_notify_key() returns trigger language plpgsql as $$
    begin
      if tg_table_name = 'api_keys' then
        perform pg_notify('toolshed_keys', old.key_hash);
      else
        perform pg_notify('toolshed_keys', '*');
      end if;
      return null;
    end $$`);
  await knex.raw(`create trigger api_keys_notify after update or delete on api_keys for each row execute function toolshed_notify_key()`);
  await knex.raw(`create trigger users_notify after update or delete on users for each row execute function toolshed_notify_key()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('api_keys');
  await knex.schema.dropTable('users');
  await knex.raw('drop function toolshed_notify_key()');
}
