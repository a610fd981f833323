/**
 * Web app accounts: sign-up (governed by SIGNUP), sign-in with username and password. A user made by the admin
 * endpoint or the CLI has no password and cannot sign in here until an operator gives them one.
 */
import { z } from 'zod';
import { singleLine } from '../text/single-line.js';
import type { Knex } from 'knex';
import type { Config } from '../infra/config.js';
import { AppError, errors } from '../infra/errors.js';
import type { UserRow } from '../repos/users.js';
import { decoyHash, hashPassword, PASSWORD_MAX, PASSWORD_MIN, verifyPassword } from './passwords.js';
import { spendInvitation } from './invitations.js';

export const usernameSchema = z
  .string()
  .regex(/^[A-Za-z0-9](?:[A-Za-z0-9_-]{1,38})$/, 'must be 2–39 letters, digits, "-" or "_", starting with a letter or digit');
export const passwordSchema = z.string().min(PASSWORD_MIN, `must be at least ${PASSWORD_MIN} characters`).max(PASSWORD_MAX);

export const signupSchema = z
  .object({
    username: usernameSchema,
    password: passwordSchema,
    name: singleLine(100).optional(),
    invitation: z.string().max(100).optional(),
  })
  .strict();

export const loginSchema = z.object({ username: z.string().min(1).max(100), password: z.string().min(1).max(PASSWORD_MAX) }).strict();

const USER_COLUMNS = ['id', 'username', 'name', 'tier', 'created_at'];

export async function signUp(db: Knex, config: Pick<Config, 'SIGNUP'>, input: z.infer<typeof signupSchema>): Promise<UserRow> {
  if (config.SIGNUP === 'closed') throw errors.forbidden('Sign-up is closed on this service; ask its operator for an account');
  if (config.SIGNUP === 'invite' && !input.invitation) throw errors.forbidden('Sign-up needs an invitation on this service');
  const passwordHash = await hashPassword(input.password);
  return db.transaction(async (trx) => {
    const taken = await trx('users').whereRaw('lower(username) = lower(?)', [input.username]).first('id');
    if (taken) throw errors.conflict(`Username '${input.username}' is taken`);
    const [user] = await trx('users')
      .insert({ username: input.username, name: input.name ?? null, tier: 'free', password_hash: passwordHash })
      .returning(USER_COLUMNS);
    if (config.SIGNUP === 'invite' && !(await spendInvitation(trx, input.invitation!, user.id))) {
      throw new AppError('FORBIDDEN', 403, 'This invitation is unknown, expired or already used');
    }
    return user as UserRow;
  });
}

/** The user whose password this is, or undefined; takes as long for an unknown username as for a wrong password. */
export async function checkPassword(db: Knex, username: string, password: string): Promise<UserRow | undefined> {
  const row = await db('users')
    .whereRaw('lower(username) = lower(?)', [username])
    .first([...USER_COLUMNS, 'password_hash']);
  const ok = await verifyPassword(password, row?.password_hash ?? (await decoyHash()));
  if (!row?.password_hash || !ok) return undefined;
  const { password_hash: _, ...user } = row;
  return user as UserRow;
}

/** Sets (or replaces) a user's password, e.g. for a user first made by the CLI. */
export async function setPassword(db: Knex, userId: string, password: string): Promise<void> {
  await db('users')
    .where({ id: userId })
    .update({ password_hash: await hashPassword(password) });
}
