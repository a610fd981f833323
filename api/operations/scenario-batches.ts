/**
 * Batch evaluation: run every scenario of a collection at once, as far as the caller's daily quota allows (one quota
 * take per run; the rest are skipped and counted), then follow the batch's progress and verdict counts, or stream
 * them. A batch is visible to whoever can see its collection, and to the user who started it. Errors in shape B.
 */
import { z } from 'zod';
import { defineOperation, HANDLED, type Operation } from './define.js';
import { ok } from './envelope.js';
import { batchProgressSchema, batchStartSchema, batchStreamEvents, toBatchProgress } from './scenario-schemas.js';
import { callerOf, requireCaller } from '../middleware/auth.js';
import { batchEvents, streamDerived } from '../run-events.js';
import { errors } from '../../core/errors.js';
import { loadVisibleCollection } from '../../core/collections.js';
import { batchRuns, findBatch } from '../../core/repos/scenario-batches.js';
import { collectionScenarioIds } from '../../core/repos/scenarios.js';
import { loadVisibleBatch, sealRunEnv, startBatch } from '../../core/scenario-runs.js';
import { loadCollectionTools } from '../../core/agent-tools.js';
import { givenEnvOfRequest, scopedEnvSchema } from '../scoped-env.js';

const TAG = 'Scenario Batches';

const idParams = z.object({ id: z.string() });
/** `env`: for the tools of every run of the batch, as a single run takes it (also as `X-Tool-Env-…` headers). */
const runAllBody = z.object({ env: scopedEnvSchema.optional() }).strict();

export const scenarioBatchOperations: Operation[] = [
  defineOperation({
    id: 'scenarioBatches.start',
    method: 'post',
    path: '/api/collections/:id/scenarios/run-all',
    summary: "Queues a run of every scenario of a collection, as far as the caller's daily quota allows",
    description:
      "One quota take per run; the scenarios past the quota are skipped and counted. None left at all: 429. Env for the tools of every run: body `env` and/or `X-Tool-Env-…` headers, as a single run takes them (sealed in each run's job, never stored or echoed).",
    tag: TAG,
    auth: 'key',
    errorShape: 'B',
    params: z.object({ id: z.string().meta({ description: "The collection's id or uid" }) }),
    body: runAllBody,
    responses: { 202: ok(batchStartSchema) },
    errors: [400, 404, 413, 415, 429],
    handler: async (ctx, deps, { params, body }) => {
      const caller = requireCaller(ctx);
      const c = await loadVisibleCollection(deps.db, params.id, caller);
      const scenarioIds = await collectionScenarioIds(deps.db, c.id);
      if (scenarioIds.length === 0) throw errors.validation(`Collection '${c.uid}' has no scenarios to run`);
      const given = givenEnvOfRequest(body.env, ctx.req.headers, await loadCollectionTools(deps.db, [c.id]));
      const sealedEnv = sealRunEnv(deps.config.SECRETS_KEY!, given);
      return { success: true, data: await startBatch(deps.db, deps.config, caller, c.id, scenarioIds, sealedEnv) };
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
      return { success: true, data: toBatchProgress(b, await batchRuns(deps.db, b.id)) };
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
        const [batch, runs] = await Promise.all([findBatch(deps.db, b.id), batchRuns(deps.db, b.id)]);
        return batchEvents(batch!, runs);
      });
      return HANDLED;
    },
  }),
];
