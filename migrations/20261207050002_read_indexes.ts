import type { Knex } from 'knex';

// Indexes for reads that sorted every row (issue 45, bench:scale with 100,000 collections): the MCP Registry's server
// list (GET /v0.1/servers, core/repos/registry.ts) in server-name order, lower(username) then uid in byte order, now
// walks users by that name and each one's public collections by uid, stopping at its page; featured and best-quality
// scenarios (core/repos/scenarios.ts) walk scenarios by quality instead of sorting them all.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create index users_username_lower_c on users ((lower(username)) collate "C")');
  await knex.raw('create index collections_public_owner_uid on collections (owner_id, uid collate "C") where is_public');
  await knex.raw('create index scenarios_quality_rank on scenarios (quality_score desc, total_runs desc, created_at desc, id desc)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index scenarios_quality_rank');
  await knex.raw('drop index collections_public_owner_uid');
  await knex.raw('drop index users_username_lower_c');
}
