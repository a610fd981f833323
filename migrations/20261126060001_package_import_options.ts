import type { Knex } from 'knex';

// What an import request says beyond its source (kind, category, env, args, network, serverJson: see
// core/packages/mcp-server.ts), kept with the request so that the worker's job reads it.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('package_imports', (t) => {
    t.jsonb('options');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('package_imports', (t) => {
    t.dropColumn('options');
  });
}
