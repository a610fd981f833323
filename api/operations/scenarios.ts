/**
 * Scenarios: the public list, featured, detail, create, change, delete, a collection's scenarios, generating
 * scenarios for a collection, and checking a prompt against a collection's scenarios. Errors in shape B. A scenario
 * of a private collection is 404 to everyone but the owner; changes need a key (401) and the ownership of the
 * collection (403). A changed prompt is embedded again.
 */
import { z } from 'zod';
import { defineOperation, type Operation } from './define.js';
import { barePage, ok, okMessage, pagination } from './envelope.js';
import {
  collectionScenarioItemSchema,
  featuredScenarioSchema,
  generationSchema,
  scenarioSchema,
  similarityReportSchema,
  toCollectionScenarioItem,
  toScenario,
} from './scenario-schemas.js';
import { generateScenarios } from './handlers/generate-scenarios.js';
import { limitQuery, pageOf, paging, singleLine, validate } from '../validate.js';
import { callerOf, requireCaller } from '../middleware/auth.js';
import { loadVisibleCollection } from '../../core/collections/collections.js';
import { deleteScenario, listScenarios, SCENARIO_SORTS, type ScenarioSort } from '../../core/repos/scenarios.js';
import {
  changeScenario,
  checkSimilarity,
  createScenario,
  featuredScenarios,
  listPublicScenarios,
  loadOwnedScenario,
  loadVisibleScenario,
} from '../../core/scenarios/scenarios.js';

const TAG = 'Scenarios';

/** At most this many characters of a `toolArgs` assertion's `args` as JSON. */
const MAX_ARGS_JSON = 4000;
const assertion = z.discriminatedUnion('type', [
  z.object({ type: z.literal('toolCalled'), tool: singleLine(200) }).strict(),
  z.object({ type: z.literal('outputContains'), text: z.string().min(1).max(1000) }).strict(),
  z.object({ type: z.literal('noToolErrors') }).strict(),
  z
    .object({ type: z.literal('toolSequence'), tools: z.array(singleLine(200)).min(1).max(20) })
    .strict()
    .meta({ description: 'These tools called in this order (other calls may come between)' }),
  z
    .object({
      type: z.literal('toolArgs'),
      tool: singleLine(200),
      args: z.record(z.string(), z.unknown()).refine((a) => JSON.stringify(a).length <= MAX_ARGS_JSON, `must be at most ${MAX_ARGS_JSON} characters as JSON`),
    })
    .strict()
    .meta({ description: 'Some call of the tool with arguments holding `args` as a JSON subset' }),
  z
    .object({ type: z.literal('maxSteps'), max: z.number().int().min(0).max(1000) })
    .strict()
    .meta({ description: 'At most `max` tool calls' }),
  z
    .object({ type: z.literal('maxLatencyMs'), max: z.number().int().min(1).max(86_400_000) })
    .strict()
    .meta({ description: "The run's wall time (its usage.executionTimeMs) at most `max` ms" }),
  z
    .object({ type: z.literal('maxTokens'), max: z.number().int().min(0).max(1_000_000_000) })
    .strict()
    .meta({ description: "The run's tokens, agent and judge (its usage.totalTokens), at most `max`" }),
]);
const fields = {
  prompt: z.string().trim().min(10, 'must be at least 10 characters').max(4000),
  name: singleLine(200),
  description: z.string().max(2000).nullable(),
  // A tag is matched by the comma list of `?tags=`, so it cannot hold a comma.
  tags: z
    .array(singleLine(50).refine((t) => !t.includes(','), 'must not contain a comma (the tags filter is a comma list)'))
    .max(20)
    .transform((t) => [...new Set(t)]),
  assertions: z.array(assertion).max(20).nullable(),
};
const collectionRef = z.string().min(1).max(100).meta({ description: "The collection's id or uid" });
const createBody = z
  .object({
    collectionId: collectionRef,
    prompt: fields.prompt,
    name: fields.name.optional().meta({ description: 'Default: from the prompt' }),
    description: fields.description.optional(),
    tags: fields.tags.optional(),
    assertions: fields.assertions.optional(),
  })
  .strict();
const patchBody = z
  .object({
    prompt: fields.prompt.optional(),
    name: fields.name.optional(),
    description: fields.description.optional(),
    tags: fields.tags.optional(),
    assertions: fields.assertions.optional(),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, 'give at least one field to change');
const generateBody = z
  .object({
    count: z.number().int().min(1).max(10).default(3),
    skipSimilarityCheck: z.boolean().default(false).meta({ description: 'Keep proposals however similar they are to existing scenarios' }),
  })
  .strict();
// The text to compare is any non-empty prompt (the 10-character minimum is for creating a scenario).
const similarityBody = z.object({ prompt: z.string().trim().min(1).max(4000), collectionId: collectionRef }).strict();

const sortBy = z
  .enum(Object.keys(SCENARIO_SORTS) as [ScenarioSort, ...ScenarioSort[]])
  .default('createdAt')
  .meta({ description: 'Always descending, nulls last' });
const tagList = z
  .string()
  .max(1000)
  .transform((s) => [
    ...new Set(
      s
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean),
    ),
  ])
  .meta({ description: 'Comma-separated; a scenario must carry all of them' });
const listFields = { ...paging(20, 50), tags: tagList.optional(), sortBy };
const listQuery = z.object({ ...listFields, collectionId: collectionRef.optional() });
const collectionListQuery = z.object(listFields);
const featuredQuery = z.object({ limit: limitQuery(10, 20) });
const idParams = z.object({ id: z.string() });
const collectionParams = z.object({ id: z.string().meta({ description: "The collection's id or uid" }) });

/** What a body-carrying request may also answer: malformed or too large a body, or not JSON. */
const BODY_ERRORS = [400, 413, 415];

export const scenarioOperations: Operation[] = [
  defineOperation({
    id: 'scenarios.list',
    method: 'get',
    path: '/api/scenarios',
    summary: 'Scenarios of public collections, filtered by collection and tags, sorted',
    tag: TAG,
    auth: 'public',
    errorShape: 'B',
    query: listQuery,
    responses: { 200: barePage(scenarioSchema) },
    errors: [400],
    handler: async (_ctx, deps, { query: q }) => {
      const { collectionId, ...filter } = q;
      const page = pageOf(await listPublicScenarios(deps.db, { ...filter, collectionRef: collectionId }), q.limit, q.offset);
      return { data: page.items.map(toScenario), pagination: page.pagination };
    },
  }),
  defineOperation({
    id: 'scenarios.featured',
    method: 'get',
    path: '/api/scenarios/featured',
    summary: 'Featured public scenarios: the best of each collection first, then recent passes',
    tag: TAG,
    auth: 'public',
    errorShape: 'B',
    query: featuredQuery,
    responses: { 200: ok(z.array(featuredScenarioSchema)) },
    errors: [400],
    handler: async (_ctx, deps, { query }) => ({
      success: true,
      data: (await featuredScenarios(deps.db, query.limit)).map((f) => ({ ...toScenario(f.scenario), featuredBecause: f.featuredBecause })),
    }),
  }),
  defineOperation({
    id: 'scenarios.get',
    method: 'get',
    path: '/api/scenarios/:id',
    summary: 'A scenario (of a private collection: its owner only)',
    tag: TAG,
    auth: 'public',
    errorShape: 'B',
    params: idParams,
    responses: { 200: ok(scenarioSchema) },
    errors: [400, 404],
    handler: async (ctx, deps, { params }) => ({ success: true, data: toScenario(await loadVisibleScenario(deps.db, params.id, callerOf(ctx))) }),
  }),
  defineOperation({
    id: 'scenarios.create',
    method: 'post',
    path: '/api/scenarios',
    summary: 'Creates a scenario in a collection the caller owns',
    tag: TAG,
    auth: 'key',
    errorShape: 'B',
    body: createBody,
    responses: { 201: ok(scenarioSchema) },
    errors: [...BODY_ERRORS, 403, 404],
    handler: async (ctx, deps, { body }) => {
      const caller = requireCaller(ctx);
      const id = await createScenario(deps, caller, body.collectionId, body);
      return { success: true, data: toScenario(await loadVisibleScenario(deps.db, id, caller)) };
    },
  }),
  defineOperation({
    id: 'scenarios.update',
    method: 'patch',
    path: '/api/scenarios/:id',
    summary: "Changes a scenario of the caller's collection",
    tag: TAG,
    auth: 'key',
    errorShape: 'B',
    params: idParams,
    // Validated once visibility (404) and ownership (403) are known: a stranger learns nothing from the body's 400.
    documentedBody: patchBody,
    responses: { 200: ok(scenarioSchema) },
    errors: [...BODY_ERRORS, 403, 404],
    handler: async (ctx, deps, { params }) => {
      const caller = requireCaller(ctx);
      const s = await loadOwnedScenario(deps.db, params.id, caller);
      await changeScenario(deps, s, validate(patchBody, ctx.request.body, 'body'));
      return { success: true, data: toScenario(await loadVisibleScenario(deps.db, s.id, caller)) };
    },
  }),
  defineOperation({
    id: 'scenarios.delete',
    method: 'delete',
    path: '/api/scenarios/:id',
    summary: "Deletes a scenario of the caller's collection, with its runs",
    tag: TAG,
    auth: 'key',
    errorShape: 'B',
    params: idParams,
    responses: { 200: okMessage },
    errors: [...BODY_ERRORS, 403, 404],
    handler: async (ctx, deps, { params }) => {
      const s = await loadOwnedScenario(deps.db, params.id, requireCaller(ctx));
      await deleteScenario(deps.db, s.id);
      return { success: true, message: `Scenario '${s.name}' deleted with its runs` };
    },
  }),
  defineOperation({
    id: 'scenarios.checkSimilarity',
    method: 'post',
    path: '/api/scenarios/check-similarity',
    summary: "A prompt against a collection's scenarios: the most similar, and those above 0.3",
    tag: TAG,
    auth: 'key',
    errorShape: 'B',
    body: similarityBody,
    responses: { 200: ok(similarityReportSchema) },
    errors: [...BODY_ERRORS, 404],
    handler: async (ctx, deps, { body }) => {
      const c = await loadVisibleCollection(deps.db, body.collectionId, requireCaller(ctx));
      return { success: true, data: await checkSimilarity(deps, c.id, body.prompt) };
    },
  }),
  defineOperation({
    id: 'scenarios.listForCollection',
    method: 'get',
    path: '/api/collections/:id/scenarios',
    summary: "A collection's scenarios (of a private collection: its owner only)",
    tag: TAG,
    auth: 'public',
    errorShape: 'B',
    params: collectionParams,
    query: collectionListQuery,
    responses: { 200: z.object({ success: z.literal(true), data: z.object({ scenarios: z.array(collectionScenarioItemSchema) }), pagination }) },
    errors: [400, 404],
    handler: async (ctx, deps, { params, query: q }) => {
      const c = await loadVisibleCollection(deps.db, params.id, callerOf(ctx));
      const page = pageOf(await listScenarios(deps.db, { ...q, collectionId: c.id }), q.limit, q.offset);
      return { success: true, data: { scenarios: page.items.map(toCollectionScenarioItem) }, pagination: page.pagination };
    },
  }),
  defineOperation({
    id: 'scenarios.generate',
    method: 'post',
    path: '/api/collections/:id/scenarios/generate',
    summary: "Writes new scenarios for the caller's collection with the LLM (one unit of the daily quota per requested scenario)",
    description:
      'A proposal more similar than 0.7 to an existing scenario is regenerated (up to 3 more rounds) and dropped if still too similar, unless `skipSimilarityCheck`.',
    tag: TAG,
    auth: 'key',
    errorShape: 'B',
    params: collectionParams,
    // The body is validated after visibility and ownership (generateScenarios).
    documentedBody: generateBody,
    responses: { 201: ok(generationSchema) },
    errors: [...BODY_ERRORS, 403, 404, 429],
    handler: async (ctx, deps, { params }) => ({
      success: true,
      data: await generateScenarios(ctx, deps, params.id, (c) => validate(generateBody, c.request.body, 'body')),
    }),
  }),
];
