/** The caller's API keys: create (shown once), list (no secrets), revoke (effective on the next request). */
import type Router from '@koa/router';
import { z } from 'zod';
import type { AppDeps } from '../deps.js';
import { validate } from '../validate.js';
import { requireCaller } from '../middleware/auth.js';
import { errors } from '../../core/errors.js';
import { generateApiKey } from '../../core/crypto.js';
import { findApiKey, insertApiKeyCapped, listApiKeys, revokeApiKey } from '../../core/repos/users.js';
import * as map from '../mappers.js';

const createBody = z.object({ name: z.string().trim().min(1).max(100).optional() }).strict();
const idParams = z.object({ id: z.string().uuid('must be a key id') });

export function keyRoutes(router: Router, deps: AppDeps) {
  router.post('/api/keys', async (ctx) => {
    const caller = requireCaller(ctx);
    const body = validate(createBody, ctx.request.body, 'body');
    const secret = generateApiKey();
    const max = deps.config.MAX_KEYS_PER_USER;
    const row = await insertApiKeyCapped(deps.db, { userId: caller.userId, name: body.name, prefix: secret.prefix, hash: secret.hash }, max);
    if (!row) throw errors.conflict(`A user may hold at most ${max} API keys; revoke one first`);
    ctx.status = 201;
    ctx.body = { success: true, data: { ...map.apiKey(row), key: secret.key } };
  });

  router.get('/api/keys', async (ctx) => {
    const caller = requireCaller(ctx);
    ctx.body = { success: true, data: (await listApiKeys(deps.db, caller.userId)).map(map.apiKey) };
  });

  router.delete('/api/keys/:id', async (ctx) => {
    const caller = requireCaller(ctx);
    const { id } = validate(idParams, ctx.params, 'params');
    const key = await findApiKey(deps.db, id);
    if (!key || key.user_id !== caller.userId) throw errors.notFound('API key', id);
    deps.callers.forget(await revokeApiKey(deps.db, id));
    ctx.body = { success: true, message: 'API key revoked' };
  });
}
