/** The tool catalogue: list (18), detail (19), ranked search (20), trending (21), rating (22). */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { AppDeps } from '../deps.js';
import { booleanQuery, limitQuery, pageOf, paging, QUERY_TEXT_MAX, validate } from '../validate.js';
import { requireCaller } from '../middleware/auth.js';
import { errors } from '../../core/errors.js';
import { CATEGORIES } from '../../core/types.js';
import { TRENDING_PERIODS, ratingEventWeight } from '../../core/scoring.js';
import { findToolByRef, findToolsByIds, listTools, refreshQualityScore, type ToolRow } from '../../core/repos/tools.js';
import { recordToolEvent, trendingScores, upsertRating } from '../../core/repos/feedback.js';
import * as map from '../mappers.js';

const category = z.enum(CATEGORIES);
const listQuery = z.object({
  ...paging(20, 100),
  category: category.optional(),
  q: z.string().trim().max(QUERY_TEXT_MAX).optional(),
  official: booleanQuery.optional(),
});
const searchQuery = z.object({
  q: z.string({ message: 'is required' }).trim().min(1, 'is required').max(QUERY_TEXT_MAX),
  category: category.optional(),
  limit: limitQuery(10, 100, 1),
});
const trendingQuery = z.object({
  period: z.enum(Object.keys(TRENDING_PERIODS) as [keyof typeof TRENDING_PERIODS]).default('week'),
  category: category.optional(),
  limit: limitQuery(20, 50),
});
const rateBody = z.object({ rating: z.number().int('must be an integer').min(1).max(5) }).strict();

/** Loads a tool by id, slug or `<package>::<tool>`, or throws 404. */
export async function loadTool(deps: AppDeps, ref: string): Promise<ToolRow> {
  const tool = await findToolByRef(deps.db, ref);
  if (!tool) throw errors.notFound('Tool', ref);
  return tool;
}

function inOrder(rows: ToolRow[], ids: string[]): ToolRow[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => byId.get(id)).filter((r): r is ToolRow => r !== undefined);
}

export function toolRoutes(router: Router, deps: AppDeps) {
  router.get('/api/tools', async (ctx) => {
    const q = validate(listQuery, ctx.query, 'query');
    const rows = await listTools(deps.db, q);
    const page = pageOf(rows, q.limit, q.offset);
    ctx.body = { success: true, data: page.items.map(map.toolListItem), pagination: page.pagination };
  });

  router.get('/api/tools/search', async (ctx) => {
    const q = validate(searchQuery, ctx.query, 'query');
    const result = await deps.search.search({ q: q.q, category: q.category, limit: q.limit });
    const ids = result.hits.map((h) => h.id);
    const tools = inOrder(await deps.tools.getMany(ids), ids).filter((t) => t.health_status !== 'BROKEN');
    ctx.body = { success: true, query: q.q, results: { total: result.total, tools: tools.map(map.toolListItem) } };
  });

  router.get('/api/tools/trending', async (ctx) => {
    const q = validate(trendingQuery, ctx.query, 'query');
    const scores = await trendingScores(deps.db, q);
    const ids = scores.map((s) => s.tool_id);
    const tools = inOrder(await findToolsByIds(deps.db, ids), ids);
    const scoreOf = new Map(scores.map((s) => [s.tool_id, s.score]));
    ctx.body = {
      success: true,
      data: tools.map((t) => ({ ...map.toolListItem(t), trendingScore: Math.round(scoreOf.get(t.id)! * 100) / 100, period: q.period })),
    };
  });

  router.post('/api/tools/*ref/rate', async (ctx: Context) => {
    const caller = requireCaller(ctx);
    const tool = await loadTool(deps, String(ctx.params.ref));
    const { rating } = validate(rateBody, ctx.request.body, 'body');
    const totals = await deps.db.transaction(async (trx) => {
      const previous = await trx('tool_ratings').where({ tool_id: tool.id, user_id: caller.userId }).first('rating');
      const t = await upsertRating(trx, tool.id, caller.userId, rating);
      if (!previous) await recordToolEvent(trx, tool.id, 'rating', ratingEventWeight(rating));
      await refreshQualityScore(trx, tool.id);
      return t;
    });
    ctx.body = {
      success: true,
      data: { userRating: rating, averageRating: map.averageRating(totals.ratingSum, totals.ratingCount), ratingCount: totals.ratingCount },
    };
  });
}

/** Mounted last among tool routes: `/api/tools/<id | slug>` (slugs contain slashes). */
export function toolDetailRoutes(router: Router, deps: AppDeps) {
  router.get('/api/tools/*ref', async (ctx: Context) => {
    ctx.body = { success: true, data: map.toolDetail(await loadTool(deps, String(ctx.params.ref))) };
  });
}
