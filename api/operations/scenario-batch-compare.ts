/**
 * A collection's batch history (pass rate over time) and the comparison of two of its batches, per scenario
 * (core/scenarios/scenario-batch-stats.ts). Visibility as for a batch: its collection's, or the user who started it; the
 * history is the collection's (a private one is its owner's alone). Errors in shape B.
 */
import { z } from 'zod';
import { defineOperation, type Operation } from './define.js';
import { ok, okPage, nullableTimestamp, timestamp, uuid } from './envelope.js';
import { callerOf } from '../middleware/auth.js';
import { pageOf, paging } from '../validate.js';
import { errors } from '../../core/infra/errors.js';
import { loadVisibleCollection } from '../../core/collections/collections.js';
import { batchRuns, listCollectionBatches, scenarioNames, type BatchHistoryRow } from '../../core/repos/scenario-batches.js';
import { batchPassRate, compareStats, scenarioStats } from '../../core/scenarios/scenario-batch-stats.js';
import { loadVisibleBatch } from '../../core/scenarios/scenario-runs.js';

const TAG = 'Scenario Batches';

const passRate = z
  .number()
  .min(0)
  .max(1)
  .nullable()
  .meta({ description: 'Passed runs over finished runs (an errored run counts as not passed); null when none finished' });

const historyItemSchema = z.object({
  id: uuid,
  createdAt: timestamp,
  completedAt: nullableTimestamp.meta({ description: 'null while the batch runs' }),
  total: z.number().int().meta({ description: 'Runs queued' }),
  passed: z.number().int(),
  failed: z.number().int().meta({ description: 'Finished runs that did not pass (a fail verdict or an error)' }),
  passRate,
});

function toHistoryItem(r: BatchHistoryRow): z.infer<typeof historyItemSchema> {
  const finished = r.passed + r.failed;
  return {
    id: r.id,
    createdAt: r.created_at.toISOString(),
    completedAt: r.completed_at ? r.completed_at.toISOString() : null,
    total: r.total,
    passed: r.passed,
    failed: r.failed,
    passRate: finished > 0 ? r.passed / finished : null,
  };
}

const change = z.enum(['regression', 'improvement', 'unchanged', 'flaky', 'added', 'removed']);
const side = z.object({ id: uuid, createdAt: timestamp, completedAt: timestamp, passRate });

const compareSchema = z.object({
  base: side,
  head: side,
  threshold: z.number(),
  scenarios: z.array(
    z.object({
      scenarioId: uuid,
      name: z.string().nullable().meta({ description: 'null when the scenario has been deleted since' }),
      basePassRate: passRate,
      headPassRate: passRate,
      change,
    }),
  ),
  totals: z.object({
    regressions: z.number().int(),
    improvements: z.number().int(),
    unchanged: z.number().int(),
    flaky: z.number().int(),
    added: z.number().int(),
    removed: z.number().int(),
  }),
});

const threshold = z
  .string()
  .regex(/^(0(\.\d+)?|1(\.0+)?|\.\d+)$/, 'must be a number from 0 to 1')
  .transform(Number)
  .optional()
  .meta({ description: 'A regression is a fall of the pass rate by more than this (0–1, default 0: any fall)' });

export const scenarioBatchCompareOperations: Operation[] = [
  defineOperation({
    id: 'scenarioBatches.history',
    method: 'get',
    path: '/api/collections/:id/scenario-batches',
    summary: "A collection's batches, newest first, with their pass rates",
    tag: TAG,
    auth: 'public',
    errorShape: 'B',
    params: z.object({ id: z.string().meta({ description: "The collection's id or uid" }) }),
    query: z.object(paging(20, 100)),
    responses: { 200: okPage(historyItemSchema) },
    errors: [400, 404],
    handler: async (ctx, deps, { params, query }) => {
      const c = await loadVisibleCollection(deps.db, params.id, callerOf(ctx));
      const page = pageOf(await listCollectionBatches(deps.db, c.id, query.limit, query.offset), query.limit, query.offset);
      return { success: true, data: page.items.map(toHistoryItem), pagination: page.pagination };
    },
  }),
  defineOperation({
    id: 'scenarioBatches.compare',
    method: 'get',
    path: '/api/scenario-batches/:id/compare/:otherId',
    summary: 'Two finished batches of one collection compared per scenario: `:id` is the base, `:otherId` the head',
    description:
      'Per scenario the two pass rates and the change: `regression` (fell by more than `threshold`), `flaky` (not a regression, but its verdicts in the head disagree), `improvement` (rose by more than `threshold`), `added`/`removed` (run in one batch only), else `unchanged`. Regressions are listed first. Batches of different collections: 400; a batch still running: 409.',
    tag: TAG,
    auth: 'public',
    errorShape: 'B',
    params: z.object({ id: z.string(), otherId: z.string() }),
    query: z.object({ threshold }),
    responses: { 200: ok(compareSchema) },
    errors: [400, 404, 409],
    handler: async (ctx, deps, { params, query }) => {
      const caller = callerOf(ctx);
      const base = await loadVisibleBatch(deps.db, params.id, caller);
      const head = await loadVisibleBatch(deps.db, params.otherId, caller);
      if (base.collection_id !== head.collection_id) {
        throw errors.validation(`Batches ${base.id} and ${head.id} belong to different collections; only batches of one collection compare`);
      }
      for (const b of [base, head]) {
        if (!b.completed_at) throw errors.conflict(`Batch ${b.id} is still running; compare it once it has completed`);
      }
      const [baseRuns, headRuns] = await Promise.all([batchRuns(deps.db, base.id), batchRuns(deps.db, head.id)]);
      const t = query.threshold ?? 0;
      const { scenarios, totals } = compareStats(scenarioStats(baseRuns), scenarioStats(headRuns), t);
      const names = await scenarioNames(
        deps.db,
        scenarios.map((s) => s.scenarioId),
      );
      const sideOf = (b: typeof base, runs: typeof baseRuns) => ({
        id: b.id,
        createdAt: b.created_at.toISOString(),
        completedAt: b.completed_at!.toISOString(),
        passRate: batchPassRate(runs).passRate,
      });
      return {
        success: true,
        data: {
          base: sideOf(base, baseRuns),
          head: sideOf(head, headRuns),
          threshold: t,
          scenarios: scenarios.map((s) => ({ ...s, name: names.get(s.scenarioId) ?? null })),
          totals,
        },
      };
    },
  }),
];
