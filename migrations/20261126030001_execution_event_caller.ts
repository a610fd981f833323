import type { Knex } from 'knex';

// Who an execution's trending event is from (the execution's caller: `user:<id>` or `ip:<address or /64>`), so that
// trending counts one execution per caller and tool over its period, however often that caller repeats it. Older rows
// have no caller and count as before.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tool_events', (t) => {
    t.text('caller');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tool_events', (t) => {
    t.dropColumn('caller');
  });
}
