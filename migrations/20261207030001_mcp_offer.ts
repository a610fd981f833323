import type { Knex } from 'knex';

// What an imported MCP server offers besides its tools (issue 44 items 4 and 5): its icons and its tools', its
// resources, resource templates and prompts, as listed at import (core/packages/mcp-offer.ts). Per version: a recorded
// version never changes, and a collection entry held on an older version serves that version's.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table package_versions add column mcp_offer jsonb');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table package_versions drop column mcp_offer');
}
