/**
 * scenario_runs: one row per run, moved queued → running → completed | failed by the scenario_run job, which
 * NOTIFYs every change (toolshed_jobs, kind `scenario_run`) so that waiting requests and event streams wake up.
 */
import { jsonbText } from '../infra/pg-json.js';
import type { Db } from '../infra/db.js';
import type { Assertion, Usage } from '../llm/provider.js';

export type RunStatus = 'queued' | 'running' | 'completed' | 'failed';

/** One tool call of a run, as stored (seq numbers order the run's events for replay). */
export interface StoredStep {
  index: number;
  toolId: string | null;
  toolName: string;
  params: unknown;
  executionId: string | null;
  startedSeq: number;
  completedSeq?: number;
  output?: unknown;
  error?: { code: string; message: string };
  executionTimeMs?: number;
}

export interface ModelRecord {
  provider: string;
  model: string;
  temperature: number;
}

export interface EvaluatorRecord extends ModelRecord {
  verdict: 'pass' | 'fail';
  reason: string;
  assertionResults: { assertion: Assertion; passed: boolean; detail: string }[];
  usage: Usage;
}

export interface AgentRecord extends ModelRecord {
  maxSteps: number;
  usage: Usage;
  /** The tools offered, with the package versions that ran (so that a run can be explained later). */
  tools: { toolId: string; name: string; packageName: string; packageVersion: string }[];
}

export interface RunRow {
  id: string;
  scenario_id: string;
  user_id: string | null;
  batch_id: string | null;
  batch_seq: number | null;
  status: RunStatus;
  success: boolean | null;
  verdict: 'pass' | 'fail' | null;
  reason: string | null;
  evaluator: EvaluatorRecord | null;
  agent: AgentRecord | null;
  usage: (Usage & { executionTimeMs: number }) | null;
  steps: StoredStep[];
  final_text: string | null;
  error: { code: string; message: string } | null;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
  /** Set when retention emptied its transcript (core/repos/retention.ts): its poll answers 410. */
  purged_at?: Date | null;
  /** The attempt that owns the run while it is running (claimRun counts them). */
  attempt: number;
}

export const isFinalRun = (r: Pick<RunRow, 'status'>) => r.status === 'completed' || r.status === 'failed';

export async function insertRun(db: Db, r: { scenarioId: string; userId: string; batchId?: string; repeatIndex?: number }): Promise<RunRow> {
  const [row] = await db('scenario_runs')
    .insert({ scenario_id: r.scenarioId, user_id: r.userId, batch_id: r.batchId ?? null, repeat_index: r.repeatIndex ?? null })
    .returning('*');
  return row;
}

/** How many runs the user has queued or running (the one just inserted in this transaction included). */
export async function countActiveRuns(db: Db, userId: string): Promise<number> {
  const [row] = await db('scenario_runs').where({ user_id: userId }).whereIn('status', ['queued', 'running']).count<{ n: string }[]>('* as n');
  return Number(row.n);
}

export async function findRun(db: Db, id: string): Promise<RunRow | undefined> {
  return db('scenario_runs').where({ id }).first();
}

/** A scenario's runs, newest first; limit + 1 rows (for hasMore). */
export async function listRuns(db: Db, scenarioId: string, limit: number, offset: number): Promise<RunRow[]> {
  return db('scenario_runs')
    .where({ scenario_id: scenarioId })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(limit + 1)
    .offset(offset);
}

export async function notifyRun(db: Db, r: Pick<RunRow, 'id' | 'status' | 'batch_id'>): Promise<void> {
  const payload = { kind: 'scenario_run', id: r.id, status: r.status, ...(r.batch_id ? { batchId: r.batch_id } : {}) };
  await db.raw('select pg_notify(?, ?)', ['toolshed_jobs', JSON.stringify(payload)]);
}

/**
 * Claims the run for the job as a new attempt (queued, or running after a crash: it starts over); undefined when
 * already final. Only this attempt (row.attempt) can then store steps, finish or requeue it.
 */
export async function claimRun(db: Db, id: string): Promise<RunRow | undefined> {
  const [row] = await db('scenario_runs')
    .where({ id })
    .whereIn('status', ['queued', 'running'])
    .update({ status: 'running', started_at: db.fn.now(), steps: '[]', attempt: db.raw('attempt + 1') })
    .returning('*');
  if (row) await notifyRun(db, row);
  return row;
}

/** Stores the steps so far (a running run only) and tells the listeners. */
export async function saveSteps(db: Db, run: Pick<RunRow, 'id' | 'batch_id' | 'attempt'>, steps: StoredStep[]): Promise<void> {
  const n = await db('scenario_runs')
    .where({ id: run.id, status: 'running', attempt: run.attempt })
    .update({ steps: JSON.stringify(steps) });
  if (n) await notifyRun(db, { ...run, status: 'running' });
}

export interface RunOutcome {
  status: 'completed' | 'failed';
  success: boolean;
  verdict?: 'pass' | 'fail';
  reason?: string;
  evaluator?: EvaluatorRecord;
  agent?: AgentRecord;
  usage: Usage & { executionTimeMs: number };
  steps: StoredStep[];
  finalText?: string;
  error?: { code: string; message: string };
  batchSeq?: number;
}

/**
 * Makes the run final, once and only by the attempt that owns it (compare-and-set from `running`); returns the final
 * row, or undefined when another attempt owns it or it was final already.
 */
export async function finishRun(db: Db, id: string, attempt: number, o: RunOutcome): Promise<RunRow | undefined> {
  const [row] = await db('scenario_runs')
    .where({ id, status: 'running', attempt })
    .update({
      status: o.status,
      success: o.success,
      verdict: o.verdict ?? null,
      reason: o.reason?.replaceAll('\u0000', '\ufffd') ?? null,
      evaluator: jsonbText(o.evaluator),
      agent: o.agent ? JSON.stringify(o.agent) : null,
      usage: JSON.stringify(o.usage),
      steps: JSON.stringify(o.steps),
      final_text: o.finalText?.replaceAll('\u0000', '\ufffd') ?? null,
      error: jsonbText(o.error),
      batch_seq: o.batchSeq ?? null,
      completed_at: db.fn.now(),
    })
    .returning('*');
  return row;
}

/** Puts a running run back in the queue (its worker is stopping; the job will run it again). */
export async function requeueRun(db: Db, id: string, attempt: number): Promise<void> {
  await db('scenario_runs').where({ id, status: 'running', attempt }).update({ status: 'queued', steps: '[]' });
}

/** The reaper's verdict on a run whose every attempt died: failed, whatever attempt held it (no statistics move). */
export async function failRunningRun(db: Db, id: string, error: { code: string; message: string }): Promise<void> {
  const [row] = await db('scenario_runs')
    .where({ id })
    .whereIn('status', ['queued', 'running'])
    .update({ status: 'failed', success: false, error: jsonbText(error), completed_at: db.fn.now() })
    .returning('*');
  if (row) await notifyRun(db, row);
}
