/**
 * Scenarios (9, 10, 12, 17, and beyond: PATCH, DELETE). Errors in shape B (api/middleware/error-shape.ts). Reads of a
 * scenario of a private collection are 404 to everyone but the owner; changes need a key (401) and the ownership of
 * the collection (403). A changed prompt is embedded again.
 */
import type Router from '@koa/router';
import { z } from 'zod';
import type { AppDeps } from '../deps.js';
import { limitQuery, pageOf, paging, validate } from '../validate.js';
import { callerOf, requireCaller } from '../middleware/auth.js';
import { findCollection, isUuid } from '../../core/repos/collections.js';
import { bestOverall, bestPerCollection, deleteScenario, listScenarios, recentPasses, SCENARIO_SORTS, type ScenarioRow, type ScenarioSort } from '../../core/repos/scenarios.js';
import { changeScenario, createScenario, loadOwnedScenario, loadVisibleScenario } from '../../core/scenarios.js';
import * as map from '../scenario-mappers.js';

const assertion = z.discriminatedUnion('type', [
  z.object({ type: z.literal('toolCalled'), tool: z.string().trim().min(1).max(200) }).strict(),
  z.object({ type: z.literal('outputContains'), text: z.string().min(1).max(1000) }).strict(),
  z.object({ type: z.literal('noToolErrors') }).strict(),
]);
export const scenarioFields = {
  prompt: z.string().trim().min(10, 'must be at least 10 characters').max(4000),
  name: z.string().trim().min(1).max(200),
  description: z.string().max(2000).nullable(),
  tags: z
    .array(z.string().trim().min(1).max(50))
    .max(20)
    .transform((t) => [...new Set(t)]),
  assertions: z.array(assertion).max(20).nullable(),
};
const createBody = z
  .object({
    collectionId: z.string().min(1).max(100),
    prompt: scenarioFields.prompt,
    name: scenarioFields.name.optional(),
    description: scenarioFields.description.optional(),
    tags: scenarioFields.tags.optional(),
    assertions: scenarioFields.assertions.optional(),
  })
  .strict();
const patchBody = z
  .object({
    prompt: scenarioFields.prompt.optional(),
    name: scenarioFields.name.optional(),
    description: scenarioFields.description.optional(),
    tags: scenarioFields.tags.optional(),
    assertions: scenarioFields.assertions.optional(),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, 'give at least one field to change');

const sortBy = z.enum(Object.keys(SCENARIO_SORTS) as [ScenarioSort, ...ScenarioSort[]]).default('createdAt');
const tagList = z
  .string()
  .max(1000)
  .transform((s) => [...new Set(s.split(',').map((t) => t.trim()).filter(Boolean))]);
export const scenarioListQuery = { ...paging(20, 50), tags: tagList.optional(), sortBy };
const listQuery = z.object({ ...scenarioListQuery, collectionId: z.string().min(1).max(100).optional() });
const featuredQuery = z.object({ limit: limitQuery(10, 20) });

/** Up to `limit`: the best of each public collection for the first half, recent passes next, then the best overall. */
async function featured(deps: AppDeps, limit: number) {
  const picked: { s: ScenarioRow; featuredBecause: string }[] = [];
  const ids = () => picked.map((p) => p.s.id);
  for (const s of await bestPerCollection(deps.db, Math.ceil(limit / 2))) picked.push({ s, featuredBecause: 'bestInCollection' });
  for (const s of await recentPasses(deps.db, limit - picked.length, ids())) picked.push({ s, featuredBecause: 'recentPass' });
  if (picked.length < limit) for (const s of await bestOverall(deps.db, limit - picked.length, ids())) picked.push({ s, featuredBecause: 'quality' });
  return picked.map((p) => ({ ...map.scenario(p.s), featuredBecause: p.featuredBecause }));
}

export function scenarioRoutes(router: Router, deps: AppDeps) {
  router.get('/api/scenarios', async (ctx) => {
    const q = validate(listQuery, ctx.query, 'query');
    let collectionId = q.collectionId;
    if (collectionId && !isUuid(collectionId)) collectionId = (await findCollection(deps.db, collectionId))?.id ?? '00000000-0000-0000-0000-000000000000';
    const rows = await listScenarios(deps.db, { ...q, collectionId, publicOnly: true });
    const page = pageOf(rows, q.limit, q.offset);
    ctx.body = { data: page.items.map(map.scenario), pagination: page.pagination };
  });

  router.get('/api/scenarios/featured', async (ctx) => {
    const q = validate(featuredQuery, ctx.query, 'query');
    ctx.body = { success: true, data: await featured(deps, q.limit) };
  });

  router.get('/api/scenarios/:id', async (ctx) => {
    ctx.body = { success: true, data: map.scenario(await loadVisibleScenario(deps.db, ctx.params.id, callerOf(ctx))) };
  });

  router.post('/api/scenarios', async (ctx) => {
    const caller = requireCaller(ctx);
    const body = validate(createBody, ctx.request.body, 'body');
    const id = await createScenario(deps, caller, body.collectionId, body);
    ctx.status = 201;
    ctx.body = { success: true, data: map.scenario(await loadVisibleScenario(deps.db, id, caller)) };
  });

  router.patch('/api/scenarios/:id', async (ctx) => {
    const caller = requireCaller(ctx);
    const s = await loadOwnedScenario(deps.db, ctx.params.id, caller);
    const body = validate(patchBody, ctx.request.body, 'body');
    await changeScenario(deps, s, body);
    ctx.body = { success: true, data: map.scenario(await loadVisibleScenario(deps.db, s.id, caller)) };
  });

  router.delete('/api/scenarios/:id', async (ctx) => {
    const caller = requireCaller(ctx);
    const s = await loadOwnedScenario(deps.db, ctx.params.id, caller);
    await deleteScenario(deps.db, s.id);
    ctx.body = { success: true, message: `Scenario '${s.name}' deleted with its runs` };
  });
}
