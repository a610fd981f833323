/**
 * oauth_models: the storage of the OAuth authorization server (oidc-provider, api/oauth/provider.ts) — its adapter's
 * queries, a user's grants (listed and revoked from the account settings), and the server's own keys.
 */
import crypto from 'node:crypto';
import type { Db } from '../infra/db.js';

/**
 * The models whose id is a bearer secret (a token or code a client presents): stored as its SHA-256, never as it is,
 * and without the payload's `jti` (the same value), as API keys are kept by their hash. A read of the table gives no
 * usable token; a lookup hashes what the client presented.
 */
const SECRET_IDS = new Set(['AccessToken', 'RefreshToken', 'AuthorizationCode', 'RegistrationAccessToken', 'ClientCredentials', 'DeviceCode']);
const storedId = (name: string, id: string) => (SECRET_IDS.has(name) ? `sha256:${crypto.createHash('sha256').update(id).digest('hex')}` : id);

export interface OAuthPayload {
  grantId?: string;
  uid?: string;
  userCode?: string;
  accountId?: string;
  consumed?: unknown;
  [k: string]: unknown;
}

/** An artifact is found only until it expires. */
const live =
  (db: Db, column = 'expires_at') =>
  (q: ReturnType<Db>) =>
    q.where((w) => w.whereNull(column).orWhere(column, '>', db.fn.now()));

export async function upsertOAuthModel(db: Db, name: string, id: string, payload: OAuthPayload, expiresInSeconds: number | undefined): Promise<void> {
  const { jti: _secret, ...kept } = payload;
  const row = {
    name,
    id: storedId(name, id),
    payload: JSON.stringify(SECRET_IDS.has(name) ? kept : payload),
    grant_id: payload.grantId ?? null,
    uid: payload.uid ?? null,
    user_code: payload.userCode ?? null,
    account_id: payload.accountId ?? null,
    expires_at: expiresInSeconds ? new Date(Date.now() + expiresInSeconds * 1000) : null,
  };
  await db('oauth_models').insert(row).onConflict(['name', 'id']).merge();
}

async function findBy(db: Db, name: string, column: 'id' | 'uid' | 'user_code', value: string): Promise<OAuthPayload | undefined> {
  const key = column === 'id' ? storedId(name, value) : value;
  const row = await live(db)(db('oauth_models').where({ name, [column]: key })).first('payload', 'consumed_at');
  if (!row) return undefined;
  return {
    ...row.payload,
    ...(column === 'id' && SECRET_IDS.has(name) ? { jti: value } : {}),
    ...(row.consumed_at ? { consumed: Math.floor(new Date(row.consumed_at).getTime() / 1000) } : {}),
  };
}

export const findOAuthModel = (db: Db, name: string, id: string) => findBy(db, name, 'id', id);
export const findOAuthModelByUid = (db: Db, name: string, uid: string) => findBy(db, name, 'uid', uid);
export const findOAuthModelByUserCode = (db: Db, name: string, userCode: string) => findBy(db, name, 'user_code', userCode);

export async function consumeOAuthModel(db: Db, name: string, id: string): Promise<void> {
  await db('oauth_models')
    .where({ name, id: storedId(name, id) })
    .update({ consumed_at: db.fn.now() });
}

export async function destroyOAuthModel(db: Db, name: string, id: string): Promise<void> {
  await db('oauth_models')
    .where({ name, id: storedId(name, id) })
    .delete();
}

/** Every artifact of a grant (its codes and tokens), and the grant itself: nothing issued under it works any more. */
export async function revokeOAuthGrant(db: Db, grantId: string): Promise<void> {
  await db('oauth_models').where({ grant_id: grantId }).orWhere({ name: 'Grant', id: grantId }).delete();
}

/** Expired artifacts, deleted now and then by the server as it writes new ones. */
export async function deleteExpiredOAuthModels(db: Db): Promise<number> {
  return db('oauth_models').where('expires_at', '<', db.fn.now()).delete();
}

export interface OAuthGrantRow {
  id: string;
  clientId: string;
  clientName: string | null;
  resources: string[];
  createdAt: Date;
  expiresAt: Date | null;
}

/** A user's live grants, newest first, each with its client's name (when the client is still registered). */
export async function listOAuthGrants(db: Db, userId: string): Promise<OAuthGrantRow[]> {
  const rows = await live(
    db,
    'g.expires_at',
  )(db('oauth_models as g').where({ 'g.name': 'Grant', 'g.account_id': userId }))
    .leftJoin('oauth_models as c', (j) => j.on('c.name', '=', db.raw("'Client'")).andOn('c.id', '=', db.raw("g.payload->>'clientId'")))
    .orderBy('g.created_at', 'desc')
    .select('g.id', 'g.payload', 'g.created_at', 'g.expires_at', db.raw("c.payload->>'client_name' as client_name"));
  return rows.map(
    (r: {
      id: string;
      payload: { clientId: string; resources?: Record<string, string> };
      created_at: Date;
      expires_at: Date | null;
      client_name: string | null;
    }) => ({
      id: r.id,
      clientId: r.payload.clientId,
      clientName: r.client_name,
      resources: Object.keys(r.payload.resources ?? {}),
      createdAt: r.created_at,
      expiresAt: r.expires_at,
    }),
  );
}

export async function findOAuthGrantOwner(db: Db, grantId: string): Promise<string | undefined> {
  const row = await live(db)(db('oauth_models').where({ name: 'Grant', id: grantId })).first('account_id');
  return row?.account_id ?? undefined;
}

/**
 * The authorization server's signing keys and cookie keys, made once and shared by every API process: the first to
 * ask inserts what `create` makes; everyone reads what is stored.
 */
export async function loadOrCreateOAuthSecrets<T extends object>(db: Db, create: () => T): Promise<T> {
  await db('oauth_models')
    .insert({ name: 'ServerSecrets', id: 'current', payload: JSON.stringify(create()) })
    .onConflict(['name', 'id'])
    .ignore();
  const row = await db('oauth_models').where({ name: 'ServerSecrets', id: 'current' }).first('payload');
  return row.payload as T;
}

/** The user an OAuth access token acts as, as a Caller (keyId null: a token is not an API key). */
export async function findOAuthCaller(db: Db, userId: string): Promise<import('../types.js').Caller | undefined> {
  const row = await db('users').where({ id: userId }).first('id', 'username', 'name', 'tier');
  return row ? { userId: row.id, username: row.username, name: row.name, tier: row.tier, keyId: null } : undefined;
}
