/**
 * Query evaluation for the embedded engine: expands each query term (exact; synonyms; typos only for a term that
 * matches nothing as typed; prefixes for a last word still being typed), scores matching documents with BM25F
 * (field-weighted term frequency, per-field length normalisation, one saturation), keeps the best expansion per
 * query term, adds glued-name matches, rewards documents that cover more of the query, and selects the top hits
 * with a bounded heap.
 */
import type { SearchHit, SearchQuery, SearchResult } from './engine.js';
import { categoryCode, FIELD_COUNT, type InvertedIndex, TF_BITS, TF_MAX } from './inverted-index.js';
import { pairTerms, parseQuery, searchSynonymsOf } from './analyzer.js';
import { TopK } from './top-k.js';
import { USAGE_MAX_TERMS, usageKeys, type UsageSource, type UsageTable } from './usage.js';

export interface RankingParams {
  /** Field weights in index order: name, description, parameters, packageName, category, word pairs. */
  fieldWeights: number[];
  /** BM25 length normalisation per field (0 = none, 1 = full). */
  fieldB: number[];
  /** BM25 term-frequency saturation. */
  k1: number;
  synonymWeight: number;
  /** Score multiplier of a typo expansion at edit distance 1 and 2. */
  typoWeights: [number, number];
  /** Weight of a glued run of n query words matching a term, per word beyond the first. */
  joinWeight: number;
  /** Weight of each adjacent query word pair found next to each other in a name or description. 0 turns it off. */
  pairWeight: number;
  /** Final score × (share of the query's idf mass the document matches) ^ coverage. */
  coverage: number;
  /**
   * Weight of a shared-stem-prefix match (query stem and index term agree on all but the last two letters, at least
   * 5: "financi" ~ "financ"), catching derivations the stemmer keeps apart. 0 turns it off.
   */
  stemPrefixWeight: number;
  /** At most this many distinct query terms are scored (the rarest ones). */
  maxTerms: number;
  /** Words after this many in a long query weigh less: sqrt(positionFrom / (word + 1)). */
  positionFrom: number;
  /**
   * Semantic re-weighting of the lexical hits: final = score / best score + semanticWeight × cosine of the query's
   * and the document's word vectors (mean-centred). 0 turns it off (and the vectors are not loaded).
   */
  semanticWeight: number;
  /** Lexical hits the re-weighting scores (default SEMANTIC_CANDIDATES). */
  semanticCandidates?: number;
  /**
   * Learning from use (usage.ts): after the other steps, scores are relative to the best hit and each tool gains at
   * most usageWeight for the past runs that followed queries with the same terms (Ranker.applyUsage); a tool callers
   * ran after such queries is found even when its words do not match. 0 turns it off.
   */
  usageWeight: number;
}

/** Tuned on the MetaTool tuning split (`npx tsx bench/relevance.ts --tune`, see docs/search.md). */
export const DEFAULT_RANKING: RankingParams = {
  fieldWeights: [2, 1, 1, 1, 0.5, 1],
  fieldB: [0.75, 0.25, 0.75, 0.5, 0.3, 0.25],
  pairWeight: 0.25,
  k1: 2,
  synonymWeight: 0.7,
  typoWeights: [0.55, 0.35],
  joinWeight: 1,
  coverage: 0,
  stemPrefixWeight: 0.5,
  maxTerms: 32,
  positionFrom: 12,
  semanticWeight: 1,
  usageWeight: 2,
};

const PREFIX_MIN = 2;
const MAX_EXPANSIONS = 64;
/** Typo lookups per query (each scans the terms of nearby length). */
const MAX_TYPO_TERMS = 8;
/** Adjacent word pairs looked up per query. */
const MAX_PAIRS = 32;
/**
 * Lexical hits the semantic re-weighting scores (at least the page asked for): a query of common words matches
 * thousands of tools, and a tool far down by its words does not reach the first results by its vector (`npx tsx
 * bench/search.ts` reports how often the first ten differ from re-weighting every hit).
 */
export const SEMANTIC_CANDIDATES = 500;

interface Expansion {
  id: number;
  weight: number;
}

interface Group {
  expansions: Expansion[];
  /** Query-side weight: position in a long query. */
  weight: number;
  /** Whether it counts towards coverage (glued runs do not: their words already do). */
  counts: boolean;
}

export class Ranker {
  private normVersion = -1;
  private norms = new Float64Array(0);
  private acc = new Float64Array(0);
  /** acc before the semantic re-weighting. */
  private lexical = new Float64Array(0);
  private best = new Float64Array(0);
  private cover = new Float64Array(0);
  private accMark = new Uint32Array(0);
  private bestMark = new Uint32Array(0);
  private mark = 0;
  private vectorVersion = -1;
  private mean = new Float32Array(0);
  private meanSquare = 0;
  private docMean = new Float64Array(0);

  constructor(
    private readonly index: InvertedIndex,
    private readonly params: RankingParams = DEFAULT_RANKING,
    private readonly usage?: UsageSource,
  ) {}

  search(query: SearchQuery): SearchResult {
    const parsed = parseQuery(query.q);
    if (parsed.terms.length === 0) return { total: 0, hits: [] };
    this.prepare();
    const ix = this.index;
    const groups = this.groups(parsed);
    const hits: number[] = [];
    const queryMark = ++this.mark;
    const cat = categoryCode(query.category);
    let mass = 0;
    for (const group of groups) {
      const seen = this.scoreGroup(group.expansions, cat);
      if (seen.length === 0) continue;
      const groupMass = group.counts ? group.weight * this.idf(group.expansions[0].id) : 0;
      mass += groupMass;
      for (const s of seen) {
        const score = this.best[s] * group.weight;
        if (this.accMark[s] !== queryMark) {
          this.accMark[s] = queryMark;
          this.acc[s] = score;
          this.cover[s] = groupMass;
          hits.push(s);
        } else {
          this.acc[s] += score;
          this.cover[s] += groupMass;
        }
      }
    }
    const coverage = this.params.coverage;
    if (coverage > 0 && mass > 0) for (const s of hits) this.acc[s] *= (this.cover[s] / mass) ** coverage;
    for (const s of hits) this.lexical[s] = this.acc[s];
    const offset = query.offset ?? 0;
    const candidates = Math.max(this.params.semanticCandidates ?? SEMANTIC_CANDIDATES, offset + query.limit);
    const relative = this.params.semanticWeight > 0 && this.reweigh(hits, parsed.text, candidates);
    const usage = this.params.usageWeight > 0 ? this.usage?.current() : undefined;
    let boosts: Map<number, number> | undefined;
    if (usage && usage.pairs > 0) {
      if (!relative) this.relativise(hits);
      boosts = this.applyUsage(hits, parsed.terms, usage, queryMark, cat);
    }
    const top = this.topK(hits, offset + query.limit).slice(offset);
    return {
      total: hits.length,
      hits: top.map((s): SearchHit => {
        const hit: SearchHit = { id: ix.ids[s], score: this.acc[s], lexical: this.lexical[s] };
        const boost = boosts?.get(s);
        if (boost !== undefined) hit.usage = boost;
        return hit;
      }),
    };
  }

  /**
   * Lexical scores relative to the best one, plus semanticWeight × the cosine between the query's and each hit's
   * word vectors, both taken relative to the mean document vector: cos(q − m, d − m), from q·d, q·m and d·m.
   */
  private reweigh(hits: number[], text: string, candidates: number): boolean {
    const ix = this.index;
    const q = ix.wordVectors?.vectorOf(text);
    if (!q || ix.vectorCount === 0) return false;
    this.prepareVectors();
    // Only the best `candidates` by their words are re-weighted; the rest keep their order below every one of them
    // (score / best − weight: a candidate's final score is at least its own, higher, score / best − weight).
    const reweighed = hits.length > candidates ? this.topK(hits, candidates) : hits;
    const dims = q.length;
    const mean = this.mean;
    const mm = this.meanSquare;
    let qm = 0;
    for (let k = 0; k < dims; k++) qm += q[k] * mean[k];
    const qq = 1 - 2 * qm + mm;
    let top = 0;
    for (const s of hits) if (this.acc[s] > top) top = this.acc[s];
    if (top <= 0 || qq <= 1e-9) return false;
    const w = this.params.semanticWeight;
    if (reweighed !== hits) {
      for (const s of hits) this.acc[s] = this.acc[s] / top - w;
      for (const s of reweighed) this.acc[s] = this.lexical[s];
    }
    const vectors = ix.vectors;
    const docMean = this.docMean;
    for (const s of reweighed) {
      let cos = 0;
      if (ix.hasVector[s]) {
        let qd = 0;
        for (let k = 0, base = s * dims; k < dims; k++) qd += q[k] * vectors[base + k];
        const dm = docMean[s];
        const dd = 1 - 2 * dm + mm;
        if (dd > 1e-9) cos = (qd - qm - dm + mm) / Math.sqrt(qq * dd);
      }
      this.acc[s] = this.acc[s] / top + w * cos;
    }
    return true;
  }

  /** Scores divided by the best one (what reweigh does when the vectors are off), so that usage adds on one scale. */
  private relativise(hits: number[]): void {
    let top = 0;
    for (const s of hits) if (this.acc[s] > top) top = this.acc[s];
    if (top > 0) for (const s of hits) this.acc[s] /= top;
  }

  /**
   * Learning from use: a tool's support is Σ over the query's usage keys (usage.ts: its first USAGE_MAX_TERMS terms
   * and each pair of neighbouring ones) of its share of that key's past runs (× the key's confidence); each tool gains
   * usageWeight × support / the best support × the share of the query's terms that have any past run, so at most
   * usageWeight. A pair adds support but not to that share: a phrase nobody searched before does not weaken its words. A tool the words did not reach but that callers
   * ran after these words joins the hits with that score alone (BROKEN and category filters apply).
   */
  private applyUsage(hits: number[], terms: { term: string }[], usage: UsageTable, queryMark: number, cat: number): Map<number, number> | undefined {
    const ix = this.index;
    const counted = usageKeys(terms.map((t) => t.term));
    const boost = new Map<number, number>();
    let known = 0;
    const singles = Math.min(terms.length, USAGE_MAX_TERMS);
    for (let i = 0; i < counted.length; i++) {
      const u = usage.terms.get(counted[i]!);
      if (!u) continue;
      if (i < singles) known++;
      for (const [id, share] of u.tools) {
        const s = ix.slotById.get(id);
        if (s === undefined || !ix.alive[s] || ix.broken[s] || (cat !== 0 && ix.categoryCode[s] !== cat)) continue;
        boost.set(s, (boost.get(s) ?? 0) + share);
      }
    }
    let max = 0;
    for (const b of boost.values()) if (b > max) max = b;
    if (max <= 0) return undefined;
    // Relative to the best-supported tool, times the share of the query's terms that any past run supports.
    const w = (this.params.usageWeight * known) / singles / max;
    for (const [s, b] of boost) {
      if (this.accMark[s] !== queryMark) {
        this.accMark[s] = queryMark;
        this.acc[s] = 0;
        this.lexical[s] = 0;
        hits.push(s);
      }
      this.acc[s] += w * b;
      boost.set(s, w * b);
    }
    return boost;
  }

  /** The mean document vector, its square and each document's d·mean: query-independent, so computed once per index version. */
  private prepareVectors(): void {
    const ix = this.index;
    if (this.vectorVersion === ix.version) return;
    const dims = ix.vectorSum.length;
    this.mean = new Float32Array(dims);
    let mm = 0;
    for (let k = 0; k < dims; k++) {
      this.mean[k] = ix.vectorSum[k] / ix.vectorCount;
      mm += this.mean[k] * this.mean[k];
    }
    this.meanSquare = mm;
    if (this.docMean.length < ix.slotCount) this.docMean = new Float64Array(ix.alive.length);
    for (let s = 0; s < ix.slotCount; s++) {
      let dm = 0;
      if (ix.hasVector[s]) for (let k = 0, base = s * dims; k < dims; k++) dm += ix.vectors[base + k] * this.mean[k];
      this.docMean[s] = dm;
    }
    this.vectorVersion = ix.version;
  }

  private idf(id: number): number {
    const ix = this.index;
    return Math.log(1 + (ix.liveCount - ix.df[id] + 0.5) / (ix.df[id] + 0.5));
  }

  /** The scored groups of a query: one per kept query term (its expansions), plus one for glued word runs. */
  private groups(parsed: ReturnType<typeof parseQuery>): Group[] {
    const ix = this.index;
    const p = this.params;
    const exactOf = (term: string, raw: string) => {
      const ids: number[] = [];
      for (const t of term === raw ? [term] : [term, raw]) {
        const id = ix.dict.idOf(t);
        if (id !== undefined && ix.df[id] > 0) ids.push(id);
      }
      return ids;
    };
    let terms = parsed.terms.map((t) => ({ ...t, exact: exactOf(t.term, t.raw) }));
    if (terms.length > p.maxTerms) {
      // Keep the rarest terms; a term matching nothing as typed ranks as a mid-frequency one.
      const rarity = (t: (typeof terms)[number]) => (t.exact.length ? this.idf(t.exact[0]) : this.idf(-1) / 2);
      terms = [...terms].sort((a, b) => rarity(b) - rarity(a) || a.word - b.word).slice(0, p.maxTerms);
    }
    let typoBudget = MAX_TYPO_TERMS;
    const groups: Group[] = [];
    for (const t of terms) {
      const allowTypos = t.exact.length === 0 && typoBudget > 0;
      if (allowTypos) typoBudget--;
      const expansions = this.expand(t.term, t.raw, t.exact, t.open, allowTypos);
      if (expansions.length === 0) continue;
      const position = t.word < p.positionFrom ? 1 : Math.sqrt(p.positionFrom / (t.word + 1));
      // Repeats count once: in a long agent query they are mostly boilerplate of the instruction part.
      groups.push({ expansions, weight: position, counts: true });
    }
    const joins: Expansion[] = [];
    const typed = new Set(parsed.terms.flatMap((t) => [t.term, t.raw]));
    for (const join of parsed.joins) {
      const id = ix.dict.idOf(join.term);
      if (id !== undefined && ix.df[id] > 0 && !typed.has(join.term)) {
        joins.push({ id, weight: p.joinWeight * (join.words - 1) });
      }
    }
    if (joins.length) groups.push({ expansions: joins, weight: 1, counts: false });
    if (p.pairWeight > 0) {
      for (const pair of new Set(pairTerms(parsed.text, MAX_PAIRS))) {
        const id = ix.dict.idOf(pair);
        if (id !== undefined && ix.df[id] > 0) groups.push({ expansions: [{ id, weight: 1 }], weight: p.pairWeight, counts: false });
      }
    }
    return groups;
  }

  /**
   * BM25F of one query term over the documents that pass the filters, keeping per document the best of the term's
   * expansions in `best`. Returns the slots scored.
   */
  private scoreGroup(group: Expansion[], cat: number): number[] {
    const ix = this.index;
    const k1 = this.params.k1;
    const termMark = ++this.mark;
    const seen: number[] = [];
    for (const { id, weight } of group) {
      const slots = ix.postSlots[id];
      const tfs = ix.postTfs[id];
      const idf = this.idf(id) * weight;
      for (let p = 0; p < slots.length; p++) {
        const s = slots[p];
        if (!ix.alive[s] || ix.broken[s] || (cat !== 0 && ix.categoryCode[s] !== cat)) continue;
        let tf = 0;
        const packed = tfs[p];
        const base = s * FIELD_COUNT;
        for (let f = 0; f < FIELD_COUNT; f++) tf += ((packed >>> (f * TF_BITS)) & TF_MAX) * this.norms[base + f];
        const score = (idf * tf * (k1 + 1)) / (tf + k1);
        if (this.bestMark[s] !== termMark) {
          this.bestMark[s] = termMark;
          this.best[s] = score;
          seen.push(s);
        } else if (score > this.best[s]) this.best[s] = score;
      }
    }
    return seen;
  }

  /**
   * Index terms a query term stands for, each with its weight: exact 1, synonyms and prefixes less, typos (only
   * for a term that matches nothing as typed) less still.
   */
  private expand(term: string, raw: string, exact: number[], open: boolean, typos: boolean): Expansion[] {
    const dict = this.index.dict;
    const byId = new Map<number, number>();
    const offer = (id: number, weight: number) => {
      if (this.index.df[id] > 0 && weight > (byId.get(id) ?? 0) && !dict.terms[id].includes(' ')) byId.set(id, weight);
    };
    for (const id of exact) offer(id, 1);
    for (const synonym of searchSynonymsOf(term)) {
      const id = dict.idOf(synonym);
      if (id !== undefined) offer(id, this.params.synonymWeight);
    }
    if (typos) {
      for (const word of raw === term ? [term] : [term, raw]) {
        const maxTypos = word.length >= 8 ? 2 : word.length >= 4 ? 1 : 0;
        if (maxTypos > 0) dict.forEachWithin(word, maxTypos, (id, d) => offer(id, d === 0 ? 1 : this.params.typoWeights[d - 1]));
      }
    }
    const spw = this.params.stemPrefixWeight;
    if (spw > 0 && term.length >= 6 && !/\d/.test(term)) {
      const head = term.slice(0, Math.max(5, term.length - 2));
      let n = 0;
      dict.forEachWithPrefix(head, (id, t) => {
        if (n < MAX_EXPANSIONS && t.length <= term.length + 3) {
          n++;
          offer(id, spw);
        }
      });
    }
    if (open && raw.length >= PREFIX_MIN) {
      const prefixes: Expansion[] = [];
      dict.forEachWithPrefix(raw, (id, t) => {
        if (t.length > raw.length) prefixes.push({ id, weight: 0.4 + 0.4 * (raw.length / t.length) });
      });
      prefixes.sort((a, b) => b.weight - a.weight || this.index.df[b.id] - this.index.df[a.id]);
      for (const { id, weight } of prefixes.slice(0, MAX_EXPANSIONS)) offer(id, weight);
    }
    return [...byId].map(([id, weight]) => ({ id, weight }));
  }

  /** Per-slot, per-field weight / length normalisation, recomputed only after the index changed. */
  private prepare(): void {
    const ix = this.index;
    if (this.acc.length < ix.slotCount) {
      const n = Math.max(ix.slotCount, 1024) * 2;
      this.acc = new Float64Array(n);
      this.lexical = new Float64Array(n);
      this.best = new Float64Array(n);
      this.cover = new Float64Array(n);
      this.accMark = new Uint32Array(n);
      this.bestMark = new Uint32Array(n);
      this.mark = 0;
    }
    if (this.mark > 0xfffffff0) {
      this.accMark.fill(0);
      this.bestMark.fill(0);
      this.mark = 0;
    }
    if (this.normVersion === ix.version) return;
    if (this.norms.length < ix.slotCount * FIELD_COUNT) this.norms = new Float64Array(ix.alive.length * FIELD_COUNT);
    const avg = Array.from(ix.fieldLenSum, (sum) => Math.max(sum / Math.max(ix.liveCount, 1), 1));
    for (let s = 0; s < ix.slotCount; s++) {
      for (let f = 0; f < FIELD_COUNT; f++) {
        const len = ix.fieldLen[s * FIELD_COUNT + f];
        const { fieldWeights: w, fieldB: b } = this.params;
        this.norms[s * FIELD_COUNT + f] = w[f] / (1 - b[f] + (b[f] * len) / avg[f]);
      }
    }
    this.normVersion = ix.version;
  }

  /** The k best slots: score desc, then qualityScore desc, then id (TopK, O(n log k)). */
  private topK(slots: number[], k: number): number[] {
    const ix = this.index;
    const better = (a: number, b: number) =>
      this.acc[a] !== this.acc[b] ? this.acc[a] > this.acc[b] : ix.quality[a] !== ix.quality[b] ? ix.quality[a] > ix.quality[b] : ix.ids[a] < ix.ids[b];
    const best = new TopK<number>(k, (a, b) => (a === b ? 0 : better(a, b) ? -1 : 1));
    for (const s of slots) best.offer(s);
    return best.sorted();
  }
}
