/**
 * The embedded engine's term dictionary: term ↔ id, plus the two lookups that make search forgiving — every term
 * starting with a prefix (binary search in a sorted array, with a small unsorted tail so adding a term stays cheap)
 * and every term within a small edit distance (a banded, early-exit Damerau–Levenshtein over terms of nearby length).
 */

const MERGE_AT = 256;
const MAX_FUZZY_LEN = 48;

export class TermDictionary {
  readonly terms: string[] = [];
  private readonly ids = new Map<string, number>();
  private sorted: string[] = [];
  private sortedIds: number[] = [];
  private pending: number[] = [];
  private readonly byLength: number[][] = [];
  /** Per length bucket, parallel to byLength: each term's character-set bitmask (a cheap pre-filter for typos). */
  private readonly byLengthMasks: number[][] = [];
  /** Three rows for the edit-distance dynamic programme, reused across calls. */
  private rows = [new Int32Array(MAX_FUZZY_LEN + 2), new Int32Array(MAX_FUZZY_LEN + 2), new Int32Array(MAX_FUZZY_LEN + 2)];

  get size(): number {
    return this.terms.length;
  }

  idOf(term: string): number | undefined {
    return this.ids.get(term);
  }

  add(term: string): number {
    const id = this.terms.length;
    this.terms.push(term);
    this.ids.set(term, id);
    (this.byLength[term.length] ??= []).push(id);
    (this.byLengthMasks[term.length] ??= []).push(charMask(term));
    this.pending.push(id);
    return id;
  }

  /** Calls fn for every term that starts with prefix (including prefix itself). */
  forEachWithPrefix(prefix: string, fn: (id: number, term: string) => void): void {
    if (this.pending.length >= MERGE_AT) this.settle();
    const { sorted, sortedIds } = this;
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (sorted[mid] < prefix) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < sorted.length && sorted[i].startsWith(prefix); i++) fn(sortedIds[i], sorted[i]);
    for (const id of this.pending) if (this.terms[id].startsWith(prefix)) fn(id, this.terms[id]);
  }

  /** Calls fn for every term within maxDist edits (insert, delete, substitute, swap neighbours) of word. */
  forEachWithin(word: string, maxDist: number, fn: (id: number, dist: number) => void): void {
    const len = word.length;
    if (len > MAX_FUZZY_LEN) return;
    const mask = charMask(word);
    for (let l = Math.max(1, len - maxDist); l <= Math.min(MAX_FUZZY_LEN, len + maxDist); l++) {
      const bucket = this.byLength[l];
      const masks = this.byLengthMasks[l];
      if (!bucket) continue;
      for (let i = 0; i < bucket.length; i++) {
        // Each edit adds at most one character the other word lacks: more differing characters, more edits.
        if (popcount(mask & ~masks[i]) > maxDist || popcount(masks[i] & ~mask) > maxDist) continue;
        const id = bucket[i];
        const d = this.distance(word, this.terms[id], maxDist);
        if (d <= maxDist) fn(id, d);
      }
    }
  }

  /** Optimal-string-alignment distance between a and b, or max + 1 as soon as it must exceed max. */
  private distance(a: string, b: string, max: number): number {
    const la = a.length;
    const lb = b.length;
    let [prev2, prev, cur] = this.rows;
    for (let j = 0; j <= lb; j++) prev[j] = j;
    for (let i = 1; i <= la; i++) {
      const ca = a.charCodeAt(i - 1);
      const from = Math.max(1, i - max);
      const to = Math.min(lb, i + max);
      cur[0] = i;
      if (from > 1) cur[from - 1] = max + 1;
      let rowMin = from === 1 ? i : max + 1;
      for (let j = from; j <= to; j++) {
        const cb = b.charCodeAt(j - 1);
        let d = prev[j - 1] + (ca === cb ? 0 : 1);
        const del = (j <= i - 1 + max ? prev[j] : max + 1) + 1;
        const ins = cur[j - 1] + 1;
        if (del < d) d = del;
        if (ins < d) d = ins;
        if (i > 1 && j > 1 && ca === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === cb && prev2[j - 2] + 1 < d) {
          d = prev2[j - 2] + 1;
        }
        cur[j] = d;
        if (d < rowMin) rowMin = d;
      }
      if (to < lb) cur[to + 1] = max + 1;
      if (rowMin > max) return max + 1;
      [prev2, prev, cur] = [prev, cur, prev2];
    }
    return prev[lb];
  }

  /** Moves newly added terms into the sorted array (done lazily: once per bulk load, or every MERGE_AT new terms). */
  settle(): void {
    if (this.pending.length === 0) return;
    const add = this.pending.map((id) => this.terms[id]).sort();
    const merged: string[] = [];
    const mergedIds: number[] = [];
    let i = 0;
    let j = 0;
    while (i < this.sorted.length || j < add.length) {
      if (j >= add.length || (i < this.sorted.length && this.sorted[i] < add[j])) {
        merged.push(this.sorted[i]);
        mergedIds.push(this.sortedIds[i++]);
      } else {
        merged.push(add[j]);
        mergedIds.push(this.ids.get(add[j++])!);
      }
    }
    this.sorted = merged;
    this.sortedIds = mergedIds;
    this.pending = [];
  }
}

/** Bitmask of the characters in a word (a–z one bit each, other characters folded into the top bits). */
function charMask(word: string): number {
  let mask = 0;
  for (let i = 0; i < word.length; i++) {
    const c = word.charCodeAt(i);
    mask |= 1 << (c >= 97 && c <= 122 ? c - 97 : 26 + (c % 6));
  }
  return mask;
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}
