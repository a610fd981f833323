import type { Knex } from 'knex';

// Learning from use (issue 28, docs/search.md "Learning from use"). search_last: each identified caller's latest
// search, as its analysed terms only (unlogged: a crash forgets at most the last few minutes' searches).
// search_usage: one vote per (term, tool, caller) — a tool the caller ran, added to a collection or called over MCP
// within minutes of such a search; `caller` is an opaque hash, never a user id, and rows older than the retention
// are deleted by the API's refresh.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create unlogged table search_last (
      caller text primary key,
      terms text[] not null,
      at timestamptz not null default now()
    )`);
  await knex.raw(`
    create table search_usage (
      term text not null,
      tool_id uuid not null references tools(id) on delete cascade,
      caller text not null,
      at timestamptz not null default now(),
      primary key (term, tool_id, caller)
    )`);
  await knex.raw('create index search_usage_tool_idx on search_usage (tool_id)');
  await knex.raw('create index search_usage_at_idx on search_usage (at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table search_usage');
  await knex.raw('drop table search_last');
}
