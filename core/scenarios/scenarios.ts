/**
 * Scenario rules: who may see and change one (its collection's visibility and owner), default names, and prompt
 * embeddings — computed on create and whenever the prompt changes, stored with the model that made them, and
 * recomputed lazily when the configured embedding model is a different one.
 */
import type { Knex } from 'knex';
import { errors } from '../infra/errors.js';
import { loadOwnedCollection } from '../collections/collections.js';
import { mostSimilar, type SimilarItem, type SimilarityReport } from '../llm/similarity.js';
import type { Assertion, LlmProvider } from '../llm/provider.js';
import { findCollection, isUuid } from '../repos/collections.js';
import {
  bestOverall,
  bestPerCollection,
  collectionEmbeddings,
  findScenario,
  insertScenario,
  listScenarios,
  recentPasses,
  setEmbedding,
  updateScenario,
  type ScenarioFilter,
  type ScenarioRow,
} from '../repos/scenarios.js';
import type { Caller } from '../types.js';
import { cutAtWord } from '../text/text-cut.js';

export interface ScenarioDeps {
  db: Knex;
  llm: LlmProvider;
}

/** At most this many characters of the prompt make a default name (cut at a word, with an ellipsis). */
const NAME_MAX = 80;

export function defaultName(prompt: string): string {
  return cutAtWord(prompt.replace(/\s+/g, ' ').trim(), NAME_MAX, /[\s,;:.]+$/);
}

export interface ScenarioInput {
  prompt: string;
  name?: string;
  description?: string | null;
  tags?: string[];
  assertions?: Assertion[] | null;
}

export async function embedOne(llm: LlmProvider, text: string): Promise<number[]> {
  const [vector] = await llm.embed([text]);
  return vector;
}

/** Creates a scenario in a collection the caller owns (404 if not visible, 403 if not theirs); returns its id. */
export async function createScenario(deps: ScenarioDeps, caller: Caller, collectionRef: string, input: ScenarioInput): Promise<string> {
  const c = await loadOwnedCollection(deps.db, collectionRef, caller);
  const embedding = await embedOne(deps.llm, input.prompt);
  return insertScenario(deps.db, {
    collectionId: c.id,
    createdBy: caller.userId,
    prompt: input.prompt,
    name: input.name ?? defaultName(input.prompt),
    description: input.description ?? null,
    tags: input.tags ?? [],
    assertions: input.assertions ?? null,
    embedding,
    embeddingModel: deps.llm.embeddingModel,
  });
}

/** Changes a scenario; a new prompt is embedded again in the same UPDATE. */
export async function changeScenario(deps: ScenarioDeps, s: ScenarioRow, patch: ScenarioInput | Partial<ScenarioInput>): Promise<void> {
  const reembed = patch.prompt !== undefined && patch.prompt !== s.prompt;
  const embedding = reembed ? { vector: await embedOne(deps.llm, patch.prompt!), model: deps.llm.embeddingModel } : undefined;
  await updateScenario(deps.db, s.id, { ...patch, embedding });
}

/** The scenario if its collection is visible to the caller (public, or theirs), else 404. */
export async function loadVisibleScenario(db: Knex, id: string, caller: Caller | undefined): Promise<ScenarioRow> {
  const s = isUuid(id) ? await findScenario(db, id) : undefined;
  if (!s || (!s.collection_is_public && caller?.userId !== s.collection_owner_id)) throw errors.notFound('Scenario', id);
  return s;
}

/** As loadVisibleScenario, and the caller must own its collection (403 otherwise). */
export async function loadOwnedScenario(db: Knex, id: string, caller: Caller): Promise<ScenarioRow> {
  const s = await loadVisibleScenario(db, id, caller);
  if (s.collection_owner_id !== caller.userId) throw errors.forbidden('Only the owner of the collection may change its scenarios');
  return s;
}

export interface EmbeddedScenario {
  id: string;
  name: string;
  prompt: string;
  vec: number[];
}

/**
 * The collection's scenarios with embeddings of the configured model: stored ones are used as they are; missing or
 * other-model ones are embedded now (one call) and stored, so the next check is cheap again.
 */
export async function collectionVectors(deps: ScenarioDeps, collectionId: string): Promise<EmbeddedScenario[]> {
  const rows = await collectionEmbeddings(deps.db, collectionId);
  const stale = rows.filter((r) => !r.embedding || r.embedding_model !== deps.llm.embeddingModel);
  if (stale.length) {
    const vectors = await deps.llm.embed(stale.map((r) => r.prompt));
    await Promise.all(stale.map((r, i) => setEmbedding(deps.db, r.id, r.prompt, vectors[i], deps.llm.embeddingModel)));
    stale.forEach((r, i) => (r.embedding = vectors[i]));
  }
  return rows.map((r) => ({ id: r.id, name: r.name, prompt: r.prompt, vec: r.embedding! }));
}

export type CheckSimilarityReport = Omit<SimilarityReport, 'similar'> & { similar: (SimilarItem & { prompt: string })[] };

/** `scenarios.checkSimilarity`: the prompt against the collection's scenarios; each `similar` item carries its prompt. */
export async function checkSimilarity(deps: ScenarioDeps, collectionId: string, prompt: string): Promise<CheckSimilarityReport> {
  const [vec, existing] = await Promise.all([embedOne(deps.llm, prompt), collectionVectors(deps, collectionId)]);
  const report = mostSimilar(vec, existing);
  const promptOf = new Map(existing.map((e) => [e.id, e.prompt]));
  return { ...report, similar: report.similar.map((s) => ({ id: s.id, name: s.name, prompt: promptOf.get(s.id) ?? '', similarity: s.similarity })) };
}

/** Scenarios of public collections; `collectionRef` is a collection's id or uid (an unknown one matches nothing). */
export async function listPublicScenarios(
  db: Knex,
  f: Omit<ScenarioFilter, 'publicOnly' | 'collectionId'> & { collectionRef?: string },
): Promise<ScenarioRow[]> {
  const { collectionRef, ...filter } = f;
  let collectionId = collectionRef;
  if (collectionRef && !isUuid(collectionRef)) collectionId = (await findCollection(db, collectionRef))?.id ?? '00000000-0000-0000-0000-000000000000';
  return listScenarios(db, { ...filter, collectionId, publicOnly: true });
}

export type FeaturedReason = 'bestInCollection' | 'recentPass' | 'quality';

/** Up to `limit`: the best of each public collection for the first half, recent passes next, then the best overall. */
export async function featuredScenarios(db: Knex, limit: number): Promise<{ scenario: ScenarioRow; featuredBecause: FeaturedReason }[]> {
  const picked: { scenario: ScenarioRow; featuredBecause: FeaturedReason }[] = [];
  const ids = () => picked.map((p) => p.scenario.id);
  for (const scenario of await bestPerCollection(db, Math.ceil(limit / 2))) picked.push({ scenario, featuredBecause: 'bestInCollection' });
  for (const scenario of await recentPasses(db, limit - picked.length, ids())) picked.push({ scenario, featuredBecause: 'recentPass' });
  if (picked.length < limit) for (const scenario of await bestOverall(db, limit - picked.length, ids())) picked.push({ scenario, featuredBecause: 'quality' });
  return picked;
}
