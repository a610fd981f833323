import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('packages', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('name').notNullable().unique();
    t.text('version').notNullable();
    t.text('category').notNullable();
    t.text('description');
    t.text('source').notNullable();
    t.boolean('official').notNullable().defaultTo(false);
    /** [{ name, description?, required }] */
    t.jsonb('env').notNullable().defaultTo('[]');
    t.jsonb('manifest').notNullable().defaultTo('{}');
    /** Content-addressed directory of the installed package (name@version). */
    t.text('install_path').notNullable();
    t.text('import_error');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.schema.createTable('tools', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('package_id').notNullable().references('packages.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('export_name').notNullable();
    t.text('description').notNullable().defaultTo('');
    t.jsonb('input_schema').notNullable().defaultTo('{"type":"object"}');
    /** { params, expect? } from the manifest, run by health checks. */
    t.jsonb('health_example');
    t.text('health_status').notNullable().defaultTo('UNKNOWN');
    t.text('health_error');
    t.integer('consecutive_health_failures').notNullable().defaultTo(0);
    t.timestamp('last_health_check_at', { useTz: true });
    t.double('quality_score').notNullable().defaultTo(0);
    t.integer('execution_count').notNullable().defaultTo(0);
    t.integer('rating_sum').notNullable().defaultTo(0);
    t.integer('rating_count').notNullable().defaultTo(0);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['package_id', 'name']);
    t.check("health_status in ('HEALTHY','BROKEN','UNKNOWN')", [], 'tools_health_status_check');
  });
  await knex.raw('create index tools_quality_name on tools (quality_score desc, name, id)');
  // Every process with an in-process search index re-reads a tool when this fires (see core/search/sync.ts).
  await knex.raw(`
    create function toolshed_notify_tool() returns trigger language plpgsql as $$
    begin
      if tg_op = 'DELETE' then
        perform pg_notify('toolshed_tools', '-' || old.id::text);
        return old;
      end if;
      perform pg_notify('toolshed_tools', new.id::text);
      return new;
    end $$`);
  await knex.raw(`
    create trigger tools_notify after insert or delete
      or update of name, description, health_status, package_id, quality_score, rating_sum, rating_count, updated_at
      on tools for each row execute function toolshed_notify_tool()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('tools');
  await knex.raw('drop function toolshed_notify_tool()');
  await knex.schema.dropTable('packages');
}
