import type { Knex } from 'knex';

/**
 * Health of MCP servers (issue 23 item 6): a server's check lists its tools once per package and compares the listing
 * with the last one recorded (at import, or at the previous check of the same version). `packages.mcp_listing` holds
 * that listing ({ <tool>: { description, inputSchema, outputSchema } }); `tools.tools_changed` flags every tool of a
 * package whose tools/list changed within a version ({ detectedAt, version, added, removed, changed }), until the
 * package is imported again.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('packages', (t) => {
    t.jsonb('mcp_listing');
  });
  await knex.schema.alterTable('tools', (t) => {
    t.jsonb('tools_changed');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tools', (t) => {
    t.dropColumn('tools_changed');
  });
  await knex.schema.alterTable('packages', (t) => {
    t.dropColumn('mcp_listing');
  });
}
