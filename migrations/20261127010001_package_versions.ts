import type { Knex } from 'knex';

/**
 * Versions (issue 24, items 3–4): every imported version of a package stays recorded, installed and runnable.
 * `packages` and `tools` keep describing the latest version (the highest semver imported: lists, search and ratings
 * stay on them); `package_versions` holds each version with what it takes to run it (install path, manifest, env) and
 * a snapshot of its tools, its comparison with the version before it, the publisher's deprecation message and who
 * imported it. Existing packages are backfilled with their current version.
 *
 * An execution records the version that ran (`package_version`). A collection's tool entry may pin a version
 * (`pinned_version`) or, when it follows the latest, be held on an older one by a breaking new version
 * (`held_version`); a change of either bumps the collection's revision like any change of what it serves.
 * An import the npm poller asked for is `polled` (it does not count toward its publisher's daily quota).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('package_versions', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('package_id').notNullable().references('packages.id').onDelete('CASCADE');
    t.text('version').notNullable();
    t.text('source').notNullable();
    t.text('install_path').notNullable();
    t.jsonb('manifest').notNullable().defaultTo('{}');
    t.jsonb('env').notNullable().defaultTo('[]');
    /** [{ name, exportName, description, inputSchema, outputSchema, permissions, healthExample, broken }] */
    t.jsonb('tools').notNullable().defaultTo('[]');
    t.text('import_error');
    t.jsonb('compatibility');
    t.text('deprecated');
    t.uuid('published_by').references('users.id').onDelete('SET NULL');
    t.timestamp('imported_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['package_id', 'version']);
  });
  await knex.raw(`
    insert into package_versions (package_id, version, source, install_path, manifest, env, tools, import_error, compatibility,
                                  deprecated, published_by, imported_at)
    select p.id, p.version, p.source, p.install_path, p.manifest, p.env,
           coalesce((select jsonb_agg(jsonb_build_object(
                       'name', t.name, 'exportName', t.export_name, 'description', t.description,
                       'inputSchema', t.input_schema, 'outputSchema', t.output_schema, 'permissions', t.permissions,
                       'healthExample', t.health_example,
                       'broken', case when t.health_status = 'BROKEN' then t.health_error end) order by t.name)
                       from tools t
                      where t.package_id = p.id
                        and (t.health_error is null or t.health_error not like 'not declared by version %')), '[]'::jsonb),
           p.import_error, p.compatibility, p.deprecated, p.published_by, p.updated_at
      from packages p`);
  await knex.schema.alterTable('executions', (t) => {
    t.text('package_version');
  });
  await knex.schema.alterTable('collection_tools', (t) => {
    t.text('pinned_version');
    t.text('held_version');
  });
  await knex.raw(`
    create trigger collection_tools_version_revision after update of pinned_version, held_version on collection_tools
      for each row when ((old.pinned_version, old.held_version) is distinct from (new.pinned_version, new.held_version))
      execute function toolshed_collection_tools_revision()`);
  await knex.schema.alterTable('package_imports', (t) => {
    t.boolean('polled').notNullable().defaultTo(false);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('package_imports', (t) => {
    t.dropColumn('polled');
  });
  await knex.raw('drop trigger if exists collection_tools_version_revision on collection_tools');
  await knex.schema.alterTable('collection_tools', (t) => {
    t.dropColumn('held_version');
    t.dropColumn('pinned_version');
  });
  await knex.schema.alterTable('executions', (t) => {
    t.dropColumn('package_version');
  });
  await knex.schema.dropTable('package_versions');
}
