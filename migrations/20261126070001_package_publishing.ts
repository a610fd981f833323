import type { Knex } from 'knex';

/**
 * Publishing by anyone (issue 24): an import request records who asked (what it says beyond its source is `options`,
 * added by 20261126060001); a package records who published it and whether they hid it.
 *
 * Hiding takes a package's tools out of the list and search, so `hidden` is a served column of the package: a change
 * of it notifies `<id>` for each of its tools (as 20261126010001 does for name, version, …), and every process drops
 * its cached list pages and re-indexes them (search drops a tool its list no longer has).
 */
const packageTrigger = (columns: string[]) => `
  create or replace function toolshed_notify_package_tools() returns trigger language plpgsql as $$
  begin
    if (${columns.map((c) => `new.${c}`).join(', ')})
       is distinct from (${columns.map((c) => `old.${c}`).join(', ')}) then
      perform pg_notify('toolshed_tools', t.id::text) from tools t where t.package_id = new.id;
    end if;
    return null;
  end $$;`;
const SERVED = ['name', 'version', 'category', 'env', 'official', 'install_path'];

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
  await knex.raw(packageTrigger([...SERVED, 'hidden']));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(packageTrigger(SERVED));
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
