import type { Knex } from 'knex';

// The `toolshed_tools` NOTIFY keeps every process's tool cache (core/tools/tool-cache.ts) and search index
// (core/search/sync.ts) current. It fired only on a list of columns, so a change of any other served column
// (executionCount, lastHealthCheckAt, healthError, …) or of the tool's package (version, env, official, …) left the
// cache stale until a restart. Now it fires on a change of any column of a tool, and for every tool of a package
// whose row changed:
// - `<id>`: a change the list order or the search index sees (name, description, input schema, health status,
//   quality score, package), or an insert: listeners drop the row, the cached list pages, and re-index it;
// - `~<id>`: any other column only (counters, health check time and error, output schema, permissions, …): the
//   cached row is dropped, the list pages and the search index are unaffected (an execution's count bump is one);
// - `-<id>`: deleted.
// An update that changes nothing sends nothing. Notifications are sent at commit and identical ones within one
// transaction are folded into one by Postgres.
const NOTIFY_TOOL = `
  create or replace function toolshed_notify_tool() returns trigger language plpgsql as $$
  begin
    if tg_op = 'DELETE' then
      perform pg_notify('toolshed_tools', '-' || old.id::text);
      return old;
    end if;
    if tg_op = 'UPDATE' then
      if new is not distinct from old then
        return new;
      end if;
      if (new.name, new.description, new.input_schema, new.health_status, new.quality_score, new.package_id)
         is not distinct from (old.name, old.description, old.input_schema, old.health_status, old.quality_score, old.package_id) then
        perform pg_notify('toolshed_tools', '~' || new.id::text);
        return new;
      end if;
    end if;
    perform pg_notify('toolshed_tools', new.id::text);
    return new;
  end $$;`;

const NOTIFY_TOOL_BEFORE = `
  create or replace function toolshed_notify_tool() returns trigger language plpgsql as $$
  begin
    if tg_op = 'DELETE' then
      perform pg_notify('toolshed_tools', '-' || old.id::text);
      return old;
    end if;
    perform pg_notify('toolshed_tools', new.id::text);
    return new;
  end $$;`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(NOTIFY_TOOL);
  await knex.raw(`
    drop trigger tools_notify on tools;
    create trigger tools_notify after insert or update or delete on tools
      for each row execute function toolshed_notify_tool();

    create function toolshed_notify_package_tools() returns trigger language plpgsql as $$
    begin
      if (new.name, new.version, new.category, new.env, new.official, new.install_path)
         is distinct from (old.name, old.version, old.category, old.env, old.official, old.install_path) then
        perform pg_notify('toolshed_tools', t.id::text) from tools t where t.package_id = new.id;
      end if;
      return null;
    end $$;
    create trigger packages_notify_tools after update on packages
      for each row execute function toolshed_notify_package_tools();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop trigger if exists packages_notify_tools on packages;
    drop function if exists toolshed_notify_package_tools();
    drop trigger tools_notify on tools;
    create trigger tools_notify after insert or delete
      or update of name, description, health_status, package_id, quality_score, rating_sum, rating_count, updated_at
      on tools for each row execute function toolshed_notify_tool();
  `);
  await knex.raw(NOTIFY_TOOL_BEFORE);
}
