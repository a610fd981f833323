import type { Knex } from 'knex';

// A tool's env asked for the MCP way (issue 44 item 3, api/mcp/env-elicit.ts): one row per pending request — the call
// that lacked env (collection, tool, params, caller), until when it may be answered, and once answered on the page, the
// execution it started. Never the values: they go sealed into that execution's job only. The token in the page's URL is
// kept as its SHA-256 (`id`), as API keys and OAuth tokens are.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table mcp_env_requests (
      id text primary key,
      collection_id uuid not null references collections(id) on delete cascade,
      tool_id uuid not null references tools(id) on delete cascade,
      tool_name text not null,
      params jsonb not null,
      params_hash text not null,
      env_names text[] not null,
      user_id uuid not null references users(id) on delete cascade,
      api_key_id uuid references api_keys(id) on delete set null,
      client text not null,
      expires_at timestamptz not null,
      submitted_at timestamptz,
      execution_id uuid references executions(id) on delete set null,
      consumed_at timestamptz,
      created_at timestamptz not null default now()
    )`);
  await knex.raw('create index mcp_env_requests_answered on mcp_env_requests (user_id, collection_id, tool_id, params_hash) where consumed_at is null');
  await knex.raw('create index mcp_env_requests_expires on mcp_env_requests (expires_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table mcp_env_requests');
}
