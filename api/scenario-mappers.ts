/** Response mappers for scenarios, runs and batches (SPEC 9–17): rows in, contract shapes out. */
import type { BatchRow, BatchRunRow } from '../core/repos/scenario-batches.js';
import type { RunRow, StoredStep } from '../core/repos/scenario-runs.js';
import type { ScenarioRow } from '../core/repos/scenarios.js';
import { iso } from './mappers.js';

const round4 = (x: number) => Math.round(x * 1e4) / 1e4;

export function scenario(s: ScenarioRow) {
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
    lastRunAt: iso(s.last_run_at),
    lastRunStatus: s.last_run_status,
    consecutivePasses: s.consecutive_passes,
    consecutiveFails: s.consecutive_fails,
    createdAt: iso(s.created_at),
    updatedAt: iso(s.updated_at),
    collection: scenarioCollection(s),
  };
}

/** The contract's `{ id, name, slug, username }` (slug = uid, username = the owner's), plus our `uid`, `isPublic`, `owner`. */
function scenarioCollection(s: ScenarioRow) {
  return {
    id: s.collection_id,
    name: s.collection_name,
    slug: s.collection_uid,
    username: s.owner_username,
    uid: s.collection_uid,
    isPublic: s.collection_is_public,
    owner: { id: s.collection_owner_id, username: s.owner_username },
  };
}

/** An item of a collection's scenario list (11): exactly the contract's fields. */
export function collectionScenarioItem(s: ScenarioRow) {
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

/** A step as clients see it: `output` or `error` once the call ended (internal sequence numbers left out). */
export function step(s: StoredStep) {
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

export function evaluator(r: RunRow) {
  const e = r.evaluator;
  if (!e) return { model: null, verdict: null, reason: null };
  return { model: e.model, provider: e.provider, temperature: e.temperature, verdict: e.verdict, reason: e.reason, assertions: e.assertionResults };
}

/** The run record of the SPEC, plus what explains the run (agent models and tool versions, answer, error). */
export function runRecord(r: RunRow, quotaRemaining?: number | null) {
  const usage = r.usage ?? { inputTokens: 0, outputTokens: 0, totalTokens: 0, executionTimeMs: 0 };
  return {
    runId: r.id,
    scenarioId: r.scenario_id,
    batchId: r.batch_id,
    status: r.status,
    success: r.success,
    evaluator: evaluator(r),
    usage: { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, totalTokens: usage.totalTokens, executionTimeMs: usage.executionTimeMs },
    timestamps: { startedAt: iso(r.started_at), completedAt: iso(r.completed_at), createdAt: iso(r.created_at) },
    ...(quotaRemaining === undefined ? {} : { quotaRemaining }),
    steps: r.steps.map(step),
    agent: r.agent ? { provider: r.agent.provider, model: r.agent.model, temperature: r.agent.temperature, maxSteps: r.agent.maxSteps, tools: r.agent.tools } : null,
    finalText: r.final_text,
    error: r.error,
  };
}

/**
 * An item of a scenario's run history (15): the run record with the run named `id` (not `runId`), and `assertions`,
 * the outcome of each of the scenario's assertions in this run (null until the run is judged).
 */
export function historyItem(r: RunRow, quotaRemaining?: number | null) {
  const { runId, ...rest } = runRecord(r, quotaRemaining);
  return { id: runId, ...rest, assertions: r.evaluator ? r.evaluator.assertionResults : null };
}

export interface BatchCounts {
  queued: number;
  running: number;
  completed: number;
  failed: number;
  passed: number;
  failedVerdicts: number;
}

export function countRuns(runs: Pick<BatchRunRow, 'status' | 'success'>[]): BatchCounts {
  const c: BatchCounts = { queued: 0, running: 0, completed: 0, failed: 0, passed: 0, failedVerdicts: 0 };
  for (const r of runs) {
    c[r.status]++;
    if (r.status === 'completed') r.success ? c.passed++ : c.failedVerdicts++;
  }
  return c;
}

export function batchProgress(b: BatchRow, runs: BatchRunRow[]) {
  return {
    batchId: b.id,
    collectionId: b.collection_id,
    total: b.total,
    skipped: b.skipped,
    ...countRuns(runs),
    done: b.completed_at !== null,
    createdAt: iso(b.created_at),
    completedAt: iso(b.completed_at),
    runs: runs.map((r) => ({ runId: r.id, scenarioId: r.scenario_id, status: r.status, success: r.success, verdict: r.verdict })),
  };
}
