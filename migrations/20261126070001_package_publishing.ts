import type { Knex } from 'knex';

/**
 * Publishing by anyone (issue 24): an import request records who asked (what it says beyond its source is `options`,
 * added by 20261126060001); a package records who published it and whether they hid it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('package_imports', (t) => {
    t.uuid('requested_by').references('users.id').onDelete('SET NULL');
  });
  await knex.raw('create index package_imports_requested_by_created on package_imports (requested_by, created_at)');
  await knex.schema.alterTable('packages', (t) => {
    t.uuid('published_by').references('users.id').onDelete('SET NULL');
    t.boolean('hidden').notNullable().defaultTo(false);
    /** The publisher's deprecation message for the current version, if any. */
    t.text('deprecated');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('packages', (t) => {
    t.dropColumn('deprecated');
    t.dropColumn('hidden');
    t.dropColumn('published_by');
  });
  await knex.raw('drop index if exists package_imports_requested_by_created');
  await knex.schema.alterTable('package_imports', (t) => {
    t.dropColumn('requested_by');
  });
}
