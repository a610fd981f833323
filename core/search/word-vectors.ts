/**
 * Word vectors for the embedded engine's semantic re-weighting: GloVe 6B, 100 dimensions (PDDL 1.0; the 50,000 most
 * frequent plain words, int8 with one scale per word), built by bin/build-word-vectors.ts into data/word-vectors.bin.
 *
 * A text's vector is the smooth-inverse-frequency weighted sum of its known words' vectors (Arora, Liang & Ma, "A
 * simple but tough-to-beat baseline for sentence embeddings", ICLR 2017): a word weighs a / (a + p(word)), with p
 * from its frequency rank (Zipf, p ≈ 0.1 / rank), so "weather" counts and "new" barely does. Unit length, or null
 * when no word is known.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { textWords } from './analyzer.js';

const FILE = fileURLToPath(new URL('./data/word-vectors.bin', import.meta.url));
const SIF_A = 1e-3;

export class WordVectors {
  private readonly rowOf = new Map<string, number>();
  /** Per word: its int8 scale × its SIF weight, applied as the word is added (no float copy of the table is made). */
  private readonly factors: Float32Array;

  constructor(
    readonly dims: number,
    words: string[],
    scales: Float32Array,
    private readonly values: Int8Array,
  ) {
    this.factors = new Float32Array(words.length);
    words.forEach((w, i) => {
      this.rowOf.set(w, i);
      this.factors[i] = scales[i] * (SIF_A / (SIF_A + 0.1 / (i + 1)));
    });
  }

  get size(): number {
    return this.rowOf.size;
  }

  /** The unit SIF vector of a text (analysed as the engine analyses it, stop words dropped), or null. */
  vectorOf(text: string): Float32Array | null {
    const v = new Float32Array(this.dims);
    let known = 0;
    for (const word of textWords(text)) {
      const row = this.rowOf.get(word);
      if (row === undefined) continue;
      known++;
      const base = row * this.dims;
      const factor = this.factors[row];
      for (let k = 0; k < this.dims; k++) v[k] += this.values[base + k] * factor;
    }
    if (known === 0) return null;
    let norm = 0;
    for (let k = 0; k < this.dims; k++) norm += v[k] * v[k];
    norm = Math.sqrt(norm);
    if (norm === 0) return null;
    for (let k = 0; k < this.dims; k++) v[k] /= norm;
    return v;
  }
}

export function parseWordVectors(buf: Buffer): WordVectors {
  if (buf.toString('latin1', 0, 8) !== 'TSWV0001') throw new Error('word-vectors.bin: not a TSWV0001 file');
  const count = buf.readUInt32LE(8);
  const dims = buf.readUInt32LE(12);
  const textLen = buf.readUInt32LE(16);
  const words = buf.toString('utf8', 20, 20 + textLen).split('\n');
  const head = 20 + textLen;
  const scalesAt = head + ((4 - (head % 4)) % 4);
  const valuesAt = scalesAt + count * 4;
  if (words.length !== count || buf.length !== valuesAt + count * dims) throw new Error('word-vectors.bin: truncated or malformed');
  const copy = new Uint8Array(buf.subarray(scalesAt, scalesAt + count * 4)); // aligned copy for the Float32Array view
  return new WordVectors(dims, words, new Float32Array(copy.buffer), new Int8Array(buf.buffer, buf.byteOffset + valuesAt, count * dims));
}

let shared: WordVectors | undefined;

/** The shipped vectors, read once per process (about 5.6 MB on disk and in memory). */
export function wordVectors(): WordVectors {
  shared ??= parseWordVectors(readFileSync(FILE));
  return shared;
}
