/** Reviews: one per user per tool (a second replaces the first, 200 instead of 201), and the public paged list. */
import { z } from 'zod';
import { defineOperation, reply, type Operation } from './define.js';
import { ok, okPage, timestamp, uuid } from './envelope.js';
import { loadTool } from './shared.js';
import { pageOf, paging, singleLine } from '../validate.js';
import { requireCaller } from '../middleware/auth.js';
import { reviewTool } from '../../core/tools/tool-feedback.js';
import { listReviews, type ReviewRow } from '../../core/repos/feedback.js';
import { isToolRefShape } from '../../core/repos/tools.js';

// ---- response schema and mapper ----

const reviewSchema = z.object({
  id: uuid,
  toolId: uuid,
  rating: z.number().int().min(1).max(5),
  title: z.string().nullable(),
  body: z.string(),
  user: z.object({ id: uuid, username: z.string() }),
  createdAt: timestamp,
  updatedAt: timestamp,
});

export function toReview(r: ReviewRow): z.infer<typeof reviewSchema> {
  return {
    id: r.id,
    toolId: r.tool_id,
    rating: r.rating,
    title: r.title,
    body: r.body,
    user: { id: r.user_id, username: r.username },
    createdAt: new Date(r.created_at).toISOString(),
    updatedAt: new Date(r.updated_at).toISOString(),
  };
}

// ---- input schemas ----

const refParams = z.object({ ref: z.string().meta({ description: 'Tool id, slug `<package>/<tool>`, or `<package>::<tool>`' }) });
const reviewBody = z
  .object({
    rating: z.number().int('must be an integer').min(1).max(5),
    title: singleLine(120, 0).optional(),
    body: z.string().trim().min(1).max(5000),
  })
  .strict();
const listQuery = z.object(paging(20, 100));

/** Refused before any handler: a malformed URL or body (400); on methods that may carry a body, one over 1 MiB (413) or not JSON (415). */
const REQUEST = [400];
const BODY = [400, 413, 415];
const base = { tag: 'Reviews', errorShape: 'A', path: '/api/tools/*ref/reviews', params: refParams } as const;

export const reviewOperations: Operation[] = [
  defineOperation({
    ...base,
    id: 'reviews.create',
    method: 'post',
    summary: "Reviews a tool (201); the user's second review replaces the first (200)",
    auth: 'key',
    body: reviewBody,
    responses: { 201: ok(reviewSchema), 200: ok(reviewSchema) },
    errors: [...BODY, 404],
    handler: async (ctx, deps, { params, body }) => {
      const caller = requireCaller(ctx);
      const tool = await loadTool(deps, params.ref);
      const { review, created } = await reviewTool(deps.db, {
        toolId: tool.id,
        userId: caller.userId,
        rating: body.rating,
        title: body.title ?? null,
        body: body.body,
      });
      return reply(created ? 201 : 200, { success: true, data: toReview(review) });
    },
  }),
  defineOperation({
    ...base,
    id: 'reviews.list',
    method: 'get',
    // `/api/tools/<package>/reviews`: `<package>` alone names no tool, so this is the detail of a tool named `reviews`.
    claims: (ctx) => isToolRefShape(ctx.params.ref ?? ''),
    summary: "A tool's reviews, most recently updated first",
    description:
      'When what comes before `/reviews` is a package name alone (`pkg`, `@scope/pkg`), no tool is meant: the path is the slug of a tool named `reviews`, answered by `tools.get`.',
    auth: 'public',
    query: listQuery,
    responses: { 200: okPage(reviewSchema) },
    errors: [...REQUEST, 404],
    handler: async (_ctx, deps, { params, query }) => {
      const tool = await loadTool(deps, params.ref);
      const page = pageOf(await listReviews(deps.db, tool.id, query.limit, query.offset), query.limit, query.offset);
      return { success: true, data: page.items.map(toReview), pagination: page.pagination };
    },
  }),
];
