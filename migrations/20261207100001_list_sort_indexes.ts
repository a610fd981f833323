import type { Knex } from 'knex';

// Indexes for list reads that sorted every row (issue 45, bench:scale): the scenarios list (core/repos/scenarios.ts
// listScenarios) orders by its sort column `desc nulls last, id desc`, which no index matched, so each page joined and
// sorted every scenario; now each sort walks its own index and stops at the page. The MCP Registry's package servers
// (core/repos/registry.ts listRegistryPackages) are ordered by their server-name key, an expression: the page now walks
// that expression's index over the MCP packages instead of reading and sorting every package.
const SORTS = ['created_at', 'quality_score', 'total_runs', 'last_run_at'];
const PACKAGE_KEY = `(case when name like '@%/%' then '.' || substr(split_part(name, '/', 1), 2) || '/' || split_part(name, '/', 2) else '/' || name end) collate "C"`;

export async function up(knex: Knex): Promise<void> {
  for (const col of SORTS) await knex.raw(`create index scenarios_list_${col} on scenarios (${col} desc nulls last, id desc)`);
  await knex.raw(`create index packages_registry_key on packages ((${PACKAGE_KEY})) where jsonb_typeof(manifest->'mcp') = 'object'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index packages_registry_key');
  for (const col of SORTS) await knex.raw(`drop index scenarios_list_${col}`);
}
