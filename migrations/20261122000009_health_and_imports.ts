import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('health_checks', (t) => {
    t.bigIncrements('id');
    t.uuid('tool_id').notNullable().references('tools.id').onDelete('CASCADE');
    t.boolean('passed').notNullable();
    t.text('error');
    t.integer('duration_ms');
    t.timestamp('checked_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('create index health_checks_tool_checked on health_checks (tool_id, checked_at desc)');
  // One row per requested import; the API waits on it while a worker job does the import.
  await knex.schema.createTable('package_imports', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('source').notNullable();
    t.boolean('official').notNullable().defaultTo(false);
    t.text('status').notNullable().defaultTo('queued');
    t.uuid('package_id').references('packages.id').onDelete('SET NULL');
    /** { code, message, details? } when the import failed. */
    t.jsonb('error');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('completed_at', { useTz: true });
    t.check("status in ('queued','running','succeeded','failed')", [], 'package_imports_status_check');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('package_imports');
  await knex.schema.dropTable('health_checks');
}
