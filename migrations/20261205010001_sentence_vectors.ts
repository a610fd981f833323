import type { Knex } from 'knex';

// The sentence encoder's tool vectors (issue 28 item 1, docs/search.md): kept so that a restart, or a second API
// process, reads them instead of encoding every tool again. Keyed by a hash of the model and of the exact text the
// encoder read (a tool's name as words and its description), so an edited description gets a new row; rows no tool
// reads any more are deleted when an API process loads the index. 512 float32 values (2 KiB) a row.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table search_sentence_vectors (
      text_hash text primary key,
      vector bytea not null,
      created_at timestamptz not null default now()
    )`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table search_sentence_vectors');
}
