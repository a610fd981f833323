import type { Knex } from 'knex';

// Tool poisoning (issue 43 item 4, core/packages/poisoning.ts): the risks found in a tool's descriptions at import
// (`[{ kind, detail }]`, [] when none, null before the check ran), and an admin's clearing of a false alarm: when, and
// the digest of the texts that were cleared, so that the clearing holds only while those texts do not change.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table tools
      add column risks jsonb,
      add column risks_cleared_at timestamptz,
      add column risks_cleared_digest text`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table tools drop column risks, drop column risks_cleared_at, drop column risks_cleared_digest');
}
