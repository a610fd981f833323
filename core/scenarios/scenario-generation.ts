/**
 * Scenario generation (`scenarios.generate`): the provider proposes scenarios for a collection's tools; unless the check is skipped,
 * one whose prompt is more than TOO_SIMILAR to an existing scenario (or to one accepted earlier in the same request)
 * is regenerated — up to MAX_REGENERATIONS more rounds — and dropped if it is still too similar. Accepted ones are
 * stored with their embeddings in one transaction.
 */
import { agentToolSet } from '../agents/agent-tools.js';
import type { CollectionRow } from '../repos/collections.js';
import type { ToolRow } from '../repos/tools.js';
import { insertScenario } from '../repos/scenarios.js';
import { mostSimilar, type SimilarItem } from '../llm/similarity.js';
import type { GeneratedScenario } from '../llm/provider.js';
import { collectionVectors, defaultName, type EmbeddedScenario, type ScenarioDeps } from './scenarios.js';

export const TOO_SIMILAR = 0.7;
export const MAX_REGENERATIONS = 3;

export interface GenerateOptions {
  count: number;
  skipSimilarityCheck: boolean;
}

export interface GeneratedResult {
  id: string;
  similarity: { maxSimilarity: number; mostSimilar: SimilarItem | null };
}

export interface GenerationReport {
  created: GeneratedResult[];
  /** Proposals refused as too similar (each one was regenerated, or dropped after the last round). */
  rejected: number;
  /** Slots left empty: still too similar after every regeneration, or the provider ran out of ideas. */
  dropped: number;
  rounds: number;
}

const clean = (g: GeneratedScenario): GeneratedScenario | undefined => {
  const prompt = g.prompt?.trim() ?? '';
  if (prompt.length < 10 || prompt.length > 4000) return undefined;
  const tags = [...new Set((g.tags ?? []).map((t) => String(t).trim().slice(0, 50)).filter(Boolean))].slice(0, 20);
  const name = (g.name ?? '').trim().slice(0, 200) || defaultName(prompt);
  return { prompt, name, description: (g.description ?? '').trim().slice(0, 2000), tags };
};

export async function generateForCollection(
  deps: ScenarioDeps,
  userId: string,
  c: CollectionRow,
  tools: ToolRow[],
  opts: GenerateOptions,
): Promise<GenerationReport> {
  const existing = await collectionVectors(deps, c.id);
  const set = agentToolSet(tools);
  const specs = set.specs.map((s) => {
    const example = set.byName.get(s.name)!.health_example;
    return { ...s, healthExample: example ? { params: example.params as Record<string, unknown> } : null };
  });
  const accepted: (EmbeddedScenario & { gen: GeneratedScenario; similarity: GeneratedResult['similarity'] })[] = [];
  const avoid = existing.map((e) => e.prompt);
  let rejected = 0;
  let rounds = 0;
  for (let attempt = 0; attempt <= MAX_REGENERATIONS && accepted.length < opts.count; attempt++) {
    const need = opts.count - accepted.length;
    const proposals = (
      await deps.llm.generateScenarios({ collection: { name: c.name, description: c.description }, tools: specs, count: need, avoid: [...avoid], attempt })
    )
      .map(clean)
      .filter((g): g is GeneratedScenario => g !== undefined)
      .slice(0, need);
    rounds++;
    if (proposals.length === 0) break;
    const vectors = await deps.llm.embed(proposals.map((p) => p.prompt));
    proposals.forEach((gen, i) => {
      avoid.push(gen.prompt);
      const report = mostSimilar(vectors[i], [...existing, ...accepted]);
      if (!opts.skipSimilarityCheck && report.maxSimilarity > TOO_SIMILAR) {
        rejected++;
        return;
      }
      accepted.push({
        id: `pending-${accepted.length}`,
        name: gen.name,
        prompt: gen.prompt,
        vec: vectors[i],
        gen,
        similarity: { maxSimilarity: report.maxSimilarity, mostSimilar: report.mostSimilar },
      });
    });
  }
  const ids = await deps.db.transaction(async (trx) => {
    const out: string[] = [];
    for (const a of accepted) {
      out.push(
        await insertScenario(trx, {
          collectionId: c.id,
          createdBy: userId,
          prompt: a.gen.prompt,
          name: a.gen.name,
          description: a.gen.description || null,
          tags: a.gen.tags,
          assertions: null,
          embedding: a.vec,
          embeddingModel: deps.llm.embeddingModel,
        }),
      );
    }
    return out;
  });
  // Proposals compared with one accepted earlier in this request name it by its new id.
  const realId = new Map(accepted.map((a, i) => [a.id, ids[i]]));
  const created = accepted.map((a, i) => {
    const m = a.similarity.mostSimilar;
    return { id: ids[i], similarity: { ...a.similarity, mostSimilar: m ? { ...m, id: realId.get(m.id) ?? m.id } : null } };
  });
  return { created, rejected, dropped: opts.count - created.length, rounds };
}
