/** Operator endpoints (ADMIN_TOKEN): create users with their first key, import tool packages. */
import type Router from '@koa/router';
import { z } from 'zod';
import type { AppDeps } from '../deps.js';
import { validate } from '../validate.js';
import { AppError, errors } from '../../core/errors.js';
import { createUserWithKey, newUserSchema } from '../../core/accounts.js';
import { findUserByUsername } from '../../core/repos/users.js';
import { requestImport } from '../../core/packages/request-import.js';
import { sourceSchema } from '../../core/packages/source.js';
import { toolsQuery, type ToolRow } from '../../core/repos/tools.js';
import * as map from '../mappers.js';
import { requireAdmin } from '../middleware/auth.js';

const importBody = z.object({ source: sourceSchema, official: z.boolean().optional() }).strict();
const IMPORT_WAIT_MS = 180_000;

export function adminRoutes(router: Router, deps: AppDeps) {
  router.post('/api/admin/users', async (ctx) => {
    requireAdmin(ctx);
    const body = validate(newUserSchema, ctx.request.body, 'body');
    if (await findUserByUsername(deps.db, body.username)) throw errors.conflict(`Username '${body.username}' is taken`);
    const { user, key, secret } = await createUserWithKey(deps.db, body);
    ctx.status = 201;
    ctx.body = {
      success: true,
      data: { user: map.user(user), apiKey: { id: key.id, key: secret, prefix: key.prefix, createdAt: map.iso(key.created_at) } },
    };
  });

  router.post('/api/admin/packages', async (ctx) => {
    requireAdmin(ctx);
    const body = validate(importBody, ctx.request.body, 'body');
    const imp = await requestImport(deps, { source: body.source, official: body.official ?? false }, IMPORT_WAIT_MS);
    if (imp.status === 'failed') {
      const e = imp.error!;
      if (e.code === 'VALIDATION_ERROR') throw errors.validation(e.message, e.details);
      throw new AppError('INTERNAL', 500, `Import failed: ${e.message}`);
    }
    if (imp.status !== 'succeeded') {
      ctx.status = 202;
      ctx.body = { success: true, data: { importId: imp.id, status: imp.status } };
      return;
    }
    const pkg = await deps.db('packages').where({ id: imp.package_id }).first();
    const tools: ToolRow[] = await toolsQuery(deps.db)
      .select('t.*', 'p.name as package_name', 'p.version as package_version', 'p.category as package_category', 'p.env as package_env')
      .where('t.package_id', pkg.id)
      .orderBy('t.name');
    ctx.status = 201;
    ctx.body = {
      success: true,
      data: { package: { name: pkg.name, version: pkg.version, category: pkg.category }, tools: tools.map(map.toolListItem) },
    };
  });
}
