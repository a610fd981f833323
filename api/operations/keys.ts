/** The caller's API keys: create (the secret is shown once), list (no secrets), revoke (effective on the next request). */
import { z } from 'zod';
import { singleLine } from '../validate.js';
import { defineOperation, type Operation } from './define.js';
import { nullableTimestamp, ok, okMessage, timestamp, uuid } from './envelope.js';
import { requireCaller } from '../middleware/auth.js';
import { errors } from '../../core/infra/errors.js';
import { generateApiKey } from '../../core/infra/crypto.js';
import { findApiKey, insertApiKeyCapped, listApiKeys, revokeApiKey, type ApiKeyRow } from '../../core/repos/users.js';

// ---- response schema and mapper ----

const apiKeySchema = z.object({
  id: uuid,
  name: z.string().nullable(),
  prefix: z.string().meta({ description: 'The first characters of the key, to recognise it by' }),
  createdAt: timestamp,
  lastUsedAt: nullableTimestamp,
  revokedAt: nullableTimestamp,
});

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

export function toApiKey(k: ApiKeyRow): z.infer<typeof apiKeySchema> {
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    createdAt: new Date(k.created_at).toISOString(),
    lastUsedAt: iso(k.last_used_at),
    revokedAt: iso(k.revoked_at),
  };
}

// ---- input schemas ----

const createBody = z.object({ name: singleLine(100).optional() }).strict();
const idParams = z.object({ id: z.string().uuid('must be a key id') });

/** Refused before any handler: a malformed URL or body (400); on methods that may carry a body, one over 1 MiB (413) or not JSON (415). */
const REQUEST = [400];
const BODY = [400, 413, 415];
const base = { tag: 'Keys', errorShape: 'A', auth: 'key' } as const;

export const keyOperations: Operation[] = [
  defineOperation({
    ...base,
    id: 'keys.create',
    method: 'post',
    path: '/api/keys',
    summary: 'Creates an API key for the caller (the secret is in this answer only)',
    body: createBody,
    responses: { 201: ok(apiKeySchema.extend({ key: z.string().meta({ description: '`tsk_` and 40 base62 characters; shown once' }) })) },
    errors: [...BODY, 409],
    handler: async (ctx, deps, { body }) => {
      const caller = requireCaller(ctx);
      const secret = generateApiKey();
      const max = deps.config.MAX_KEYS_PER_USER;
      const row = await insertApiKeyCapped(deps.db, { userId: caller.userId, name: body.name, prefix: secret.prefix, hash: secret.hash }, max);
      if (!row) throw errors.conflict(`A user may hold at most ${max} API keys; revoke one first`);
      return { success: true, data: { ...toApiKey(row), key: secret.key } };
    },
  }),
  defineOperation({
    ...base,
    id: 'keys.list',
    method: 'get',
    path: '/api/keys',
    summary: "The caller's API keys, without their secrets",
    responses: { 200: ok(z.array(apiKeySchema)) },
    errors: REQUEST,
    handler: async (ctx, deps) => ({ success: true, data: (await listApiKeys(deps.db, requireCaller(ctx).userId)).map(toApiKey) }),
  }),
  defineOperation({
    ...base,
    id: 'keys.revoke',
    method: 'delete',
    path: '/api/keys/:id',
    summary: "Revokes one of the caller's keys (its next request is 401)",
    params: idParams,
    responses: { 200: okMessage },
    errors: [...BODY, 404],
    handler: async (ctx, deps, { params }) => {
      const caller = requireCaller(ctx);
      const key = await findApiKey(deps.db, params.id);
      if (!key || key.user_id !== caller.userId) throw errors.notFound('API key', params.id);
      deps.callers.forget(await revokeApiKey(deps.db, params.id));
      return { success: true, message: 'API key revoked' };
    },
  }),
];
