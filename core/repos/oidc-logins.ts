/** oidc_logins: single sign-on attempts in progress (state, nonce, PKCE verifier), each consumed once. */
import type { Db } from '../infra/db.js';

export interface OidcLoginRow {
  state: string;
  nonce: string;
  code_verifier: string;
}

export async function insertOidcLogin(db: Db, handleHash: string, l: OidcLoginRow, expiresAt: Date): Promise<void> {
  await db('oidc_logins').insert({ handle_hash: handleHash, ...l, expires_at: expiresAt });
}

/** Deletes and returns the attempt if it exists and has not expired: a second callback with the same handle finds nothing. */
export async function takeOidcLogin(db: Db, handleHash: string): Promise<OidcLoginRow | undefined> {
  const [row] = await db('oidc_logins')
    .where({ handle_hash: handleHash })
    .where('expires_at', '>', db.fn.now())
    .delete()
    .returning(['state', 'nonce', 'code_verifier']);
  return row;
}

export async function deleteExpiredOidcLogins(db: Db): Promise<number> {
  return db('oidc_logins').where('expires_at', '<', db.fn.now()).delete();
}
