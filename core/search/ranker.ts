/**
 * Query evaluation for the embedded engine: expands each query term (exact, prefix for the last term, typos by term
 * length), scores matching documents with BM25F (field-weighted term frequency, per-field length normalisation,
 * one saturation), keeps the best expansion per query term, and selects the top hits with a bounded heap.
 */
import type { SearchHit, SearchQuery, SearchResult } from './engine.js';
import { categoryCode, FIELD_COUNT, InvertedIndex, TF_BITS, TF_MAX } from './inverted-index.js';
import { queryJoins, queryTerms, synonymsOf } from './text.js';

/** Field weights in index order: name, description, packageName, category. */
export const FIELD_WEIGHTS = [5, 2, 1, 0.5];
const FIELD_B = [0.5, 0.75, 0.5, 0.3];
const K1 = 1.2;
const PREFIX_MIN = 2;
/** Score multipliers for inexact matches. */
const TYPO_WEIGHT = [1, 0.55, 0.35];
const MAX_EXPANSIONS = 64;
const SYNONYM_WEIGHT = 0.5;

interface Expansion {
  id: number;
  weight: number;
}

export class Ranker {
  private normVersion = -1;
  private norms = new Float64Array(0);
  private acc = new Float64Array(0);
  private best = new Float64Array(0);
  private accMark = new Uint32Array(0);
  private bestMark = new Uint32Array(0);
  private mark = 0;

  constructor(private readonly index: InvertedIndex) {}

  search(query: SearchQuery): SearchResult {
    const terms = queryTerms(query.q);
    if (terms.length === 0) return { total: 0, hits: [] };
    this.prepare();
    const ix = this.index;
    const groups = terms.map(({ term, raw, inLastWord }) => this.expand(term, raw, inLastWord));
    for (const join of queryJoins(query.q)) {
      const id = ix.dict.idOf(join);
      if (id !== undefined && ix.df[id] > 0 && !terms.some((t) => t.term === join)) groups.push([{ id, weight: 1 }]);
    }
    const hits: number[] = [];
    const queryMark = ++this.mark;
    const cat = categoryCode(query.category);
    for (const group of groups) {
      for (const s of this.scoreGroup(group, cat)) {
        if (this.accMark[s] !== queryMark) {
          this.accMark[s] = queryMark;
          this.acc[s] = this.best[s];
          hits.push(s);
        } else this.acc[s] += this.best[s];
      }
    }
    const offset = query.offset ?? 0;
    const top = this.topK(hits, offset + query.limit).slice(offset);
    return { total: hits.length, hits: top.map((s): SearchHit => ({ id: ix.ids[s], score: this.acc[s] })) };
  }

  /**
   * BM25F of one query term over the documents that pass the filters, keeping per document the best of the term's
   * expansions in `best`. Returns the slots scored.
   */
  private scoreGroup(group: Expansion[], cat: number): number[] {
    const ix = this.index;
    const termMark = ++this.mark;
    const seen: number[] = [];
    for (const { id, weight } of group) {
      const slots = ix.postSlots[id];
      const tfs = ix.postTfs[id];
      const idf = Math.log(1 + (ix.liveCount - ix.df[id] + 0.5) / (ix.df[id] + 0.5)) * weight;
      for (let p = 0; p < slots.length; p++) {
        const s = slots[p];
        if (!ix.alive[s] || ix.broken[s] || (cat !== 0 && ix.categoryCode[s] !== cat)) continue;
        let tf = 0;
        const packed = tfs[p];
        const base = s * FIELD_COUNT;
        for (let f = 0; f < FIELD_COUNT; f++) tf += ((packed >>> (f * TF_BITS)) & TF_MAX) * this.norms[base + f];
        const score = (idf * tf * (K1 + 1)) / (tf + K1);
        if (this.bestMark[s] !== termMark) {
          this.bestMark[s] = termMark;
          this.best[s] = score;
          seen.push(s);
        } else if (score > this.best[s]) this.best[s] = score;
      }
    }
    return seen;
  }

  /** Index terms a query term stands for, each with its weight: exact 1, typos and prefixes less. */
  private expand(term: string, raw: string, isLast: boolean): Expansion[] {
    const dict = this.index.dict;
    const byId = new Map<number, number>();
    const offer = (id: number, weight: number) => {
      if (this.index.df[id] > 0 && weight > (byId.get(id) ?? 0)) byId.set(id, weight);
    };
    const exact = dict.idOf(term);
    if (exact !== undefined) offer(exact, 1);
    for (const synonym of synonymsOf(term)) {
      const id = dict.idOf(synonym);
      if (id !== undefined) offer(id, SYNONYM_WEIGHT);
    }
    if (raw !== term && dict.idOf(raw) !== undefined) offer(dict.idOf(raw)!, 1);
    for (const word of raw === term ? [term] : [term, raw]) {
      const maxTypos = word.length >= 8 ? 2 : word.length >= 4 ? 1 : 0;
      if (maxTypos > 0) dict.forEachWithin(word, maxTypos, (id, d) => offer(id, TYPO_WEIGHT[d]));
    }
    if (isLast && raw.length >= PREFIX_MIN) {
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
      this.best = new Float64Array(n);
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
        this.norms[s * FIELD_COUNT + f] = FIELD_WEIGHTS[f] / (1 - FIELD_B[f] + (FIELD_B[f] * len) / avg[f]);
      }
    }
    this.normVersion = ix.version;
  }

  /** The k best slots: score desc, then qualityScore desc, then id — via a bounded min-heap, O(n log k). */
  private topK(slots: number[], k: number): number[] {
    const ix = this.index;
    const better = (a: number, b: number) =>
      this.acc[a] !== this.acc[b]
        ? this.acc[a] > this.acc[b]
        : ix.quality[a] !== ix.quality[b]
          ? ix.quality[a] > ix.quality[b]
          : ix.ids[a] < ix.ids[b];
    const heap: number[] = [];
    const sift = (i: number) => {
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let w = i;
        if (l < heap.length && better(heap[w], heap[l])) w = l;
        if (r < heap.length && better(heap[w], heap[r])) w = r;
        if (w === i) return;
        [heap[i], heap[w]] = [heap[w], heap[i]];
        i = w;
      }
    };
    for (const s of slots) {
      if (heap.length < k) {
        heap.push(s);
        for (let i = heap.length - 1; i > 0; ) {
          const parent = (i - 1) >> 1;
          if (!better(heap[parent], heap[i])) break;
          [heap[i], heap[parent]] = [heap[parent], heap[i]];
          i = parent;
        }
      } else if (k > 0 && better(s, heap[0])) {
        heap[0] = s;
        sift(0);
      }
    }
    return heap.sort((a, b) => (better(a, b) ? -1 : 1));
  }
}
