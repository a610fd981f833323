import type { Knex } from 'knex';

// How a collection's MCP endpoint offers its tools when the request does not say (`?mode=`): `all` of them in
// tools/list, or `search` — the two meta-tools search_tools and call_tool, for collections too big for a context.
// It changes what clients see, so a change of it is a new revision (migration 20261124000001).
const revisionFunction = (columns: string) => `
  create or replace function toolshed_collection_revision() returns trigger language plpgsql as $$
  begin
    if (${columns
      .split(', ')
      .map((c) => `new.${c}`)
      .join(', ')}) is distinct from (${columns
      .split(', ')
      .map((c) => `old.${c}`)
      .join(', ')}) then
      new.revision := old.revision + 1;
      new.updated_at := now();
    end if;
    return new;
  end $$;`;

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('collections', (t) => {
    t.text('mcp_mode').notNullable().defaultTo('all');
  });
  await knex.raw(`alter table collections add constraint collections_mcp_mode check (mcp_mode in ('all', 'search'))`);
  await knex.raw(revisionFunction('name, description, uid, is_public, mcp_mode'));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(revisionFunction('name, description, uid, is_public'));
  await knex.schema.alterTable('collections', (t) => {
    t.dropColumn('mcp_mode');
  });
}
