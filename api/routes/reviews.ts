/** Reviews (23): one per user per tool (a second replaces the first), and the public paged list. */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { AppDeps } from '../deps.js';
import { pageOf, paging, validate } from '../validate.js';
import { requireCaller } from '../middleware/auth.js';
import { TRENDING_WEIGHTS } from '../../core/scoring.js';
import { listReviews, recordToolEvent, upsertReview } from '../../core/repos/feedback.js';
import { loadTool } from './tools.js';
import * as map from '../mappers.js';

const reviewBody = z
  .object({
    rating: z.number().int('must be an integer').min(1).max(5),
    title: z.string().trim().max(120).optional(),
    body: z.string().trim().min(1).max(5000),
  })
  .strict();
const listQuery = z.object(paging(20, 100));

export function reviewRoutes(router: Router, deps: AppDeps) {
  router.post('/api/tools/*ref/reviews', async (ctx: Context) => {
    const caller = requireCaller(ctx);
    const tool = await loadTool(deps, String(ctx.params.ref));
    const body = validate(reviewBody, ctx.request.body, 'body');
    const { review, created } = await deps.db.transaction(async (trx) => {
      const r = await upsertReview(trx, { toolId: tool.id, userId: caller.userId, rating: body.rating, title: body.title ?? null, body: body.body });
      if (r.created) await recordToolEvent(trx, tool.id, 'review', TRENDING_WEIGHTS.review);
      return r;
    });
    ctx.status = created ? 201 : 200;
    ctx.body = { success: true, data: map.review(review) };
  });

  router.get('/api/tools/*ref/reviews', async (ctx: Context) => {
    const tool = await loadTool(deps, String(ctx.params.ref));
    const q = validate(listQuery, ctx.query, 'query');
    const page = pageOf(await listReviews(deps.db, tool.id, q.limit, q.offset), q.limit, q.offset);
    ctx.body = { success: true, data: page.items.map(map.review), pagination: page.pagination };
  });
}
