import type { Knex } from 'knex';

// A user's own collections (issue 45, bench:scale with 100,000 collections) had no index: `GET /api/auth/me/collections`
// (core/repos/collections.ts listCollectionsOwnedBy, last changed first), the count taken under the owner's lock at
// every creation, and the MCP Registry's list for a caller with a key (their private collections, core/repos/registry.ts)
// read every collection. Now each reads its owner's rows only, the list in its own order.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create index collections_owner_updated on collections (owner_id, updated_at desc, id desc)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index collections_owner_updated');
}
