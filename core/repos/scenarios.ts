/**
 * scenarios: rows joined with their collection (for visibility and the `collection` field), listing with tag and
 * sort filters, stored prompt embeddings, the featured mix, and the statistics UPDATE that follows each run.
 */
import type { Db } from '../infra/db.js';
import type { Assertion } from '../llm/provider.js';

export interface ScenarioRow {
  id: string;
  collection_id: string;
  created_by: string | null;
  prompt: string;
  name: string;
  description: string | null;
  tags: string[];
  assertions: Assertion[] | null;
  embedding_model: string | null;
  quality_score: number;
  total_runs: number;
  last_run_at: Date | null;
  last_run_status: 'pass' | 'fail' | null;
  consecutive_passes: number;
  consecutive_fails: number;
  created_at: Date;
  updated_at: Date;
  // joined
  collection_uid: string;
  collection_name: string;
  collection_is_public: boolean;
  collection_owner_id: string;
  owner_username: string;
}

export const SCENARIO_SORTS = {
  qualityScore: 's.quality_score',
  totalRuns: 's.total_runs',
  createdAt: 's.created_at',
  lastRunAt: 's.last_run_at',
} as const;
export type ScenarioSort = keyof typeof SCENARIO_SORTS;

/** Every column but the embedding (large, and only similarity needs it). */
function scenariosQuery(db: Db) {
  return db('scenarios as s')
    .join('collections as c', 'c.id', 's.collection_id')
    .join('users as u', 'u.id', 'c.owner_id')
    .select(
      's.id',
      's.collection_id',
      's.created_by',
      's.prompt',
      's.name',
      's.description',
      's.tags',
      's.assertions',
      's.embedding_model',
      's.quality_score',
      's.total_runs',
      's.last_run_at',
      's.last_run_status',
      's.consecutive_passes',
      's.consecutive_fails',
      's.created_at',
      's.updated_at',
      'c.uid as collection_uid',
      'c.name as collection_name',
      'c.is_public as collection_is_public',
      'c.owner_id as collection_owner_id',
      'u.username as owner_username',
    );
}

export async function findScenario(db: Db, id: string): Promise<ScenarioRow | undefined> {
  return scenariosQuery(db).where('s.id', id).first();
}

export interface ScenarioFilter {
  /** Only scenarios of public collections (`scenarios.list`). */
  publicOnly?: boolean;
  collectionId?: string;
  /** All of these tags (`tags @> array[...]`). */
  tags?: string[];
  sortBy: ScenarioSort;
  limit: number;
  offset: number;
}

/** One page, limit + 1 rows (for hasMore); always descending, nulls last, ties newest id first. */
export async function listScenarios(db: Db, f: ScenarioFilter): Promise<ScenarioRow[]> {
  const q = scenariosQuery(db);
  if (f.publicOnly) q.where('c.is_public', true);
  if (f.collectionId) q.where('s.collection_id', f.collectionId);
  if (f.tags?.length) q.whereRaw('s.tags @> ?::text[]', [f.tags]);
  return q
    .orderByRaw(`${SCENARIO_SORTS[f.sortBy]} desc nulls last, s.id desc`)
    .limit(f.limit + 1)
    .offset(f.offset);
}

export interface NewScenario {
  collectionId: string;
  createdBy: string;
  prompt: string;
  name: string;
  description: string | null;
  tags: string[];
  assertions: Assertion[] | null;
  embedding: number[];
  embeddingModel: string;
}

export async function insertScenario(db: Db, s: NewScenario): Promise<string> {
  const [row] = await db('scenarios')
    .insert({
      collection_id: s.collectionId,
      created_by: s.createdBy,
      prompt: s.prompt,
      name: s.name,
      description: s.description,
      tags: s.tags,
      assertions: s.assertions === null ? null : JSON.stringify(s.assertions),
      embedding: s.embedding,
      embedding_model: s.embeddingModel,
    })
    .returning('id');
  return row.id;
}

export interface StoredEmbedding {
  id: string;
  name: string;
  prompt: string;
  embedding: number[] | null;
  embedding_model: string | null;
}

export async function collectionEmbeddings(db: Db, collectionId: string): Promise<StoredEmbedding[]> {
  return db('scenarios').where({ collection_id: collectionId }).select('id', 'name', 'prompt', 'embedding', 'embedding_model').orderBy('created_at');
}

/** Stores a fresh embedding, unless the prompt changed meanwhile (then the newer embedding stands). */
export async function setEmbedding(db: Db, id: string, prompt: string, embedding: number[], model: string): Promise<void> {
  await db('scenarios').where({ id, prompt }).update({ embedding, embedding_model: model });
}

/**
 * The best-quality scenario of each public collection, best first (ties: more runs, then newest). Walks public
 * scenarios in that order (the scenarios_quality_rank index) a page at a time, keeping each collection's first: the
 * first `limit` collections met are those of the `limit` best bests, read without sorting every scenario.
 */
export async function bestPerCollection(db: Db, limit: number): Promise<ScenarioRow[]> {
  const picked = new Map<string, ScenarioRow>();
  const page = Math.max(100, limit * 10);
  for (let offset = 0; picked.size < limit; offset += page) {
    const rows: ScenarioRow[] = await scenariosQuery(db)
      .where('c.is_public', true)
      .orderByRaw('s.quality_score desc, s.total_runs desc, s.created_at desc, s.id desc')
      .limit(page)
      .offset(offset);
    for (const r of rows) if (!picked.has(r.collection_id) && picked.size < limit) picked.set(r.collection_id, r);
    if (rows.length < page) break;
  }
  return [...picked.values()];
}

/** Public scenarios whose last run passed, most recent first, leaving out `exclude`. */
export async function recentPasses(db: Db, limit: number, exclude: string[]): Promise<ScenarioRow[]> {
  const q = scenariosQuery(db).where('c.is_public', true).where('s.last_run_status', 'pass');
  if (exclude.length) q.whereNotIn('s.id', exclude);
  return q
    .orderBy([
      { column: 's.last_run_at', order: 'desc' },
      { column: 's.id', order: 'desc' },
    ])
    .limit(limit);
}

/** Public scenarios by quality, leaving out `exclude` (fills featured when there are few collections and passes). */
export async function bestOverall(db: Db, limit: number, exclude: string[]): Promise<ScenarioRow[]> {
  const q = scenariosQuery(db).where('c.is_public', true);
  if (exclude.length) q.whereNotIn('s.id', exclude);
  return q.orderByRaw('s.quality_score desc, s.total_runs desc, s.created_at desc, s.id desc').limit(limit);
}

/** Locks the scenario row: concurrent completions of its runs then update its statistics one after the other. */
export async function lockScenario(trx: Db, id: string): Promise<boolean> {
  return (await trx('scenarios').where({ id }).forUpdate().first('id')) !== undefined;
}

/** Quality over this many of the newest completed runs. */
export const QUALITY_WINDOW = 20;

/**
 * The statistics after a completed run, in one UPDATE (the run row is already final in this transaction):
 * totalRuns + 1, last run time and status, consecutive counts, and qualityScore = (passes + 1) / (runs + 2) over the
 * newest QUALITY_WINDOW completed runs.
 *
 * Every completed run counts, whoever ran it (SPEC.md, Scenarios): the statistics describe the same runs as the run
 * history, which lists everyone's. A run that could not be judged (`failed`) counts in neither.
 */
export async function recordRunStats(trx: Db, runId: string): Promise<void> {
  await trx.raw(
    `update scenarios s set
        total_runs = s.total_runs + 1,
        last_run_at = fin.completed_at,
        last_run_status = case when fin.success then 'pass' else 'fail' end,
        consecutive_passes = case when fin.success then s.consecutive_passes + 1 else 0 end,
        consecutive_fails = case when fin.success then 0 else s.consecutive_fails + 1 end,
        quality_score = (
          select (count(*) filter (where w.success) + 1)::float8 / (count(*) + 2)
            from (select r.success from scenario_runs r
                   where r.scenario_id = s.id and r.status = 'completed'
                   order by r.completed_at desc, r.id desc limit ?) w)
       from scenario_runs fin
      where fin.id = ? and fin.status = 'completed' and s.id = fin.scenario_id`,
    [QUALITY_WINDOW, runId],
  );
}

export interface ScenarioPatch {
  prompt?: string;
  name?: string;
  description?: string | null;
  tags?: string[];
  assertions?: Assertion[] | null;
  /** Given with a new prompt: its embedding, stored in the same statement. */
  embedding?: { vector: number[]; model: string };
}

export async function updateScenario(db: Db, id: string, p: ScenarioPatch): Promise<void> {
  await db('scenarios')
    .where({ id })
    .update({
      ...(p.prompt !== undefined ? { prompt: p.prompt } : {}),
      ...(p.name !== undefined ? { name: p.name } : {}),
      ...(p.description !== undefined ? { description: p.description } : {}),
      ...(p.tags !== undefined ? { tags: p.tags } : {}),
      ...(p.assertions !== undefined ? { assertions: p.assertions === null ? null : JSON.stringify(p.assertions) } : {}),
      ...(p.embedding ? { embedding: p.embedding.vector, embedding_model: p.embedding.model } : {}),
      updated_at: db.fn.now(),
    });
}

export async function deleteScenario(db: Db, id: string): Promise<boolean> {
  return (await db('scenarios').where({ id }).delete()) > 0;
}

/** The collection's scenario ids, oldest first (the order run-all queues them). */
export async function collectionScenarioIds(db: Db, collectionId: string): Promise<string[]> {
  const rows: { id: string }[] = await db('scenarios')
    .where({ collection_id: collectionId })
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .select('id');
  return rows.map((r) => r.id);
}
