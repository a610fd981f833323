import type { Knex } from 'knex';

// How an MCP server import got its server to start (worker/import/mcp-startup.ts): its starts, the start-up rules that
// fired and why, the refusal's code. Shown in the import's status.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('package_imports', (t) => {
    t.jsonb('startup');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('package_imports', (t) => {
    t.dropColumn('startup');
  });
}
