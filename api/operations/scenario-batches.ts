/**
 * Batch evaluation: run every scenario of a collection at once, as far as the caller's daily quota allows (one quota
 * take per run; the rest are skipped and counted), then follow the batch's progress and verdict counts, or stream
 * them. With a body giving `repeat` (each scenario runs k times) or `scenarioIds` (a chosen subset), the batch takes
 * its whole quota at once or is refused whole (429, nothing recorded). A batch is visible to whoever can see its
 * collection, and to the user who started it. Errors in shape B.
 */
import { z } from 'zod';
import { defineOperation, HANDLED, type Operation } from './define.js';
import { ok } from './envelope.js';
import { batchBodySchema, batchProgressSchema, batchStartSchema, batchStreamEvents, toBatchProgress } from './scenario-schemas.js';
import { callerOf, requireCaller } from '../middleware/auth.js';
import { batchEvents, streamDerived } from '../streams/run-events.js';
import { errors } from '../../core/infra/errors.js';
import { loadVisibleCollection } from '../../core/collections/collections.js';
import { batchRuns, findBatch } from '../../core/repos/scenario-batches.js';
import { collectionScenarioIds } from '../../core/repos/scenarios.js';
import { loadVisibleBatch, sealRunEnv, startBatch } from '../../core/scenarios/scenario-runs.js';
import { loadCollectionTools } from '../../core/agents/agent-tools.js';
import { givenEnvOfRequest } from '../scoped-env.js';

const TAG = 'Scenario Batches';

const idParams = z.object({ id: z.string() });

/** The chosen scenarios, each checked against the collection's (400 naming the first that is not one of them). */
function chosenScenarios(chosen: string[], all: string[], collectionUid: string): string[] {
  const known = new Set(all);
  const seen = new Set<string>();
  for (const [i, id] of chosen.entries()) {
    const path = `body.scenarioIds.${i}`;
    if (!known.has(id)) {
      const message = `Scenario '${id}' is not a scenario of collection '${collectionUid}'`;
      throw errors.validation(message, [{ path, message: 'not a scenario of this collection' }]);
    }
    if (seen.has(id)) throw errors.validation(`Scenario '${id}' is given twice`, [{ path, message: 'given twice' }]);
    seen.add(id);
  }
  return chosen;
}

export const scenarioBatchOperations: Operation[] = [
  defineOperation({
    id: 'scenarioBatches.start',
    method: 'post',
    path: '/api/collections/:id/scenarios/run-all',
    summary: 'Queues a run of every scenario (or of the chosen ones) of a collection, `repeat` times each',
    description:
      'Without a body: one quota take per run; the scenarios past the quota are skipped and counted; none left at all: 429. ' +
      'With `repeat` or `scenarioIds`: scenarios × repeat units are taken at once, or the batch is refused whole (429 with the true `quotaRemaining`) and nothing is recorded. ' +
      "Env for the tools of every run: body `env` and/or `X-Tool-Env-…` headers, as a single run takes them (sealed in each run's job, never stored or echoed).",
    tag: TAG,
    auth: 'key',
    errorShape: 'B',
    params: z.object({ id: z.string().meta({ description: "The collection's id or uid" }) }),
    body: batchBodySchema,
    responses: { 202: ok(batchStartSchema) },
    errors: [400, 404, 413, 415, 429],
    handler: async (ctx, deps, { params, body }) => {
      const caller = requireCaller(ctx);
      const c = await loadVisibleCollection(deps.db, params.id, caller);
      const all = await collectionScenarioIds(deps.db, c.id);
      if (all.length === 0) throw errors.validation(`Collection '${c.uid}' has no scenarios to run`);
      const scenarioIds = body.scenarioIds ? chosenScenarios(body.scenarioIds, all, c.uid) : all;
      const allOrNothing = body.repeat !== undefined || body.scenarioIds !== undefined;
      const given = givenEnvOfRequest(body.env, ctx.req.headers, await loadCollectionTools(deps.db, [c.id]));
      const sealedEnv = sealRunEnv(deps.config.SECRETS_KEY, given);
      return { success: true, data: await startBatch(deps.db, deps.config, caller, c.id, scenarioIds, { repeat: body.repeat, allOrNothing, sealedEnv }) };
    },
  }),
  defineOperation({
    id: 'scenarioBatches.get',
    method: 'get',
    path: '/api/scenario-batches/:id',
    summary: "A batch's progress and verdict counts",
    tag: TAG,
    auth: 'public',
    errorShape: 'B',
    params: idParams,
    responses: { 200: ok(batchProgressSchema) },
    errors: [400, 404],
    handler: async (ctx, deps, { params }) => {
      const b = await loadVisibleBatch(deps.db, params.id, callerOf(ctx));
      return { success: true, data: toBatchProgress(b, await batchRuns(deps.db, b.id), deps.config.LLM_PRICES) };
    },
  }),
  defineOperation({
    id: 'scenarioBatches.events',
    method: 'get',
    path: '/api/scenario-batches/:id/events',
    summary: "A batch's progress as its runs finish (server-sent events)",
    tag: TAG,
    auth: 'public',
    errorShape: 'B',
    params: idParams,
    responses: {
      200: {
        stream: batchStreamEvents,
        description:
          '`run.completed` per finished run in finishing order (with the counts up to it), then `done` with the progress; the stream ends after `done`. Resumable with Last-Event-ID.',
      },
    },
    errors: [400, 404],
    handler: async (ctx, deps, { params }) => {
      const b = await loadVisibleBatch(deps.db, params.id, callerOf(ctx));
      await streamDerived(ctx, deps, b.id, async () => {
        // The batch first, then its runs: the last run and the batch's completion commit together, so runs read after a
        // completed batch are all final. Read at once (or the other way round), a `done` could carry a run still
        // unfinished: the progress and report would say fewer verdicts than the batch has.
        const batch = await findBatch(deps.db, b.id);
        const runs = await batchRuns(deps.db, b.id);
        return batchEvents(batch!, runs, deps.config.LLM_PRICES);
      });
      return HANDLED;
    },
  }),
];
