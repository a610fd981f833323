import type { Knex } from 'knex';

/** The current version's compatibility with the one it replaced (core/packages/compatibility.ts); null for a first. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('packages', (t) => {
    t.jsonb('compatibility');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('packages', (t) => {
    t.dropColumn('compatibility');
  });
}
