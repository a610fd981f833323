/**
 * Cosine similarity over embeddings, and the "most similar existing scenario" answer of `scenarios.checkSimilarity` and of
 * generation's duplicate check (`scenarios.generate`). Works with any provider's vectors.
 */

/** Cosine similarity; 0 when either vector is all zeros or the lengths differ. */
export function cosine(a: number[], b: number[]): number {
  if (a.length !== b.length || a.length === 0) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

export interface SimilarityCandidate {
  id: string;
  name: string;
  vec: number[];
}

export interface SimilarItem {
  id: string;
  name: string;
  similarity: number;
}

export interface SimilarityReport {
  maxSimilarity: number;
  mostSimilar: SimilarItem | null;
  /** Candidates scoring above this threshold, most similar first. */
  similar: SimilarItem[];
}

/** Only candidates above this count as `similar` (`scenarios.checkSimilarity`). */
export const SIMILAR_ABOVE = 0.3;

const round = (x: number) => Math.round(x * 1e4) / 1e4;

export function mostSimilar(vec: number[], candidates: SimilarityCandidate[]): SimilarityReport {
  const scored = candidates
    .map((c) => ({ id: c.id, name: c.name, similarity: round(cosine(vec, c.vec)) }))
    .sort((x, y) => y.similarity - x.similarity || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
  const best = scored[0] ?? null;
  return {
    maxSimilarity: best ? Math.max(0, best.similarity) : 0,
    mostSimilar: best,
    similar: scored.filter((s) => s.similarity > SIMILAR_ABOVE),
  };
}
