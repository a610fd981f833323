import type { Knex } from 'knex';

// Reads by owner and by tool that had no index (issue 45, bench:scale with 100,000 collections and 500,000 entries):
// a user's own collections — `GET /api/auth/me/collections` (core/repos/collections.ts listCollectionsOwnedBy, last
// changed first), the count taken under the owner's lock at every creation, the MCP Registry's list for a caller with
// a key (their private collections, core/repos/registry.ts) — read every collection; the collections holding a tool,
// which the revision triggers look up at each new version or changed declaration of a tool (migration
// 20261124000001), read every collection entry; a user's agents (core/repos/agents.ts listAgents, newest first) every
// agent. Now each reads its own rows only, the lists in their order.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create index collections_owner_updated on collections (owner_id, updated_at desc, id desc)');
  await knex.raw('create index collection_tools_tool on collection_tools (tool_id)');
  await knex.raw('create index agents_user_created on agents (user_id, created_at desc, id desc)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index agents_user_created');
  await knex.raw('drop index collection_tools_tool');
  await knex.raw('drop index collections_owner_updated');
}
