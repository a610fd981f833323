/**
 * Browser sessions, kept in Postgres. The cookie holds a random token; the table holds only its SHA-256, so a copy
 * of the table opens no session. The CSRF token of a session is derived from its token (never stored, never the
 * token itself): a page reads it from /api/auth/me and sends it in X-CSRF-Token with every write.
 */
import crypto from 'node:crypto';
import type { Db } from '../infra/db.js';
import { randomBase62 } from '../infra/crypto.js';
import type { Caller } from '../types.js';

export const SESSION_COOKIE = 'toolshed_session';
export const SESSION_TOKEN_PATTERN = /^tss_[0-9A-Za-z]{43}$/;
/** last_seen_at is written at most this often per session. */
const TOUCH_EVERY_MS = 5 * 60_000;

export const hashSessionToken = (token: string) => crypto.createHash('sha256').update(`session:${token}`).digest('hex');
export const csrfTokenOf = (token: string) => crypto.createHash('sha256').update(`csrf:${token}`).digest('base64url');

export interface SessionCaller {
  sessionId: string;
  caller: Caller;
}

export async function createSession(db: Db, userId: string, days: number, userAgent?: string): Promise<{ token: string; expiresAt: Date }> {
  const token = `tss_${randomBase62(43)}`;
  const expiresAt = new Date(Date.now() + days * 86_400_000);
  await db('sessions').insert({ user_id: userId, token_hash: hashSessionToken(token), user_agent: userAgent?.slice(0, 300) ?? null, expires_at: expiresAt });
  return { token, expiresAt };
}

/** The caller behind a live session token, or undefined (unknown, expired or signed out). */
export async function findSessionCaller(db: Db, token: string): Promise<SessionCaller | undefined> {
  if (!SESSION_TOKEN_PATTERN.test(token)) return undefined;
  const row = await db('sessions as s')
    .join('users as u', 'u.id', 's.user_id')
    .where('s.token_hash', hashSessionToken(token))
    .where('s.expires_at', '>', db.fn.now())
    .first('s.id as sessionId', 's.last_seen_at', 'u.id as userId', 'u.username', 'u.name', 'u.tier');
  if (!row) return undefined;
  if (Date.now() - new Date(row.last_seen_at).getTime() > TOUCH_EVERY_MS) {
    void db('sessions')
      .where({ id: row.sessionId })
      .update({ last_seen_at: db.fn.now() })
      .catch(() => undefined);
  }
  return { sessionId: row.sessionId, caller: { userId: row.userId, username: row.username, name: row.name, tier: row.tier, keyId: null } };
}

export async function deleteSession(db: Db, token: string): Promise<void> {
  await db('sessions')
    .where({ token_hash: hashSessionToken(token) })
    .delete();
}

/** Signs a user out everywhere; returns how many sessions ended. */
export async function deleteUserSessions(db: Db, userId: string): Promise<number> {
  return db('sessions').where({ user_id: userId }).delete();
}

export async function deleteExpiredSessions(db: Db): Promise<number> {
  return db('sessions').where('expires_at', '<', db.fn.now()).delete();
}
