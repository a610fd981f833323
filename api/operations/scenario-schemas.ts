/**
 * Scenarios, runs and batches as the API shows them: the response schemas and the mappers from rows to them (shared
 * by the scenario, run and batch operations and by the run and batch event streams, api/streams/run-events.ts). Beyond the
 * contract's fields we return what explains a run (agent models and tool versions, the answer, the error) and the
 * embedded collection's `uid`, `isPublic` and `owner`.
 */
import { z } from 'zod';
import type { LlmPrices } from '../../core/infra/config.js';
import type { BatchRow, BatchRunRow } from '../../core/repos/scenario-batches.js';
import { batchReport } from '../../core/scenarios/scenario-batch-report.js';
import type { RunRow, StoredStep } from '../../core/repos/scenario-runs.js';
import type { ScenarioRow } from '../../core/repos/scenarios.js';
import { nullableTimestamp, timestamp, uuid } from './envelope.js';
import { scopedEnvSchema } from '../scoped-env.js';

const iso = (d: Date) => new Date(d).toISOString();
const isoOrNull = (d: Date | null) => (d ? iso(d) : null);
const round4 = (x: number) => Math.round(x * 1e4) / 1e4;

export const assertionSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('toolCalled'), tool: z.string() }).meta({ description: 'The tool was called' }),
  z.object({ type: z.literal('outputContains'), text: z.string() }).meta({ description: 'The answer or a tool output contains the text (any case)' }),
  z.object({ type: z.literal('noToolErrors') }).meta({ description: 'No tool call failed' }),
  z
    .object({ type: z.literal('toolSequence'), tools: z.array(z.string()) })
    .meta({ description: 'These tools were called in this order (other calls may come between)' }),
  z.object({ type: z.literal('toolArgs'), tool: z.string(), args: z.record(z.string(), z.unknown()) }).meta({
    description:
      'Some call of the tool had arguments holding `args` as a JSON subset: every key present with a value that holds the expected one (objects may have more keys; arrays match element by element; other values are equal)',
  }),
  z.object({ type: z.literal('maxSteps'), max: z.number().int() }).meta({ description: 'At most `max` tool calls' }),
  z.object({ type: z.literal('maxLatencyMs'), max: z.number().int() }).meta({ description: "The run's wall time (`usage.executionTimeMs`) at most `max` ms" }),
  z
    .object({ type: z.literal('maxTokens'), max: z.number().int() })
    .meta({ description: "The run's tokens, agent and judge (`usage.totalTokens`), at most `max`" }),
]);
const passFail = z.enum(['pass', 'fail']);
const runStatus = z.enum(['queued', 'running', 'completed', 'failed']);
const int = () => z.number().int();
const codeMessage = z.object({ code: z.string(), message: z.string() });

export const scenarioSchema = z.object({
  id: uuid,
  collectionId: uuid,
  prompt: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  tags: z.array(z.string()),
  assertions: z.array(assertionSchema).nullable(),
  qualityScore: z.number().meta({ description: '(passes + 1) / (runs + 2) over the last 20 completed runs' }),
  totalRuns: int(),
  lastRunAt: nullableTimestamp,
  lastRunStatus: passFail.nullable(),
  consecutivePasses: int(),
  consecutiveFails: int(),
  createdAt: timestamp,
  updatedAt: timestamp,
  collection: z.object({
    id: uuid,
    name: z.string(),
    slug: z.string().meta({ description: "The collection's uid" }),
    username: z.string().meta({ description: "The collection owner's username" }),
    uid: z.string(),
    isPublic: z.boolean(),
    owner: z.object({ id: uuid, username: z.string() }),
  }),
});
export type Scenario = z.infer<typeof scenarioSchema>;

export function toScenario(s: ScenarioRow): Scenario {
  return {
    id: s.id,
    collectionId: s.collection_id,
    prompt: s.prompt,
    name: s.name,
    description: s.description,
    tags: s.tags,
    assertions: s.assertions,
    qualityScore: round4(s.quality_score),
    totalRuns: s.total_runs,
    lastRunAt: isoOrNull(s.last_run_at),
    lastRunStatus: s.last_run_status,
    consecutivePasses: s.consecutive_passes,
    consecutiveFails: s.consecutive_fails,
    createdAt: iso(s.created_at),
    updatedAt: iso(s.updated_at),
    collection: {
      id: s.collection_id,
      name: s.collection_name,
      slug: s.collection_uid,
      username: s.owner_username,
      uid: s.collection_uid,
      isPublic: s.collection_is_public,
      owner: { id: s.collection_owner_id, username: s.owner_username },
    },
  };
}

export const featuredScenarioSchema = scenarioSchema.extend({
  featuredBecause: z.enum(['bestInCollection', 'recentPass', 'quality']).meta({ description: 'Why it was picked' }),
});

/** An item of a collection's scenario list (`scenarios.listForCollection`): exactly the contract's fields. */
export const collectionScenarioItemSchema = z.object({
  id: uuid,
  name: z.string(),
  prompt: z.string(),
  qualityScore: z.number(),
  totalRuns: int(),
  lastRunStatus: passFail.nullable(),
  tags: z.array(z.string()),
});

export function toCollectionScenarioItem(s: ScenarioRow): z.infer<typeof collectionScenarioItemSchema> {
  return {
    id: s.id,
    name: s.name,
    prompt: s.prompt,
    qualityScore: round4(s.quality_score),
    totalRuns: s.total_runs,
    lastRunStatus: s.last_run_status,
    tags: s.tags,
  };
}

/** A similar scenario (`id` may name a scenario proposed earlier in the same generation: `pending-<n>`). */
export const similarItemSchema = z.object({ id: z.string(), name: z.string(), similarity: z.number() });

export const similarityReportSchema = z.object({
  maxSimilarity: z.number(),
  mostSimilar: similarItemSchema.nullable(),
  similar: z.array(similarItemSchema.extend({ prompt: z.string() })).meta({ description: 'Those above 0.3, most similar first' }),
});

export const generationSchema = z.object({
  scenarios: z.array(z.object({ scenario: scenarioSchema, similarity: z.object({ maxSimilarity: z.number(), mostSimilar: similarItemSchema.nullable() }) })),
  requested: int(),
  rejectedAsTooSimilar: int().meta({ description: 'Proposals refused as too similar (each regenerated, or dropped after the last round)' }),
  dropped: int().meta({ description: 'Requested slots left empty' }),
  rounds: int(),
  quotaRemaining: int().nullable().meta({ description: 'Runs left in the daily scenario quota (null: unlimited)' }),
});

const stepSchema = z.object({
  index: int(),
  toolId: uuid.nullable().meta({ description: 'null when the agent named a tool the collection does not have' }),
  toolName: z.string(),
  params: z.unknown(),
  executionId: uuid.nullable(),
  output: z.unknown().optional().meta({ description: 'Once the call succeeded: what the tool returned' }),
  error: codeMessage.optional().meta({ description: 'Once the call failed: TOOL_ERROR, EXECUTION_TIMEOUT, UNKNOWN_TOOL, …' }),
  executionTimeMs: int().optional().meta({ description: 'Once the call ended' }),
});

/** A step as clients see it: `output` or `error` once the call ended (internal sequence numbers left out). */
export function toStep(s: StoredStep): z.infer<typeof stepSchema> {
  return {
    index: s.index,
    toolId: s.toolId,
    toolName: s.toolName,
    params: s.params,
    executionId: s.executionId,
    ...(s.completedSeq === undefined ? {} : s.error ? { error: s.error } : { output: s.output ?? null }),
    ...(s.executionTimeMs === undefined ? {} : { executionTimeMs: s.executionTimeMs }),
  };
}

const assertionResultSchema = z.object({
  assertion: assertionSchema,
  passed: z.boolean(),
  detail: z.string().meta({ description: 'What was seen: the calls made, the arguments, the count, the tokens or the time' }),
});

const evaluatorSchema = z.object({
  model: z.string().nullable(),
  verdict: passFail.nullable(),
  reason: z.string().nullable(),
  provider: z.string().optional(),
  temperature: z.number().optional(),
  assertions: z.array(assertionResultSchema).optional().meta({ description: "The outcome of each of the scenario's assertions" }),
});

/** The judge of a run: all null until it is judged (and on a failed run). */
export function toEvaluator(r: RunRow): z.infer<typeof evaluatorSchema> {
  const e = r.evaluator;
  if (!e) return { model: null, verdict: null, reason: null };
  return { model: e.model, provider: e.provider, temperature: e.temperature, verdict: e.verdict, reason: e.reason, assertions: e.assertionResults };
}

const runFields = {
  scenarioId: uuid,
  batchId: uuid.nullable(),
  status: runStatus,
  success: z.boolean().nullable().meta({ description: 'null until final; a `fail` verdict is status completed, success false' }),
  evaluator: evaluatorSchema,
  usage: z.object({ inputTokens: int(), outputTokens: int(), totalTokens: int(), executionTimeMs: int() }),
  timestamps: z.object({ startedAt: nullableTimestamp, completedAt: nullableTimestamp, createdAt: timestamp }),
  quotaRemaining: int().nullable().optional().meta({ description: "The caller's runs left today (null: unlimited or anonymous)" }),
  steps: z.array(stepSchema),
  agent: z
    .object({
      provider: z.string(),
      model: z.string(),
      temperature: z.number(),
      maxSteps: int(),
      tools: z.array(z.object({ toolId: uuid, name: z.string(), packageName: z.string(), packageVersion: z.string() })),
    })
    .nullable(),
  finalText: z.string().nullable(),
  error: codeMessage.nullable(),
};

export const runRecordSchema = z.object({ runId: uuid, ...runFields });
export type RunRecord = z.infer<typeof runRecordSchema>;

/** The run record of the contract, plus what explains the run (agent models and tool versions, answer, error). */
export function toRunRecord(r: RunRow, quotaRemaining?: number | null): RunRecord {
  const usage = r.usage ?? { inputTokens: 0, outputTokens: 0, totalTokens: 0, executionTimeMs: 0 };
  return {
    runId: r.id,
    scenarioId: r.scenario_id,
    batchId: r.batch_id,
    status: r.status,
    success: r.success,
    evaluator: toEvaluator(r),
    usage: { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, totalTokens: usage.totalTokens, executionTimeMs: usage.executionTimeMs },
    timestamps: { startedAt: isoOrNull(r.started_at), completedAt: isoOrNull(r.completed_at), createdAt: iso(r.created_at) },
    ...(quotaRemaining === undefined ? {} : { quotaRemaining }),
    steps: r.steps.map(toStep),
    agent: r.agent
      ? { provider: r.agent.provider, model: r.agent.model, temperature: r.agent.temperature, maxSteps: r.agent.maxSteps, tools: r.agent.tools }
      : null,
    finalText: r.final_text,
    error: r.error,
  };
}

/** A run queued without waiting (`?wait=false`). */
export const queuedRunSchema = z.object({ runId: uuid, status: runStatus, quotaRemaining: int().nullable() });

/** An item of a run history: the run named `id` (not `runId`), with the outcome of each assertion (null until judged). */
export const historyItemSchema = z.object({
  id: uuid,
  ...runFields,
  assertions: z.array(assertionResultSchema).nullable(),
});

export function toHistoryItem(r: RunRow, quotaRemaining?: number | null): z.infer<typeof historyItemSchema> {
  const { runId, ...rest } = toRunRecord(r, quotaRemaining);
  return { id: runId, ...rest, assertions: r.evaluator ? r.evaluator.assertionResults : null };
}

export const batchStartSchema = z.object({
  batchId: uuid,
  runIds: z.array(uuid),
  skipped: int().meta({ description: 'Scenarios not queued because the daily quota ran out' }),
  quotaRemaining: int().nullable(),
  repeat: int().meta({ description: 'Runs per scenario' }),
});

/** Runs per scenario (a run's or a batch's body): 1–10, each one unit of quota. */
const repeatSchema = z.number().int().min(1).max(10).optional();

/** The body of run-all: both optional; either makes the quota all-or-nothing. */
export const batchBodySchema = z
  .object({
    repeat: repeatSchema.meta({ description: 'Runs per scenario, 1–10 (each one unit of quota)' }),
    scenarioIds: z
      .array(z.string().min(1).max(64))
      .min(1)
      .max(1000)
      .optional()
      .meta({ description: "A chosen subset of the collection's scenarios (ids); each must belong to the collection" }),
    env: scopedEnvSchema.optional().meta({ description: 'Env for the tools of every run, as a single run takes it (also as `X-Tool-Env-…` headers)' }),
  })
  .strict();

/** The body of a scenario run: `repeat` above 1 makes it a batch of that one scenario. */
export const runBodySchema = z
  .object({
    repeat: repeatSchema.meta({
      description: 'Above 1: a batch of this scenario run that many times (202 with batchId and runIds; the quota taken all at once)',
    }),
    env: scopedEnvSchema.optional().meta({ description: 'Env for the tools: `{ NAME: value }` or `{ "<package>": { NAME: value } }`' }),
  })
  .strict();

const batchCountsSchema = z.object({
  queued: int(),
  running: int(),
  completed: int(),
  failed: int(),
  passed: int().meta({ description: 'Completed runs judged pass' }),
  failedVerdicts: int().meta({ description: 'Completed runs judged fail' }),
});
export type BatchCounts = z.infer<typeof batchCountsSchema>;

export function countRuns(runs: Pick<BatchRunRow, 'status' | 'success'>[]): BatchCounts {
  const c: BatchCounts = { queued: 0, running: 0, completed: 0, failed: 0, passed: 0, failedVerdicts: 0 };
  for (const r of runs) {
    c[r.status]++;
    if (r.status === 'completed') r.success ? c.passed++ : c.failedVerdicts++;
  }
  return c;
}

const batchRunSchema = z.object({
  runId: uuid,
  scenarioId: uuid,
  status: runStatus,
  success: z.boolean().nullable(),
  verdict: passFail.nullable(),
  repeatIndex: int().nullable().meta({ description: "The run's place among its scenario's runs (1..repeat)" }),
});

const scenarioSummarySchema = z.object({
  scenarioId: uuid,
  name: z.string(),
  runs: int(),
  completed: int().meta({ description: 'Runs judged (a failed run has no verdict)' }),
  passes: int(),
  passRate: z.number().nullable().meta({ description: 'passes / completed; null while none is completed' }),
  passAtK: z.boolean().nullable().meta({ description: 'At least one pass; false once every run is final without one; null until then' }),
  passHatK: z.boolean().nullable().meta({ description: 'All k runs passed; null until every run is final' }),
  flaky: z.boolean().meta({ description: 'Its verdicts disagree' }),
  verdicts: z.array(passFail.nullable()).meta({ description: 'In repeat order; null for a run not (or not successfully) judged' }),
});

const usageTotalsSchema = z.object({ inputTokens: int(), outputTokens: int(), totalTokens: int() });
const batchCostSchema = z.object({ currency: z.literal('USD'), agent: z.number(), judge: z.number(), total: z.number() });

export const batchProgressSchema = z.object({
  batchId: uuid,
  collectionId: uuid,
  total: int(),
  skipped: int(),
  ...batchCountsSchema.shape,
  done: z.boolean(),
  createdAt: timestamp,
  completedAt: nullableTimestamp,
  runs: z.array(batchRunSchema),
  repeat: int().meta({ description: 'Runs per scenario' }),
  passRate: z.number().nullable().meta({ description: 'Passes / completed runs over the batch; null while none is completed' }),
  flakyCount: int().meta({ description: 'Scenarios whose verdicts disagree' }),
  scenarios: z.array(scenarioSummarySchema).meta({ description: 'Per scenario: flaky ones first, then by name' }),
  usage: z.object({ agent: usageTotalsSchema, judge: usageTotalsSchema, total: usageTotalsSchema }).meta({ description: 'Tokens summed over the runs' }),
  cost: batchCostSchema.nullable().meta({ description: "The usage at the operator's prices (LLM_PRICES); null without a price for every model used" }),
  costNote: z.string().nullable().meta({ description: 'Why `cost` is null' }),
});

export function toBatchProgress(b: BatchRow, runs: BatchRunRow[], prices: LlmPrices | undefined): z.infer<typeof batchProgressSchema> {
  const report = batchReport(runs, prices);
  return {
    batchId: b.id,
    collectionId: b.collection_id,
    total: b.total,
    skipped: b.skipped,
    ...countRuns(runs),
    done: b.completed_at !== null,
    createdAt: iso(b.created_at),
    completedAt: isoOrNull(b.completed_at),
    runs: runs.map((r) => ({ runId: r.id, scenarioId: r.scenario_id, status: r.status, success: r.success, verdict: r.verdict, repeatIndex: r.repeat_index })),
    repeat: b.repeat,
    passRate: report.passRate,
    flakyCount: report.flakyCount,
    scenarios: report.scenarios,
    usage: report.usage,
    cost: report.cost,
    costNote: report.costNote,
  };
}

/** A stream that failed after its first byte ends with this (no `runId`/`batchId`). */
const streamFailed = { code: z.string(), message: z.string() };

/** The events of `scenarioRuns.events` (api/streams/run-events.ts): what each event's `data:` carries. */
export const runStreamEvents = {
  step: z.object({ runId: uuid, index: int(), toolId: uuid.nullable(), toolName: z.string(), params: z.unknown(), executionId: uuid.nullable() }),
  'tool.completed': stepSchema.omit({ params: true }).extend({ runId: uuid }),
  verdict: evaluatorSchema.extend({ runId: uuid, success: z.boolean().nullable() }),
  error: z
    .object({ runId: uuid.optional().meta({ description: 'Absent when the stream itself failed' }), ...streamFailed })
    .meta({ description: 'The run failed (its error), or the stream did' }),
  done: runRecordSchema.omit({ quotaRemaining: true }),
};

/** The events of `scenarioBatches.events` (api/streams/run-events.ts). */
export const batchStreamEvents = {
  'run.completed': z.object({
    batchId: uuid,
    runId: uuid,
    scenarioId: uuid,
    status: runStatus,
    success: z.boolean().nullable(),
    verdict: passFail.nullable(),
    repeatIndex: int().nullable().meta({ description: "The run's place among its scenario's runs (1..repeat)" }),
    finished: int().meta({ description: 'Runs finished so far, this one included' }),
    total: int(),
    counts: batchCountsSchema,
  }),
  error: z.object(streamFailed).meta({ description: 'The stream failed' }),
  done: batchProgressSchema,
};
