/**
 * Scenario runs (14, 15, and beyond: a run by id and its event stream). A run takes one run of the caller's daily
 * quota before it is queued; by default the request waits (LISTEN/NOTIFY, at most EXECUTION_WAIT_MS) and answers
 * with the judged run, `?wait=false` answers 202 at once. A run is visible to whoever can see its scenario, and to
 * the user who started it. Errors in shape B.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { AppDeps } from '../deps.js';
import { pageOf, paging, validate } from '../validate.js';
import { callerOf, requireCaller } from '../middleware/auth.js';
import { errors } from '../../core/errors.js';
import { isUuid } from '../../core/repos/collections.js';
import { findRun, isFinalRun, listRuns, type RunRow } from '../../core/repos/scenario-runs.js';
import { quotaRemaining } from '../../core/scenario-quota.js';
import { startRun, waitForRun } from '../../core/scenario-runs.js';
import { loadVisibleScenario } from '../../core/scenarios.js';
import type { Caller } from '../../core/types.js';
import { runEvents, streamDerived } from '../run-events.js';
import * as map from '../scenario-mappers.js';

const runQuery = z.object({ wait: z.enum(['true', 'false']).default('true') });
const historyQuery = z.object(paging(10, 50));

async function loadVisibleRun(deps: AppDeps, id: string, caller: Caller | undefined): Promise<RunRow> {
  const run = isUuid(id) ? await findRun(deps.db, id) : undefined;
  if (!run) throw errors.notFound('Scenario run', id);
  if (caller && caller.userId === run.user_id) return run;
  try {
    await loadVisibleScenario(deps.db, run.scenario_id, caller);
  } catch {
    throw errors.notFound('Scenario run', id);
  }
  return run;
}

const remainingFor = (deps: AppDeps, caller: Caller | undefined) => (caller ? quotaRemaining(deps.db, deps.config, caller) : Promise.resolve(null));

/** Aborts when the client goes away, so that a waiting request stops waiting. */
function clientGone(ctx: Context): AbortSignal {
  const controller = new AbortController();
  ctx.req.once('close', () => controller.abort());
  return controller.signal;
}

export function scenarioRunRoutes(router: Router, deps: AppDeps) {
  router.post('/api/scenarios/:id/run', async (ctx) => {
    const caller = requireCaller(ctx);
    const q = validate(runQuery, ctx.query, 'query');
    const scenario = await loadVisibleScenario(deps.db, ctx.params.id, caller);
    const { run, quotaRemaining: remaining } = await startRun(deps.db, deps.config, caller, scenario.id);
    if (q.wait === 'false') {
      ctx.status = 202;
      ctx.body = { success: true, data: { runId: run.id, status: run.status, quotaRemaining: remaining } };
      return;
    }
    const current = await waitForRun(deps, run.id, deps.config.EXECUTION_WAIT_MS, clientGone(ctx));
    ctx.status = isFinalRun(current) ? 200 : 202;
    ctx.body = { success: true, data: map.runRecord(current, remaining) };
  });

  router.get('/api/scenarios/:id/runs', async (ctx) => {
    const caller = callerOf(ctx);
    const scenario = await loadVisibleScenario(deps.db, ctx.params.id, caller);
    const q = validate(historyQuery, ctx.query, 'query');
    const [rows, remaining] = await Promise.all([listRuns(deps.db, scenario.id, q.limit, q.offset), remainingFor(deps, caller)]);
    const page = pageOf(rows, q.limit, q.offset);
    ctx.body = { data: page.items.map((r) => map.historyItem(r, remaining)), pagination: page.pagination };
  });

  router.get('/api/scenario-runs/:id', async (ctx) => {
    const caller = callerOf(ctx);
    const run = await loadVisibleRun(deps, ctx.params.id, caller);
    ctx.body = { success: true, data: map.runRecord(run, await remainingFor(deps, caller)) };
  });

  router.get('/api/scenario-runs/:id/events', async (ctx) => {
    const run = await loadVisibleRun(deps, ctx.params.id, callerOf(ctx));
    await streamDerived(ctx, deps, run.id, async () => runEvents((await findRun(deps.db, run.id))!));
  });
}
