import type { Knex } from 'knex';

// What a package declares of a tool beyond its input: its permissions (`toolshed.tools[].permissions`: readOnly,
// destructive, idempotent, network, secrets; null when undeclared) and the JSON Schema of its output (from the tool's
// `outputSchema`, read in the sandbox at import; null when it has none). Both are part of the tool's definition, so a
// change of either bumps the revision of every collection holding the tool (migration 20261124000001).
const TOOL_COLUMNS_BEFORE =
  '(new.name, new.export_name, new.description, new.input_schema) is distinct from (old.name, old.export_name, old.description, old.input_schema)';
const TOOL_COLUMNS_AFTER = `(new.name, new.export_name, new.description, new.input_schema, new.output_schema, new.permissions) is distinct from
       (old.name, old.export_name, old.description, old.input_schema, old.output_schema, old.permissions)`;

const revisionFunction = (changed: string) => `
  create or replace function toolshed_tools_revision() returns trigger language plpgsql as $$
  begin
    if ${changed} then
      perform toolshed_bump_collections(array(select collection_id from collection_tools where tool_id = new.id));
    end if;
    return null;
  end $$;`;

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tools', (t) => {
    t.jsonb('permissions');
    t.jsonb('output_schema');
  });
  await knex.raw(revisionFunction(TOOL_COLUMNS_AFTER));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(revisionFunction(TOOL_COLUMNS_BEFORE));
  await knex.schema.alterTable('tools', (t) => {
    t.dropColumn('output_schema');
    t.dropColumn('permissions');
  });
}
