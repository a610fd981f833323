/**
 * scenario_batches: a set of runs queued together by run-all. Progress is counted from the runs; the batch row is
 * locked while a run finishes, which gives each finished run its place (batch_seq) and marks the batch done once.
 */
import type { Db } from '../infra/db.js';
import type { Usage } from '../llm/provider.js';
import type { RunStatus } from './scenario-runs.js';

export interface BatchRow {
  id: string;
  collection_id: string;
  user_id: string | null;
  total: number;
  skipped: number;
  /** Runs per scenario (1..10). */
  repeat: number;
  created_at: Date;
  completed_at: Date | null;
  // joined
  collection_uid: string;
  collection_is_public: boolean;
  collection_owner_id: string;
}

export interface BatchRunRow {
  id: string;
  scenario_id: string;
  status: RunStatus;
  success: boolean | null;
  verdict: 'pass' | 'fail' | null;
  batch_seq: number | null;
  completed_at: Date | null;
  /** The run's place among its scenario's runs in the batch (1..repeat); null for batches from before repeats. */
  repeat_index: number | null;
  created_at: Date;
  scenario_name: string;
  /** Token usage and model of the agent and of the judge, as the run recorded them (null until final). */
  agent_model: string | null;
  agent_usage: Usage | null;
  judge_model: string | null;
  judge_usage: Usage | null;
}

export async function insertBatch(db: Db, b: { collectionId: string; userId: string; total: number; skipped: number; repeat?: number }): Promise<string> {
  const [row] = await db('scenario_batches')
    .insert({ collection_id: b.collectionId, user_id: b.userId, total: b.total, skipped: b.skipped, repeat: b.repeat ?? 1 })
    .returning('id');
  return row.id;
}

export async function setBatchTotal(db: Db, id: string, total: number, skipped: number): Promise<void> {
  await db('scenario_batches')
    .where({ id })
    .update({ total, skipped, ...(total === 0 ? { completed_at: db.fn.now() } : {}) });
}

export async function findBatch(db: Db, id: string): Promise<BatchRow | undefined> {
  return db('scenario_batches as b')
    .join('collections as c', 'c.id', 'b.collection_id')
    .where('b.id', id)
    .first('b.*', 'c.uid as collection_uid', 'c.is_public as collection_is_public', 'c.owner_id as collection_owner_id');
}

/** The batch's runs in the order they finished (unfinished ones last, by creation), with their scenario's name and usage. */
export async function batchRuns(db: Db, batchId: string): Promise<BatchRunRow[]> {
  return db('scenario_runs as r')
    .join('scenarios as s', 's.id', 'r.scenario_id')
    .where({ 'r.batch_id': batchId })
    .select(
      'r.id',
      'r.scenario_id',
      'r.status',
      'r.success',
      'r.verdict',
      'r.batch_seq',
      'r.completed_at',
      'r.repeat_index',
      'r.created_at',
      's.name as scenario_name',
      db.raw(`r.agent->>'model' as agent_model`),
      db.raw(`r.agent->'usage' as agent_usage`),
      db.raw(`r.evaluator->>'model' as judge_model`),
      db.raw(`r.evaluator->'usage' as judge_usage`),
    )
    .orderByRaw('r.batch_seq asc nulls last, r.created_at asc, r.repeat_index asc nulls last, r.id asc');
}

/**
 * Locks the batch row and returns the place of the run finishing now (1 for the first). Must run in the transaction
 * that makes the run final, so places are unique and follow commit order.
 */
export async function takeBatchSeq(trx: Db, batchId: string): Promise<number | undefined> {
  const locked = await trx('scenario_batches').where({ id: batchId }).forUpdate().first('id');
  if (!locked) return undefined;
  const row = await trx('scenario_runs').where({ batch_id: batchId }).max<{ max: number | null }[]>('batch_seq as max').first();
  return (row?.max ?? 0) + 1;
}

/** Marks the batch completed when none of its runs is still queued or running (under the batch lock). */
export async function completeBatchIfDone(trx: Db, batchId: string): Promise<boolean> {
  const n = await trx('scenario_batches')
    .where({ id: batchId })
    .whereNull('completed_at')
    .whereNotExists((q) => q.select(trx.raw('1')).from('scenario_runs').where({ batch_id: batchId }).whereIn('status', ['queued', 'running']))
    .update({ completed_at: trx.fn.now() });
  if (n) await trx.raw('select pg_notify(?, ?)', ['toolshed_jobs', JSON.stringify({ kind: 'scenario_batch', id: batchId, batchId, status: 'completed' })]);
  return n > 0;
}

export interface BatchHistoryRow {
  id: string;
  created_at: Date;
  completed_at: Date | null;
  total: number;
  passed: number;
  failed: number;
}

/**
 * A collection's batches, newest first (limit + 1 rows, for hasMore), each with its finished runs counted: `passed`
 * the runs judged pass, `failed` the other finished ones (a fail verdict or an error).
 */
export async function listCollectionBatches(db: Db, collectionId: string, limit: number, offset: number): Promise<BatchHistoryRow[]> {
  // The page of batches first (scenario_batches_collection_created), then only their runs counted: a collection with
  // a long history no longer counts the runs of every batch it ever had to answer one page.
  const { rows } = await db.raw(
    `select b.id, b.created_at, b.completed_at, b.total, r.passed, r.failed
       from (select id, created_at, completed_at, total from scenario_batches
              where collection_id = ? order by created_at desc, id desc limit ? offset ?) b
       cross join lateral (
         select (count(*) filter (where status = 'completed' and success))::int as passed,
                (count(*) filter (where status = 'failed' or (status = 'completed' and not coalesce(success, false))))::int as failed
           from scenario_runs where batch_id = b.id) r
      order by b.created_at desc, b.id desc`,
    [collectionId, limit + 1, offset],
  );
  return rows as BatchHistoryRow[];
}

/** The names of these scenarios (those still there). */
export async function scenarioNames(db: Db, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows: { id: string; name: string }[] = await db('scenarios').whereIn('id', ids).select('id', 'name');
  return new Map(rows.map((r) => [r.id, r.name]));
}
