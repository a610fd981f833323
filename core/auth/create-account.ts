/** Accounts: a user and their first API key, made together (admin endpoint and CLI share this). */
import { z } from 'zod';
import { singleLine } from '../text/single-line.js';
import type { Knex } from 'knex';
import { generateApiKey } from '../infra/crypto.js';
import { insertApiKey, insertUser, type ApiKeyRow, type UserRow } from '../repos/users.js';
import { TIERS } from '../types.js';

export const newUserSchema = z
  .object({
    username: z.string().regex(/^[A-Za-z0-9](?:[A-Za-z0-9_-]{1,38})$/, 'must be 2–39 letters, digits, "-" or "_", starting with a letter or digit'),
    name: singleLine(100).optional(),
    tier: z.enum(TIERS).default('free'),
  })
  .strict();

export type NewUser = z.infer<typeof newUserSchema>;

export async function createUserWithKey(db: Knex, u: NewUser): Promise<{ user: UserRow; key: ApiKeyRow; secret: string }> {
  return db.transaction(async (trx) => {
    const user = await insertUser(trx, u);
    const secret = generateApiKey();
    const key = await insertApiKey(trx, { userId: user.id, name: 'default', prefix: secret.prefix, hash: secret.hash });
    return { user, key, secret: secret.key };
  });
}
