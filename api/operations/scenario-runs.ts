/**
 * Scenario runs: starting one, a scenario's run history, a run by id and its event stream. A run takes one run of the
 * caller's daily quota before it is queued; by default the request waits (LISTEN/NOTIFY, at most EXECUTION_WAIT_MS)
 * and answers with the judged run, `?wait=false` answers 202 at once. A run is visible to whoever can see its
 * scenario, and to the user who started it. Errors in shape B.
 */
import { anySignal } from 'any-signal';
import type { Context } from 'koa';
import { z } from 'zod';
import type { AppDeps } from '../deps.js';
import { defineOperation, HANDLED, reply, type Operation } from './define.js';
import { barePage, ok } from './envelope.js';
import {
  batchStartSchema,
  historyItemSchema,
  queuedRunSchema,
  runBodySchema,
  runRecordSchema,
  runStreamEvents,
  toHistoryItem,
  toRunRecord,
} from './scenario-schemas.js';
import { pageOf, paging } from '../validate.js';
import { callerOf, requireCaller } from '../middleware/auth.js';
import { runEvents, streamDerived } from '../streams/run-events.js';
import { findRun, isFinalRun, listRuns, type RunRow } from '../../core/repos/scenario-runs.js';
import { errors } from '../../core/infra/errors.js';
import { quotaRemaining } from '../../core/scenarios/scenario-quota.js';
import { loadVisibleRun, sealRunEnv, startBatch, startRun, waitForRun } from '../../core/scenarios/scenario-runs.js';
import { loadCollectionTools } from '../../core/agents/agent-tools.js';
import { givenEnvOfRequest } from '../scoped-env.js';
import { loadVisibleScenario } from '../../core/scenarios/scenarios.js';
import type { Caller } from '../../core/types.js';

const TAG = 'Scenario Runs';

const idParams = z.object({ id: z.string() });
const runQuery = z.object({
  wait: z.enum(['true', 'false']).default('true').meta({ description: 'false: answer 202 with the queued run at once' }),
});
const historyQuery = z.object(paging(10, 50));

const remainingFor = (deps: AppDeps, caller: Caller | undefined) => (caller ? quotaRemaining(deps.db, deps.config, caller) : Promise.resolve(null));

/** Aborts when the client goes away, so that a waiting request stops waiting. */
function clientGone(ctx: Context): AbortSignal {
  const controller = new AbortController();
  ctx.req.once('close', () => controller.abort());
  return controller.signal;
}

export const scenarioRunOperations: Operation[] = [
  defineOperation({
    id: 'scenarioRuns.start',
    method: 'post',
    path: '/api/scenarios/:id/run',
    summary: "Runs a scenario (one run of the caller's daily quota) and answers with the judged run",
    description:
      "The agent gets the collection's tools (at most 10 steps, each tool call in the sandbox), then the evaluator judges the answer. 200 with the final run; 202 when `?wait=false`, or when the wait ran out before the run was final. " +
      'With `repeat` above 1: 202 at once with the batch (`batchId`, `runIds`) of this scenario run that many times, as run-all with `scenarioIds: [id]`. ' +
      'Env for the tools: body `env` (`{ NAME: value }` for the one package of the collection that declares NAME, `{ "<package>": { NAME: value } }` for that package) and/or `X-Tool-Env-<NAME>` / `X-Tool-Env-<package>--<NAME>` headers, the body winning; each value reaches only the tools that declare it, is sealed in the run\'s job, never stored, and redacted from everything the run records.',
    tag: TAG,
    auth: 'key',
    errorShape: 'B',
    params: idParams,
    query: runQuery,
    body: runBodySchema,
    responses: { 200: ok(runRecordSchema), 202: ok(z.union([runRecordSchema, queuedRunSchema, batchStartSchema])) },
    errors: [400, 404, 413, 415, 429],
    handler: async (ctx, deps, { params, query, body }) => {
      const caller = requireCaller(ctx);
      const scenario = await loadVisibleScenario(deps.db, params.id, caller);
      const given = givenEnvOfRequest(body.env, ctx.req.headers, await loadCollectionTools(deps.db, [scenario.collection_id]));
      const sealedEnv = sealRunEnv(deps.config.SECRETS_KEY, given);
      if (body.repeat !== undefined && body.repeat > 1) {
        const options = { repeat: body.repeat, allOrNothing: true, sealedEnv };
        const batch = await startBatch(deps.db, deps.config, caller, scenario.collection_id, [scenario.id], options);
        return reply(202, { success: true, data: batch });
      }
      const { run, quotaRemaining: remaining } = await startRun(deps.db, deps.config, caller, scenario.id, sealedEnv);
      if (query.wait === 'false') return reply(202, { success: true, data: { runId: run.id, status: run.status, quotaRemaining: remaining } });
      // any-signal, not AbortSignal.any: Node 20's keeps a reference on the shutdown signal for every call, for good.
      const signal = anySignal([clientGone(ctx), deps.shutdown]);
      const current = await waitForRun(deps, run.id, deps.config.EXECUTION_WAIT_MS, signal).finally(() => signal.clear());
      return reply(isFinalRun(current) ? 200 : 202, { success: true, data: toRunRecord(current, remaining) });
    },
  }),
  defineOperation({
    id: 'scenarioRuns.list',
    method: 'get',
    path: '/api/scenarios/:id/runs',
    summary: "A scenario's run history, newest first",
    tag: TAG,
    auth: 'public',
    errorShape: 'B',
    params: idParams,
    query: historyQuery,
    responses: { 200: barePage(historyItemSchema) },
    errors: [400, 404],
    handler: async (ctx, deps, { params, query: q }) => {
      const caller = callerOf(ctx);
      const scenario = await loadVisibleScenario(deps.db, params.id, caller);
      const [rows, remaining] = await Promise.all([listRuns(deps.db, scenario.id, q.limit, q.offset), remainingFor(deps, caller)]);
      const page = pageOf(rows, q.limit, q.offset);
      return { data: page.items.map((r) => toHistoryItem(r, remaining)), pagination: page.pagination };
    },
  }),
  defineOperation({
    id: 'scenarioRuns.get',
    method: 'get',
    path: '/api/scenario-runs/:id',
    summary: 'A scenario run',
    tag: TAG,
    auth: 'public',
    errorShape: 'B',
    params: idParams,
    responses: { 200: ok(runRecordSchema) },
    errors: [400, 404, 410],
    handler: async (ctx, deps, { params }) => {
      const caller = callerOf(ctx);
      const run = notPurged(deps, await loadVisibleRun(deps.db, params.id, caller));
      return { success: true, data: toRunRecord(run, await remainingFor(deps, caller)) };
    },
  }),
  defineOperation({
    id: 'scenarioRuns.events',
    method: 'get',
    path: '/api/scenario-runs/:id/events',
    summary: "A scenario run's events as they happen (server-sent events)",
    tag: TAG,
    auth: 'public',
    errorShape: 'B',
    params: idParams,
    responses: {
      200: {
        stream: runStreamEvents,
        description:
          '`step` and `tool.completed` per tool call in the order they happened, then `verdict` (or `error`) and `done` with the run record; the stream ends after `done`. Resumable with Last-Event-ID.',
      },
    },
    errors: [400, 404, 410],
    handler: async (ctx, deps, { params }) => {
      const run = notPurged(deps, await loadVisibleRun(deps.db, params.id, callerOf(ctx)));
      await streamDerived(ctx, deps, run.id, async () => runEvents((await findRun(deps.db, run.id))!));
      return HANDLED;
    },
  }),
];

/** A run whose transcript retention deleted answers 410 GONE (shape A, the contract's Retention) naming it. */
function notPurged(deps: AppDeps, run: RunRow): RunRow {
  if (run.purged_at) {
    throw errors.gone(
      `Scenario run '${run.id}' finished more than ${deps.config.RETENTION_TRANSCRIPTS_DAYS} days ago; its transcript was deleted (RETENTION_TRANSCRIPTS_DAYS)`,
    );
  }
  return run;
}
