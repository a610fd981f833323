/**
 * Collections (1–8): public list, detail by uid or id, create, partial update, add/remove tools, like toggle, delete.
 * Reads of a private collection are 404 to everyone but its owner; changes need a key (401) and ownership (403).
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { AppDeps } from '../deps.js';
import { pageOf, paging, QUERY_TEXT_MAX, validate } from '../validate.js';
import { callerOf, requireCaller } from '../middleware/auth.js';
import { errors } from '../../core/errors.js';
import {
  UID_MAX,
  UID_MIN,
  UID_PATTERN,
  addToolToCollection,
  collectionTools,
  createCollection,
  loadOwnedCollection,
  loadVisibleCollection,
} from '../../core/collections.js';
import {
  deleteCollection,
  deleteCollectionTool,
  isLikedBy,
  isUuid,
  listPublicCollections,
  toggleLike,
  updateCollection,
} from '../../core/repos/collections.js';
import { loadTool } from './tools.js';
import * as map from '../collection-mappers.js';

const listQuery = z.object({ ...paging(20, 50), q: z.string().trim().max(QUERY_TEXT_MAX).optional() });
const name = z.string().trim().min(1, 'must not be empty').max(100);
const description = z.string().max(1000).nullable();
const uid = z
  .string()
  .min(UID_MIN)
  .max(UID_MAX)
  .regex(UID_PATTERN, 'must be lower-case letters and digits separated by single hyphens')
  .refine((v) => !isUuid(v), 'must not look like an id');
const createBody = z.object({ name, uid: uid.optional(), description: description.optional(), isPublic: z.boolean().optional() }).strict();
const patchBody = z
  .object({ name: name.optional(), description: description.optional(), isPublic: z.boolean().optional() })
  .strict()
  .refine((b) => Object.keys(b).length > 0, 'give at least one of name, description, isPublic');
const addToolBody = z.object({ toolId: z.string().min(1).max(500) }).strict();

async function renderDetail(ctx: Context, deps: AppDeps, ref: string) {
  const caller = callerOf(ctx);
  const c = await loadVisibleCollection(deps.db, ref, caller);
  const [tools, liked] = await Promise.all([collectionTools(deps.tools, c), caller ? isLikedBy(deps.db, c.id, caller.userId) : undefined]);
  return map.collectionDetail(c, tools, liked);
}

export function collectionRoutes(router: Router, deps: AppDeps) {
  router.get('/api/collections', async (ctx) => {
    const q = validate(listQuery, ctx.query, 'query');
    const page = pageOf(await listPublicCollections(deps.db, q), q.limit, q.offset);
    ctx.body = { success: true, data: page.items.map(map.collectionListItem), pagination: page.pagination };
  });

  router.get('/api/collections/:uid', async (ctx) => {
    ctx.body = { success: true, data: await renderDetail(ctx, deps, ctx.params.uid) };
  });

  router.post('/api/collections', async (ctx) => {
    const caller = requireCaller(ctx);
    const body = validate(createBody, ctx.request.body, 'body');
    const id = await createCollection(deps.db, caller.userId, body);
    ctx.status = 201;
    ctx.body = { success: true, data: await renderDetail(ctx, deps, id) };
  });

  router.patch('/api/collections/:uid', async (ctx) => {
    const caller = requireCaller(ctx);
    const c = await loadOwnedCollection(deps.db, ctx.params.uid, caller);
    const body = validate(patchBody, ctx.request.body, 'body');
    await updateCollection(deps.db, c.id, body);
    ctx.body = { success: true, data: await renderDetail(ctx, deps, c.id) };
  });

  router.delete('/api/collections/:uid', async (ctx) => {
    const caller = requireCaller(ctx);
    const c = await loadOwnedCollection(deps.db, ctx.params.uid, caller);
    if (!(await deleteCollection(deps.db, c.id))) throw errors.notFound('Collection', ctx.params.uid);
    ctx.body = { success: true, message: `Collection '${c.uid}' deleted with its tools list, likes and scenarios` };
  });

  router.post('/api/collections/:uid/tools', async (ctx) => {
    const caller = requireCaller(ctx);
    const c = await loadOwnedCollection(deps.db, ctx.params.uid, caller);
    const { toolId } = validate(addToolBody, ctx.request.body, 'body');
    const tool = await loadTool(deps, toolId);
    const toolCount = await addToolToCollection(deps.db, c.id, tool.id);
    ctx.status = 201;
    ctx.body = { success: true, data: { collectionId: c.id, toolId: tool.id, toolCount } };
  });

  router.delete('/api/collections/:uid/tools/*toolId', async (ctx: Context) => {
    const caller = requireCaller(ctx);
    const c = await loadOwnedCollection(deps.db, ctx.params.uid, caller);
    const tool = await loadTool(deps, String(ctx.params.toolId));
    if (!(await deleteCollectionTool(deps.db, c.id, tool.id))) throw errors.notFound(`Tool '${String(ctx.params.toolId)}' in collection '${c.uid}'`);
    ctx.body = { success: true, message: `Tool '${tool.package_name}/${tool.name}' removed from collection '${c.uid}'` };
  });

  router.post('/api/collections/:uid/like', async (ctx) => {
    const caller = requireCaller(ctx);
    const c = await loadVisibleCollection(deps.db, ctx.params.uid, caller);
    const result = await deps.db.transaction((trx) => toggleLike(trx, c.id, caller.userId));
    if (!result) throw errors.notFound('Collection', ctx.params.uid);
    ctx.body = { success: true, data: result };
  });
}
