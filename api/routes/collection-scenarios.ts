/**
 * A collection's scenarios (11), generating scenarios for it (13) and checking a prompt against them (16). `:id` is
 * the collection's id or uid; a private collection is 404 to everyone but its owner. Errors in shape B.
 */
import type Router from '@koa/router';
import { z } from 'zod';
import type { AppDeps } from '../deps.js';
import { pageOf, validate } from '../validate.js';
import { callerOf, requireCaller } from '../middleware/auth.js';
import { errors } from '../../core/errors.js';
import { LlmError, llmLogFields } from '../../core/llm/index.js';
import { takeUnits } from '../../core/scenario-quota.js';
import { collectionTools, loadOwnedCollection, loadVisibleCollection } from '../../core/collections.js';
import { listScenarios } from '../../core/repos/scenarios.js';
import { checkSimilarity, loadVisibleScenario } from '../../core/scenarios.js';
import { generateForCollection } from '../../core/scenario-generation.js';
import { scenarioFields, scenarioListQuery } from './scenarios.js';
import * as map from '../scenario-mappers.js';

const listQuery = z.object(scenarioListQuery);
const generateBody = z
  .object({ count: z.number().int().min(1).max(10).default(3), skipSimilarityCheck: z.boolean().default(false) })
  .strict();
const similarityBody = z.object({ prompt: scenarioFields.prompt, collectionId: z.string().min(1).max(100) }).strict();

export function collectionScenarioRoutes(router: Router, deps: AppDeps) {
  router.get('/api/collections/:id/scenarios', async (ctx) => {
    const c = await loadVisibleCollection(deps.db, ctx.params.id, callerOf(ctx));
    const q = validate(listQuery, ctx.query, 'query');
    const page = pageOf(await listScenarios(deps.db, { ...q, collectionId: c.id }), q.limit, q.offset);
    ctx.body = { success: true, data: { scenarios: page.items.map(map.collectionScenarioItem) }, pagination: page.pagination };
  });

  router.post('/api/collections/:id/scenarios/generate', async (ctx) => {
    const caller = requireCaller(ctx);
    const c = await loadOwnedCollection(deps.db, ctx.params.id, caller);
    const body = validate(generateBody, ctx.request.body, 'body');
    const tools = await collectionTools(deps.tools, c);
    if (tools.length === 0) throw errors.validation(`Collection '${c.uid}' has no tools to write scenarios for`);
    // Generation spends the operator's LLM tokens (up to 1 + MAX_REGENERATIONS rounds of `count` proposals): one unit
    // of the daily scenario quota per requested scenario, all taken before the provider is called.
    const { remaining } = await takeUnits(deps.db, deps.config, caller, body.count);
    let report;
    try {
      report = await generateForCollection(deps, caller.userId, c, tools, body);
    } catch (err) {
      if (!(err instanceof LlmError)) throw err;
      // The vendor's words (its address, its body) stay in the log; the caller gets the short message.
      deps.logger.warn({ ...llmLogFields(err), reqId: ctx.state.requestId }, 'scenario generation: LLM provider failed');
      throw errors.internal(err.message);
    }
    const scenarios = await Promise.all(
      report.created.map(async (g) => ({ scenario: map.scenario(await loadVisibleScenario(deps.db, g.id, caller)), similarity: g.similarity })),
    );
    ctx.status = 201;
    ctx.body = {
      success: true,
      data: { scenarios, requested: body.count, rejectedAsTooSimilar: report.rejected, dropped: report.dropped, rounds: report.rounds, quotaRemaining: remaining },
    };
  });

  router.post('/api/scenarios/check-similarity', async (ctx) => {
    const caller = requireCaller(ctx);
    const body = validate(similarityBody, ctx.request.body, 'body');
    const c = await loadVisibleCollection(deps.db, body.collectionId, caller);
    ctx.body = { success: true, data: await checkSimilarity(deps, c.id, body.prompt) };
  });
}
