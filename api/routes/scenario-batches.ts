/**
 * Batch evaluation (beyond the SPEC's list, named in it): run every scenario of a collection at once, as far as the
 * caller's daily quota allows (one quota take per run; the rest are skipped and counted), then follow the batch's
 * progress and verdict counts, or stream them. A batch is visible to whoever can see its collection, and to the
 * user who started it. Errors in shape B.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { AppDeps } from '../deps.js';
import { callerOf, requireCaller } from '../middleware/auth.js';
import { errors } from '../../core/errors.js';
import { loadVisibleCollection } from '../../core/collections.js';
import { isUuid } from '../../core/repos/collections.js';
import { batchRuns, findBatch, type BatchRow } from '../../core/repos/scenario-batches.js';
import { collectionScenarioIds } from '../../core/repos/scenarios.js';
import { startBatch } from '../../core/scenario-runs.js';
import { batchEvents, streamDerived } from '../run-events.js';
import * as map from '../scenario-mappers.js';

async function loadVisibleBatch(ctx: Context, deps: AppDeps, id: string): Promise<BatchRow> {
  const b = isUuid(id) ? await findBatch(deps.db, id) : undefined;
  const caller = callerOf(ctx);
  const visible = b && (b.collection_is_public || caller?.userId === b.collection_owner_id || caller?.userId === b.user_id);
  if (!visible) throw errors.notFound('Scenario batch', id);
  return b;
}

export function scenarioBatchRoutes(router: Router, deps: AppDeps) {
  router.post('/api/collections/:id/scenarios/run-all', async (ctx) => {
    const caller = requireCaller(ctx);
    const c = await loadVisibleCollection(deps.db, ctx.params.id, caller);
    const scenarioIds = await collectionScenarioIds(deps.db, c.id);
    if (scenarioIds.length === 0) throw errors.validation(`Collection '${c.uid}' has no scenarios to run`);
    const batch = await startBatch(deps.db, deps.config, caller, c.id, scenarioIds);
    ctx.status = 202;
    ctx.body = { success: true, data: batch };
  });

  router.get('/api/scenario-batches/:id', async (ctx) => {
    const b = await loadVisibleBatch(ctx, deps, ctx.params.id);
    ctx.body = { success: true, data: map.batchProgress(b, await batchRuns(deps.db, b.id)) };
  });

  router.get('/api/scenario-batches/:id/events', async (ctx) => {
    const b = await loadVisibleBatch(ctx, deps, ctx.params.id);
    await streamDerived(ctx, deps, b.id, async () => {
      const [batch, runs] = await Promise.all([findBatch(deps.db, b.id), batchRuns(deps.db, b.id)]);
      return batchEvents(batch!, runs);
    });
  });
}
