/**
 * Single sign-on through OpenID Connect: a user may be linked to one identity at the operator's provider (issuer and
 * subject, unique together), and each sign-in in progress keeps its state, nonce and PKCE verifier in a short-lived
 * row that the callback consumes once (the browser holds only a random handle to it, whose hash is the key).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.text('oidc_issuer');
    t.text('oidc_subject');
    t.unique(['oidc_issuer', 'oidc_subject']);
  });
  await knex.schema.createTable('oidc_logins', (t) => {
    t.text('handle_hash').primary();
    t.text('state').notNullable();
    t.text('nonce').notNullable();
    t.text('code_verifier').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('oidc_logins');
  await knex.schema.alterTable('users', (t) => {
    t.dropUnique(['oidc_issuer', 'oidc_subject']);
    t.dropColumn('oidc_subject');
    t.dropColumn('oidc_issuer');
  });
}
