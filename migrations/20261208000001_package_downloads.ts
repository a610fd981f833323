import type { Knex } from 'knex';

// npm's weekly download count of an `npm:` package (core/packages/downloads.ts), refreshed daily by the worker's
// refresh_downloads job and after each import: the count and the week it covers as npm states them, and when npm was
// last asked (null: never asked; a count of null with a time: npm had no figure or could not be reached).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('packages', (t) => {
    t.integer('weekly_downloads');
    t.string('downloads_start', 10); // YYYY-MM-DD as npm states it (text: no time zone to shift it)
    t.string('downloads_end', 10);
    t.timestamp('downloads_checked_at', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('packages', (t) => {
    t.dropColumn('weekly_downloads');
    t.dropColumn('downloads_start');
    t.dropColumn('downloads_end');
    t.dropColumn('downloads_checked_at');
  });
}
