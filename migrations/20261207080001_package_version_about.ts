import type { Knex } from 'knex';

// What a package says about itself, recorded at import from the installed package (core/packages/about.ts): its README
// (bounded), licence, repository and homepage. Shown on the package and tool pages; null for versions recorded before.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('package_versions', (t) => {
    t.jsonb('about');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('package_versions', (t) => {
    t.dropColumn('about');
  });
}
