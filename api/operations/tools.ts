/**
 * The tool catalogue: the list in quality order, ranked search, trending, rating, and the detail by id, slug or
 * `<package>::<tool>`. The tool schemas and their mappers are in tool-schemas.ts (the package import shows list items
 * too).
 */
import { z } from 'zod';
import { defineOperation, reused, type Operation } from './define.js';
import { ok, okPage } from './envelope.js';
import { loadTool, loadToolCached } from './shared.js';
import { averageRating, category, toolDetailSchema, toolListItemSchema, toToolDetail, toToolListItem } from './tool-schemas.js';
import { booleanQuery, limitQuery, pageOf, paging, QUERY_TEXT_MAX } from '../validate.js';
import { callerOf, requireCaller } from '../middleware/auth.js';
import { TRENDING_PERIODS } from '../../core/tools/scoring.js';
import { rateTool } from '../../core/tools/tool-feedback.js';
import { trendingScores } from '../../core/repos/feedback.js';
import { listToolIds } from '../../core/repos/tool-list.js';
import { sevenDayTotals } from './tool-reliability.js';
import { type CallTotals, successRate } from '../../core/repos/tool-stats.js';
import { GOOD_MATCH, MATCH_KINDS, matchOf } from '../../core/search/match.js';
import { riskyLast } from '../../core/search/risky-last.js';
import { servedRisks } from '../../core/repos/tool-risks.js';
import type { ToolRow } from '../../core/repos/tools.js';
import { toolIconsOf } from '../../core/repos/mcp-offers.js';
import type { AppDeps } from '../deps.js';

// ---- response schemas ----

/** A tool's reliability signal on search hits and for tool cards (GET /api/tools/reliability; docs/search.md): its calls and success rate over 7 days (up to a minute old); not used to rank. */
const reliabilitySchema = z.object({ window: z.literal('7d'), calls: z.number().int(), successRate: z.number().nullable() }).meta({
  description:
    "Executions of the tool that ended in the last 7 days and the share of those the tool decided that succeeded (the platform's own failures, such as a lost worker, are left out; null with none); ranking does not use it",
});
function reliabilityOf(t: CallTotals | undefined): z.infer<typeof reliabilitySchema> {
  return { window: '7d', calls: t?.calls ?? 0, successRate: t ? successRate(t) : null };
}

const trendingItemSchema = toolListItemSchema.extend({
  trendingScore: z.number(),
  period: z.enum(Object.keys(TRENDING_PERIODS) as [keyof typeof TRENDING_PERIODS]),
});

const ratingSchema = z.object({ userRating: z.number().int(), averageRating: z.number().nullable(), ratingCount: z.number().int() });

/**
 * The latest search answers of each app, with what each was made from: the engine's total, the rows (the tool cache
 * hands out the same row object until the tool changes) and the reliability figures (the same object until they are
 * read again). A request whose answer is made from the very same parts gets the same body object back, which skips
 * building it and checking it against its schema again (reused() in define.ts). An LRU, as the engine's answers.
 */
interface SearchAnswer {
  total: number;
  rewrittenQuery: string | undefined;
  rows: ToolRow[];
  totals: (CallTotals | undefined)[];
  body: object;
}
const SEARCH_ANSWERS_KEPT = 2000;
const searchAnswers = new WeakMap<AppDeps, Map<string, SearchAnswer>>();

function sameParts(a: SearchAnswer, total: number, rewrittenQuery: string | undefined, rows: ToolRow[], totals: (CallTotals | undefined)[]): boolean {
  if (a.total !== total || a.rewrittenQuery !== rewrittenQuery || a.rows.length !== rows.length) return false;
  for (let i = 0; i < rows.length; i++) if (a.rows[i] !== rows[i] || a.totals[i] !== totals[i]) return false;
  return true;
}

/** Rows in the order of `ids` (the cache may answer in another order). */
function inOrder(rows: ToolRow[], ids: string[]): ToolRow[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => byId.get(id)).filter((r): r is ToolRow => r !== undefined);
}

// ---- input schemas ----

const listQuery = z.object({
  ...paging(20, 100),
  category: category.optional(),
  q: z.string().trim().max(QUERY_TEXT_MAX).optional().meta({ description: 'Case-insensitive substring of name, description or package' }),
  official: booleanQuery.optional().meta({ description: 'Packages flagged official by an admin' }),
});
const searchQuery = z.object({
  // Only a missing q is 'is required' (a schema-wide message would also name a too-long or repeated q so).
  q: z
    .string({ error: (issue) => (issue.input === undefined ? 'is required' : undefined) })
    .trim()
    .min(1, 'is required')
    .max(QUERY_TEXT_MAX),
  category: category.optional(),
  limit: limitQuery(10, 100, 1),
});
/** The tools whose 7-day calls a page of cards asks for (web/src/components/tool-list.tsx): ids, comma-separated. */
const reliabilityQuery = z.object({
  ids: z
    .string()
    .transform((v) => v.split(',').filter(Boolean))
    .pipe(z.array(z.string().uuid('each id must be a tool id (a UUID)')).min(1, 'give at least one tool id').max(100, 'at most 100 tool ids'))
    .meta({ description: 'Tool ids, comma-separated (1 to 100)' }),
});
const trendingQuery = z.object({
  period: z.enum(Object.keys(TRENDING_PERIODS) as [keyof typeof TRENDING_PERIODS]).default('week'),
  category: category.optional(),
  limit: limitQuery(20, 50),
});
const refParams = z.object({ ref: z.string().meta({ description: 'Tool id, slug `<package>/<tool>`, or `<package>::<tool>`' }) });
const rateBody = z.object({ rating: z.number().int('must be an integer').min(1).max(5) }).strict();

const base = { tag: 'Tools', errorShape: 'A' } as const;
/** Refused before any handler: a malformed URL or body (400); on methods that may carry a body, one over 1 MiB (413) or not JSON (415). */
const REQUEST = [400];
const BODY = [400, 413, 415];

export const toolOperations: Operation[] = [
  defineOperation({
    ...base,
    id: 'tools.list',
    method: 'get',
    path: '/api/tools',
    summary: 'Tools by quality score, then name',
    auth: 'public',
    query: listQuery,
    responses: { 200: okPage(toolListItemSchema) },
    errors: REQUEST,
    handler: async (_ctx, deps, { query }) => {
      const key = JSON.stringify([query.category ?? null, query.q ?? null, query.official ?? null, query.limit, query.offset]);
      const ids = await deps.tools.ids(key, () => listToolIds(deps.db, query));
      const page = pageOf(ids, query.limit, query.offset);
      const rows = inOrder(await deps.tools.getMany(page.items), page.items);
      return { success: true, data: rows.map(toToolListItem), pagination: page.pagination };
    },
  }),
  defineOperation({
    ...base,
    id: 'tools.search',
    method: 'get',
    path: '/api/tools/search',
    summary: 'Tools ranked by BM25 for a query (BROKEN tools never appear)',
    auth: 'public',
    query: searchQuery,
    responses: {
      200: z.object({
        success: z.literal(true),
        query: z.string(),
        /** Only with SEARCH_QUERY_REWRITE=llm, when the model's keywords were used to rank (they come first, then q). */
        rewrittenQuery: z.string().optional(),
        results: z.object({
          total: z.number().int(),
          tools: z.array(
            toolListItemSchema.extend({
              match: z.number().meta({
                description:
                  "Share (0–1) of the query's words (stop words dropped, stemmed, synonyms counted) found in the tool's name, description or parameters",
              }),
              matchKind: z.enum(MATCH_KINDS).meta({
                description:
                  "Why it is in the results: 'words', its name, description or parameters have at least one of the query's words; 'synonyms', only synonyms of them; 'related', none (reached through its package's name or category, a misspelling, a word being typed, or closeness of meaning). A page lists 'words' first, then 'synonyms', then 'related', each in the engine's order (docs/search.md)",
              }),
              reliability: reliabilitySchema,
            }),
          ),
          goodMatch: z.boolean().meta({
            description: `Whether any tool returned covers at least ${Math.round(GOOD_MATCH * 100)} % of the query's words (its \`match\`; docs/search.md)`,
          }),
        }),
      }),
    },
    errors: REQUEST,
    handler: async (ctx, deps, { query }) => {
      deps.learning.search(callerOf(ctx)?.userId, query.q);
      const result = await deps.search.search({ q: query.q, category: query.category, limit: query.limit });
      const ids = result.hits.map((h) => h.id);
      const match = matchOf(query.q);
      const tools = riskyLast(
        inOrder(await deps.tools.getMany(ids), ids).filter((t) => t.health_status !== 'BROKEN'),
        (t) => servedRisks(t).length > 0,
      );
      const rewritten = result.rewrittenQuery === undefined ? {} : { rewrittenQuery: result.rewrittenQuery };
      const totalsById = await sevenDayTotals(
        deps,
        tools.map((t) => t.id),
      );
      const totals = tools.map((t) => totalsById.get(t.id));
      let answers = searchAnswers.get(deps);
      if (!answers) searchAnswers.set(deps, (answers = new Map()));
      const key = JSON.stringify([query.q, query.category ?? null, query.limit]);
      const kept = answers.get(key);
      answers.delete(key);
      if (kept && sameParts(kept, result.total, result.rewrittenQuery, tools, totals)) {
        answers.set(key, kept);
        return kept.body;
      }
      const items = tools.map((t, i) => {
        const m = match(t);
        return { ...toToolListItem(t), match: m.share, matchKind: m.kind, reliability: reliabilityOf(totals[i]) };
      });
      const goodMatch = items.some((t) => t.match >= GOOD_MATCH);
      const body = reused({ success: true, query: query.q, ...rewritten, results: { total: result.total, tools: items, goodMatch } });
      answers.set(key, { total: result.total, rewrittenQuery: result.rewrittenQuery, rows: tools, totals, body });
      if (answers.size > SEARCH_ANSWERS_KEPT) answers.delete(answers.keys().next().value!);
      return body;
    },
  }),
  defineOperation({
    ...base,
    id: 'tools.trending',
    method: 'get',
    path: '/api/tools/trending',
    summary: 'Tools by their weighted events over a period',
    auth: 'public',
    query: trendingQuery,
    responses: { 200: ok(z.array(trendingItemSchema)) },
    errors: REQUEST,
    handler: async (_ctx, deps, { query }) => {
      const scores = await trendingScores(deps.db, query);
      const ids = scores.map((s) => s.tool_id);
      const tools = inOrder(await deps.tools.getMany(ids), ids);
      const scoreOf = new Map(scores.map((s) => [s.tool_id, s.score]));
      return {
        success: true,
        data: tools.map((t) => ({ ...toToolListItem(t), trendingScore: Math.round(scoreOf.get(t.id)! * 100) / 100, period: query.period })),
      };
    },
  }),
  defineOperation({
    ...base,
    id: 'tools.reliability',
    method: 'get',
    path: '/api/tools/reliability',
    summary: "Tools' calls and success rate over 7 days, for cards that list them (beyond the contract)",
    auth: 'public',
    query: reliabilityQuery,
    responses: { 200: ok(z.record(z.string(), reliabilitySchema).meta({ description: 'By tool id; an id that is no tool has no calls' })) },
    errors: REQUEST,
    handler: async (_ctx, deps, { query }) => {
      const ids = [...new Set(query.ids)];
      const totals = await sevenDayTotals(deps, ids);
      return { success: true, data: Object.fromEntries(ids.map((id) => [id, reliabilityOf(totals.get(id))])) };
    },
  }),
  defineOperation({
    ...base,
    id: 'tools.rate',
    method: 'post',
    path: '/api/tools/*ref/rate',
    summary: "Rates a tool 1–5 (a user's second rating replaces the first)",
    auth: 'key',
    params: refParams,
    body: rateBody,
    responses: { 200: ok(ratingSchema) },
    errors: [...BODY, 404],
    handler: async (ctx, deps, { params, body }) => {
      const caller = requireCaller(ctx);
      const tool = await loadTool(deps, params.ref);
      const totals = await rateTool(deps.db, tool.id, caller.userId, body.rating);
      return {
        success: true,
        data: { userRating: body.rating, averageRating: averageRating(totals.ratingSum, totals.ratingCount), ratingCount: totals.ratingCount },
      };
    },
  }),
];

/** Mounted after every other `/api/tools/...` operation: `*ref` would match their paths too (slugs hold slashes). */
export const toolDetailOperations: Operation[] = [
  defineOperation({
    ...base,
    id: 'tools.get',
    method: 'get',
    path: '/api/tools/*ref',
    summary: 'A tool by id, slug `<package>/<tool>` or `<package>::<tool>`, with its input schema and health',
    auth: 'public',
    params: refParams,
    responses: { 200: ok(toolDetailSchema) },
    errors: [...REQUEST, 404],
    handler: async (_ctx, deps, { params }) => {
      const t = await loadToolCached(deps, params.ref);
      // An MCP server's tool's icons, as recorded with its version (core/repos/mcp-offers.ts; cached, versions never change).
      const icons = await toolIconsOf(deps.db, t);
      return { success: true, data: { ...toToolDetail(t), ...(icons ? { icons } : {}) } };
    },
  }),
];
