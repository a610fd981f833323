/** Single-use sign-up invitations (SIGNUP=invite): the operator mints one; a sign-up spends it. Only hashes are kept. */
import crypto from 'node:crypto';
import type { Db } from '../infra/db.js';
import { randomBase62 } from '../infra/crypto.js';

export const INVITATION_PATTERN = /^tsi_[0-9A-Za-z]{32}$/;
const hashOf = (token: string) => crypto.createHash('sha256').update(`invitation:${token}`).digest('hex');

export async function createInvitation(db: Db, opts: { note?: string; days: number }): Promise<{ id: string; token: string; expiresAt: Date }> {
  const token = `tsi_${randomBase62(32)}`;
  const expiresAt = new Date(Date.now() + opts.days * 86_400_000);
  const [row] = await db('invitations')
    .insert({ token_hash: hashOf(token), note: opts.note ?? null, expires_at: expiresAt })
    .returning('id');
  return { id: row.id, token, expiresAt };
}

/** Marks the invitation used by `userId` if it is unused and unexpired; false otherwise. Run it in the sign-up's transaction. */
export async function spendInvitation(db: Db, token: string, userId: string): Promise<boolean> {
  if (!INVITATION_PATTERN.test(token)) return false;
  const rows = await db('invitations')
    .where({ token_hash: hashOf(token) })
    .whereNull('used_at')
    .where('expires_at', '>', db.fn.now())
    .update({ used_at: db.fn.now(), used_by: userId })
    .returning('id');
  return rows.length === 1;
}
