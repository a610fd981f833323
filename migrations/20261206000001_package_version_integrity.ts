import type { Knex } from 'knex';

// Issue 43 item 2: a recorded version never changes. Each version keeps the integrity of the bytes it was installed
// from (an npm tarball's `sha512-…`, as the registry's dist.integrity; a folder's tree hash `sha256-…`): a later
// import of the same version with other bytes is refused (409), and a run checks that the install it mounts was made
// from those bytes (sandbox/packages.ts verifyInstalled). Versions recorded before this have none (null): they are
// compared by their install path, as before.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table package_versions add column integrity text');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table package_versions drop column integrity');
}
