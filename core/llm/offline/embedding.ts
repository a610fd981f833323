/**
 * The offline provider's embeddings: TF-IDF-style vectors that do not depend on which texts are embedded together
 * (embeddings are stored per scenario and compared much later), so there is no corpus IDF. Instead: feature hashing
 * into a fixed 1024 dimensions of stemmed word unigrams, word bigrams and character trigrams, sublinear term
 * frequency, and a fixed weight table that turns very common English words down. Each block is normalised and mixed
 * by a fixed weight, then the whole vector is L2-normalised, so cosine similarity compares them.
 */
import { searchStem, searchSynonymsOf, textTerms } from '../../search/analyzer.js';

export const EMBEDDING_DIMENSIONS = 1024;

/** Words that say little about what a prompt asks for; they keep a small weight (a fixed stand-in for low IDF). */
const COMMON = new Set(
  (
    'about after again all also am another any anything around back be been before being both but could did does ' +
    'doing done each else even ever every few first give gives given going got had has have having he her here him ' +
    'his if just know last let like look lot many may maybe might more most much must need needs new next no not now ' +
    'off ok okay old once one only other our out over own please put quite rather really right same say see should ' +
    'show since so some something still such sure take tell than thanks then there these they thing things those ' +
    'through too two under until up us very want wants was way we well were where whether while who whole why would ' +
    'yes yet'
  )
    .split(' ')
    .map(searchStem),
);

/**
 * Words that mean the same in a request, beyond the search analyzer's own synonym groups: each maps to one
 * representative so that paraphrases meet ("rows" of a CSV are its "lines", a JSON "array" is a "list").
 */
const SAME = new Map<string, string>();
for (const group of [
  ['row', 'line', 'record'],
  ['header', 'heading'],
  ['array', 'list'],
  ['compute', 'calculate', 'work', 'determine', 'count'],
  ['show', 'display', 'print'],
  ['find', 'look', 'lookup', 'search'],
  ['big', 'large', 'long'],
  ['explain', 'describe', 'mean', 'meaning'],
  ['quick', 'fast'],
  ['secure', 'strong'],
]) {
  for (const w of group) SAME.set(searchStem(w), searchStem(group[0]));
}

function canonical(term: string): string {
  const own = SAME.get(term);
  if (own) return own;
  const syns = searchSynonymsOf(term);
  return syns.length ? [term, ...syns].sort()[0] : term;
}

/** 32-bit FNV-1a. */
function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

const BLOCK_WEIGHTS = { word: 1, bigram: 0.35, trigram: 0.55 };

function addBlock(vec: Float64Array, counts: Map<string, number>, weightOf: (f: string) => number, blockWeight: number): void {
  const entries = [...counts].map(([f, tf]) => [f, (1 + Math.log(tf)) * weightOf(f)] as const);
  const norm = Math.sqrt(entries.reduce((a, [, w]) => a + w * w, 0));
  if (norm === 0) return;
  for (const [f, w] of entries) {
    // No sign trick: weights stay non-negative like TF-IDF, so similarities stay in [0, 1].
    vec[hash(f) % EMBEDDING_DIMENSIONS] += (blockWeight * w) / norm;
  }
}

const count = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);

export function embedText(text: string): number[] {
  const terms = textTerms(text).map(canonical);
  const words = new Map<string, number>();
  const bigrams = new Map<string, number>();
  const trigrams = new Map<string, number>();
  const content = terms.filter((t) => !COMMON.has(t));
  for (const t of terms) count(words, t);
  for (let i = 0; i + 1 < content.length; i++) count(bigrams, `${content[i]} ${content[i + 1]}`);
  for (const t of content) {
    const padded = `^${t}$`;
    for (let i = 0; i + 3 <= padded.length; i++) count(trigrams, padded.slice(i, i + 3));
  }
  const vec = new Float64Array(EMBEDDING_DIMENSIONS);
  addBlock(vec, words, (t) => (COMMON.has(t) ? 0.15 : /^\d+$/.test(t) ? 0.7 : 1), BLOCK_WEIGHTS.word);
  addBlock(vec, bigrams, () => 1, BLOCK_WEIGHTS.bigram);
  addBlock(vec, trigrams, () => 1, BLOCK_WEIGHTS.trigram);
  const norm = Math.sqrt(vec.reduce((a, x) => a + x * x, 0));
  return Array.from(vec, (x) => (norm === 0 ? 0 : Math.round((x / norm) * 1e6) / 1e6));
}
