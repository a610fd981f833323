import type { Knex } from 'knex';

// A collection's revision: 1 at creation, bumped (with updated_at) by triggers on every change of what the collection
// serves — its own name, description, uid or visibility; a tool added or removed; the definition of one of its tools
// (name, export, description, input schema); or its package's version or env. Counters (likes, ratings, health,
// executions) are not changes of the collection. Triggers, not application code, so that every writer bumps it.
// The MCP Registry API (api/registry/routes.ts) serves the revision as the server's version and filters on updated_at.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('collections', (t) => {
    t.integer('revision').notNullable().defaultTo(1);
  });
  await knex.raw('create index collections_public_updated on collections (updated_at, id) where is_public');
  await knex.raw(`
    create function toolshed_collection_revision() returns trigger language plpgsql as $$
    begin
      if (new.name, new.description, new.uid, new.is_public) is distinct from (old.name, old.description, old.uid, old.is_public) then
        new.revision := old.revision + 1;
        new.updated_at := now();
      end if;
      return new;
    end $$;
    create trigger collections_revision before update on collections
      for each row execute function toolshed_collection_revision();

    create function toolshed_bump_collections(ids uuid[]) returns void language sql as $$
      update collections set revision = revision + 1, updated_at = now() where id = any(ids);
    $$;

    create function toolshed_collection_tools_revision() returns trigger language plpgsql as $$
    begin
      perform toolshed_bump_collections(array[coalesce(new.collection_id, old.collection_id)]);
      return null;
    end $$;
    create trigger collection_tools_revision after insert or delete on collection_tools
      for each row execute function toolshed_collection_tools_revision();

    create function toolshed_tools_revision() returns trigger language plpgsql as $$
    begin
      if (new.name, new.export_name, new.description, new.input_schema) is distinct from
         (old.name, old.export_name, old.description, old.input_schema) then
        perform toolshed_bump_collections(array(select collection_id from collection_tools where tool_id = new.id));
      end if;
      return null;
    end $$;
    create trigger tools_revision after update on tools
      for each row execute function toolshed_tools_revision();

    create function toolshed_packages_revision() returns trigger language plpgsql as $$
    begin
      if (new.version, new.env) is distinct from (old.version, old.env) then
        perform toolshed_bump_collections(array(
          select distinct ct.collection_id from collection_tools ct join tools t on t.id = ct.tool_id where t.package_id = new.id));
      end if;
      return null;
    end $$;
    create trigger packages_revision after update on packages
      for each row execute function toolshed_packages_revision();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop trigger if exists packages_revision on packages;
    drop function if exists toolshed_packages_revision();
    drop trigger if exists tools_revision on tools;
    drop function if exists toolshed_tools_revision();
    drop trigger if exists collection_tools_revision on collection_tools;
    drop function if exists toolshed_collection_tools_revision();
    drop function if exists toolshed_bump_collections(uuid[]);
    drop trigger if exists collections_revision on collections;
    drop function if exists toolshed_collection_revision();
    drop index if exists collections_public_updated;
  `);
  await knex.schema.alterTable('collections', (t) => {
    t.dropColumn('revision');
  });
}
