import type { Knex } from 'knex';

// OAuth 2.1 for MCP clients (issue 44 item 1, api/oauth/): oidc-provider's storage — one row per artifact it keeps
// (clients it registered, grants, interactions, sessions, codes, access and refresh tokens), keyed by its model name and
// id, with the columns its adapter looks things up by (grant, uid, user code) and the account, so that a user's grants
// can be listed and revoked; `expires_at` null never expires (the server's own signing and cookie keys).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table oauth_models (
      name text not null,
      id text not null,
      payload jsonb not null,
      grant_id text,
      uid text,
      user_code text,
      account_id text,
      expires_at timestamptz,
      consumed_at timestamptz,
      created_at timestamptz not null default now(),
      primary key (name, id)
    )`);
  await knex.raw('create index oauth_models_grant on oauth_models (grant_id) where grant_id is not null');
  await knex.raw('create index oauth_models_uid on oauth_models (uid) where uid is not null');
  await knex.raw('create index oauth_models_account on oauth_models (account_id, name) where account_id is not null');
  await knex.raw('create index oauth_models_expires on oauth_models (expires_at) where expires_at is not null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table oauth_models');
}
