/**
 * The embedded engine's storage: a compact, incrementally updated inverted index. Each document lives in a numbered
 * slot; each term has a posting list of (slot, packed per-field term frequencies). Removing a document only marks its
 * slot dead and lowers document frequencies; dead postings are dropped by an amortised compaction once they pile up,
 * so upserts and removals cost O(terms of the document), never a rebuild.
 */
import type { SearchDocument } from './engine.js';
import { CATEGORIES } from '../types.js';
import { nameTerms, pairTerms, textTerms } from './analyzer.js';
import { TermDictionary } from './term-dictionary.js';
import type { WordVectors } from './word-vectors.js';

/**
 * Indexed fields: name, description, parameters, packageName, category, and the adjacent word pairs of name and
 * description. A posting packs one 5-bit term frequency per field.
 */
export const FIELD_COUNT = 6;
export const TF_BITS = 5;
export const TF_MAX = (1 << TF_BITS) - 1;

function fieldTerms(doc: SearchDocument): string[][] {
  return [
    nameTerms(doc.name),
    textTerms(doc.description),
    textTerms(doc.parameters ?? ''),
    nameTerms(doc.packageName),
    nameTerms(doc.category),
    pairTerms(doc.description, Infinity, pairTerms(doc.name)),
  ];
}

export class InvertedIndex {
  readonly dict = new TermDictionary();
  /** Per term id: posting slots, packed field frequencies, live document frequency. */
  postSlots: number[][] = [];
  postTfs: number[][] = [];
  df: number[] = [];

  /** Per slot. `alive` is 0 for removed documents, whose postings wait for compaction. */
  ids: string[] = [];
  alive = new Uint8Array(1024);
  broken = new Uint8Array(1024);
  categoryCode = new Uint8Array(1024);
  quality = new Float64Array(1024);
  fieldLen = new Float32Array(1024 * FIELD_COUNT);
  slotTerms: number[][] = [];

  readonly slotById = new Map<string, number>();
  readonly fieldLenSum = new Float64Array(FIELD_COUNT);
  liveCount = 0;
  deadCount = 0;
  /** Bumped on every change, so scoring knows when its cached length norms are stale. */
  version = 0;

  /**
   * Per slot, the unit word-vector of name + description (`hasVector` 0 when no word of it is known), and the sum of
   * the live ones, whose mean the ranker subtracts (the direction every tool description shares says nothing).
   */
  vectors = new Float32Array(0);
  hasVector = new Uint8Array(1024);
  readonly vectorSum: Float64Array;
  vectorCount = 0;

  constructor(readonly wordVectors: WordVectors | null = null) {
    const dims = wordVectors?.dims ?? 0;
    this.vectors = new Float32Array(1024 * dims);
    this.vectorSum = new Float64Array(dims);
  }

  get slotCount(): number {
    return this.ids.length;
  }

  /** Adds or replaces one document. */
  upsert(doc: SearchDocument): void {
    const existing = this.slotById.get(doc.id);
    if (existing !== undefined) this.removeSlot(existing);
    const slot = this.ids.length;
    this.ensureCapacity(slot + 1);
    this.ids.push(doc.id);
    this.slotById.set(doc.id, slot);
    this.alive[slot] = 1;
    this.broken[slot] = doc.healthStatus === 'BROKEN' ? 1 : 0;
    this.categoryCode[slot] = categoryCode(doc.category);
    this.quality[slot] = doc.qualityScore;
    const vector = this.wordVectors?.vectorOf(`${doc.name} ${doc.description}`);
    this.hasVector[slot] = vector ? 1 : 0;
    if (vector) {
      this.vectors.set(vector, slot * vector.length);
      for (let k = 0; k < vector.length; k++) this.vectorSum[k] += vector[k];
      this.vectorCount++;
    }

    const packed = new Map<string, number>();
    fieldTerms(doc).forEach((terms, f) => {
      this.fieldLen[slot * FIELD_COUNT + f] = terms.length;
      this.fieldLenSum[f] += terms.length;
      const shift = f * TF_BITS;
      for (const term of terms) {
        const p = packed.get(term) ?? 0;
        if (((p >>> shift) & TF_MAX) < TF_MAX) packed.set(term, p + (1 << shift));
      }
    });
    const termIds: number[] = [];
    for (const [term, tfs] of packed) {
      const id = this.termId(term);
      this.postSlots[id].push(slot);
      this.postTfs[id].push(tfs);
      this.df[id]++;
      termIds.push(id);
    }
    this.slotTerms.push(termIds);
    this.liveCount++;
    this.version++;
    if (existing !== undefined) this.maybeCompact();
  }

  remove(id: string): void {
    const slot = this.slotById.get(id);
    if (slot === undefined) return;
    this.removeSlot(slot);
    this.maybeCompact();
  }

  private removeSlot(slot: number): void {
    this.alive[slot] = 0;
    this.slotById.delete(this.ids[slot]);
    for (const id of this.slotTerms[slot]) this.df[id]--;
    for (let f = 0; f < FIELD_COUNT; f++) this.fieldLenSum[f] -= this.fieldLen[slot * FIELD_COUNT + f];
    if (this.hasVector[slot]) {
      const dims = this.vectorSum.length;
      for (let k = 0; k < dims; k++) this.vectorSum[k] -= this.vectors[slot * dims + k];
      this.vectorCount--;
    }
    this.slotTerms[slot] = [];
    this.liveCount--;
    this.deadCount++;
    this.version++;
  }

  /** Drops dead slots from every posting list once they are a quarter of all slots (amortised O(1) per change). */
  maybeCompact(): void {
    if (this.deadCount < 256 || this.deadCount * 4 < this.slotCount) return;
    const remap = new Int32Array(this.slotCount).fill(-1);
    let next = 0;
    for (let s = 0; s < this.slotCount; s++) {
      if (!this.alive[s]) continue;
      remap[s] = next;
      if (s !== next) {
        this.ids[next] = this.ids[s];
        this.slotById.set(this.ids[s], next);
        this.alive[next] = 1;
        this.broken[next] = this.broken[s];
        this.categoryCode[next] = this.categoryCode[s];
        this.quality[next] = this.quality[s];
        this.fieldLen.copyWithin(next * FIELD_COUNT, s * FIELD_COUNT, (s + 1) * FIELD_COUNT);
        this.slotTerms[next] = this.slotTerms[s];
        this.hasVector[next] = this.hasVector[s];
        const dims = this.vectorSum.length;
        this.vectors.copyWithin(next * dims, s * dims, (s + 1) * dims);
      }
      next++;
    }
    this.ids.length = next;
    this.slotTerms.length = next;
    this.alive.fill(0, next);
    for (let t = 0; t < this.postSlots.length; t++) {
      const slots = this.postSlots[t];
      const tfs = this.postTfs[t];
      let w = 0;
      for (let i = 0; i < slots.length; i++) {
        const s = remap[slots[i]];
        if (s < 0) continue;
        slots[w] = s;
        tfs[w++] = tfs[i];
      }
      slots.length = w;
      tfs.length = w;
    }
    this.deadCount = 0;
    this.version++;
  }

  private termId(term: string): number {
    let id = this.dict.idOf(term);
    if (id === undefined) {
      id = this.dict.add(term);
      this.postSlots.push([]);
      this.postTfs.push([]);
      this.df.push(0);
    }
    return id;
  }

  private ensureCapacity(n: number): void {
    if (n <= this.alive.length) return;
    const size = Math.max(n, this.alive.length * 2);
    const grow = <T extends Uint8Array | Float64Array | Float32Array>(a: T, len: number): T => {
      const b = new (a.constructor as new (n: number) => T)(len);
      b.set(a);
      return b;
    };
    this.alive = grow(this.alive, size);
    this.broken = grow(this.broken, size);
    this.categoryCode = grow(this.categoryCode, size);
    this.quality = grow(this.quality, size);
    this.fieldLen = grow(this.fieldLen, size * FIELD_COUNT);
    this.hasVector = grow(this.hasVector, size);
    this.vectors = grow(this.vectors, size * this.vectorSum.length);
  }
}

/** 1-based code of a category (0 = none), so a filter is one byte comparison. */
export function categoryCode(category: string | undefined): number {
  return category ? CATEGORIES.indexOf(category as (typeof CATEGORIES)[number]) + 1 : 0;
}
