/** users and api_keys. */
import type { Db, Knex } from '../infra/db.js';
import type { Caller, Tier } from '../types.js';

export interface UserRow {
  id: string;
  username: string;
  name: string | null;
  tier: Tier;
  created_at: Date;
}

export interface ApiKeyRow {
  id: string;
  user_id: string;
  name: string | null;
  prefix: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

export async function insertUser(db: Db, u: { username: string; name?: string | null; tier: Tier }): Promise<UserRow> {
  const [row] = await db('users')
    .insert({ username: u.username, name: u.name ?? null, tier: u.tier })
    .returning('*');
  return row;
}

export async function findUserByUsername(db: Db, username: string): Promise<UserRow | undefined> {
  return db('users').whereRaw('lower(username) = lower(?)', [username]).first();
}

export async function insertApiKey(db: Db, k: { userId: string; name?: string | null; prefix: string; hash: string }): Promise<ApiKeyRow> {
  const [row] = await db('api_keys')
    .insert({ user_id: k.userId, name: k.name ?? null, prefix: k.prefix, key_hash: k.hash })
    .returning(['id', 'user_id', 'name', 'prefix', 'created_at', 'last_used_at', 'revoked_at']);
  return row;
}

/**
 * Inserts a key unless the user already holds `max` unrevoked keys (undefined then). The user's row is locked for the
 * count, so concurrent requests cannot each see room for one more.
 */
export async function insertApiKeyCapped(
  db: Knex,
  k: { userId: string; name?: string | null; prefix: string; hash: string },
  max: number,
): Promise<ApiKeyRow | undefined> {
  return db.transaction(async (trx) => {
    await trx('users').where({ id: k.userId }).forUpdate().first('id');
    const [{ n }] = await trx('api_keys').where({ user_id: k.userId }).whereNull('revoked_at').count<{ n: string }[]>('* as n');
    if (Number(n) >= max) return undefined;
    return insertApiKey(trx, k);
  });
}

/** The caller behind a key hash, if the key exists and is not revoked. */
export async function findCallerByKeyHash(db: Db, hash: string): Promise<Caller | undefined> {
  const row = await db('api_keys as k')
    .join('users as u', 'u.id', 'k.user_id')
    .where('k.key_hash', hash)
    .whereNull('k.revoked_at')
    .first('k.id as keyId', 'u.id as userId', 'u.username', 'u.name', 'u.tier');
  return row;
}

/** Records that a key was just used (the keys page shows it). */
export async function touchApiKey(db: Db, keyId: string): Promise<void> {
  await db('api_keys').where({ id: keyId }).update({ last_used_at: db.fn.now() });
}

export async function listApiKeys(db: Db, userId: string): Promise<ApiKeyRow[]> {
  return db('api_keys')
    .where({ user_id: userId })
    .orderBy('created_at', 'desc')
    .select('id', 'user_id', 'name', 'prefix', 'created_at', 'last_used_at', 'revoked_at');
}

export async function findApiKey(db: Db, id: string): Promise<ApiKeyRow | undefined> {
  return db('api_keys').where({ id }).first('id', 'user_id', 'name', 'prefix', 'created_at', 'last_used_at', 'revoked_at');
}

/** Revokes the key and returns its hash (so that caches can forget it). */
export async function revokeApiKey(db: Db, id: string): Promise<string | undefined> {
  const [row] = await db('api_keys')
    .where({ id })
    .update({ revoked_at: db.raw('coalesce(revoked_at, now())') })
    .returning('key_hash');
  return row?.key_hash;
}

/** The user linked to this identity at an OpenID provider. */
export async function findUserByOidc(db: Db, issuer: string, subject: string): Promise<UserRow | undefined> {
  return db('users').where({ oidc_issuer: issuer, oidc_subject: subject }).first('id', 'username', 'name', 'tier', 'created_at');
}

/** Links a user to an identity at an OpenID provider, unless it already has one; false if it had one. */
export async function linkUserOidc(db: Db, userId: string, issuer: string, subject: string): Promise<boolean> {
  const n = await db('users').where({ id: userId }).whereNull('oidc_subject').update({ oidc_issuer: issuer, oidc_subject: subject });
  return n === 1;
}

/** Which of these usernames are taken (case-insensitively), lower-cased. */
export async function takenUsernames(db: Db, candidates: string[]): Promise<Set<string>> {
  const rows: { u: string }[] = await db('users')
    .whereRaw('lower(username) = any(?)', [candidates.map((c) => c.toLowerCase())])
    .select(db.raw('lower(username) as u'));
  return new Set(rows.map((r) => r.u));
}

/** A user made by single sign-on: no password, linked to its identity. */
export async function insertOidcUser(db: Db, u: { username: string; name: string | null; issuer: string; subject: string }): Promise<UserRow> {
  const [row] = await db('users')
    .insert({ username: u.username, name: u.name, tier: 'free', oidc_issuer: u.issuer, oidc_subject: u.subject })
    .returning(['id', 'username', 'name', 'tier', 'created_at']);
  return row;
}
