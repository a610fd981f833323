import type { Knex } from 'knex';

// Who a trending event is from (collection adds only), so that one user's add/remove/add loop counts once: at most
// one collection_add row per user, tool and UTC day (the unique partial index; inserts that hit it do nothing), and
// trending sums one add per user and tool over its period. Older rows have no user and count as before.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tool_events', (t) => {
    t.uuid('user_id').references('users.id').onDelete('SET NULL');
  });
  await knex.raw(
    `create unique index tool_events_collection_add_once
       on tool_events (tool_id, user_id, ((created_at at time zone 'UTC')::date))
       where kind = 'collection_add' and user_id is not null`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists tool_events_collection_add_once');
  await knex.schema.alterTable('tool_events', (t) => {
    t.dropColumn('user_id');
  });
}
