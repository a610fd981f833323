import type { Knex } from 'knex';

// What a tool produced is stored as `json`, not `jsonb`: json keeps the tool's text exactly (key order included) and
// accepts the escape \u0000, which jsonb refuses (a tool that returned a NUL character used to fail its execution's
// finish and wedge it in `running`). Nothing queries inside these columns.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table executions alter column result type json using result::json`);
  await knex.raw(`alter table scenario_runs alter column steps drop default`);
  await knex.raw(`alter table scenario_runs alter column steps type json using steps::json`);
  await knex.raw(`alter table scenario_runs alter column steps set default '[]'::json`);
}

export async function down(knex: Knex): Promise<void> {
  // A stored \u0000 cannot go back into jsonb: it becomes U+FFFD.
  await knex.raw(`alter table executions alter column result type jsonb using replace(result::text, '\\u0000', '\\ufffd')::jsonb`);
  await knex.raw(`alter table scenario_runs alter column steps drop default`);
  await knex.raw(`alter table scenario_runs alter column steps type jsonb using replace(steps::text, '\\u0000', '\\ufffd')::jsonb`);
  await knex.raw(`alter table scenario_runs alter column steps set default '[]'::jsonb`);
}
