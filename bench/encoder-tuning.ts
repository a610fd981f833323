/**
 * Choosing the sentence encoder's fusion (core/search/encoded.ts) on MetaTool's tuning split (70 %) only:
 *   npx tsx bench/encoder-tuning.ts [--usage]
 * encodes every tuning query once (kept in /tmp/toolshed-encoder-tuning.bin between runs), then tries fusion weights
 * and the length rule (queries of fewer than N words ranked by words alone), and prints one JSON line: top-1 /
 * MRR@10 per setting, and per query length lexical vs fused. Held-out queries are never read here; bench/relevance.ts
 * --encoder=use reports them with the chosen setting.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createEmbeddedSearch } from '../core/search/embedded.js';
import { encodedQueryText, FUSED_LEXICAL, sentenceOf } from '../core/search/encoded.js';
import { DEFAULT_RANKING } from '../core/search/ranker.js';
import { createSentenceEncoder } from '../core/search/sentence-encoder.js';
import { loadMetaTool, replayedUsage } from './relevance.js';
import { fnv1a } from './relevance.js';

const CACHE = '/tmp/toolshed-encoder-tuning.bin';
const DIMS = 512;

const { docs, tune: all } = loadMetaTool();
const withUsage = process.argv.includes('--usage');
// With --usage: the first 56 % replayed as usage, the other 14 % measured (as bench/relevance.ts --on=tune --usage).
const tune = withUsage ? all.filter((x) => fnv1a(x.q) % 100 >= 56) : all;
const usage = withUsage ? replayedUsage(all.filter((x) => fnv1a(x.q) % 100 < 56)) : undefined;

const texts = [...docs.map(sentenceOf), ...all.map((x) => encodedQueryText(x.q, 0) ?? '')];
let vectors: Float32Array[];
if (existsSync(CACHE)) {
  const buf = new Float32Array(new Uint8Array(readFileSync(CACHE)).buffer);
  vectors = texts.map((_, i) => buf.subarray(i * DIMS, (i + 1) * DIMS));
} else {
  const encoder = createSentenceEncoder();
  vectors = [];
  for (let i = 0; i < texts.length; i += 32) vectors.push(...(await encoder.embed(texts.slice(i, i + 32).map((t) => t || '.'))));
  await encoder.close();
  const out = new Float32Array(texts.length * DIMS);
  vectors.forEach((v, i) => out.set(v, i * DIMS));
  writeFileSync(CACHE, new Uint8Array(out.buffer));
}
const docVec = vectors.slice(0, docs.length);
const queryVec = new Map(all.map((x, i) => [x.q, vectors[docs.length + i]]));

const engine = createEmbeddedSearch(DEFAULT_RANKING, usage);
await engine.replaceAll(docs);
const words = (q: string) => (q.match(/[\p{L}\p{N}]+/gu) ?? []).length;

interface Row {
  n: number;
  plain: string[];
  fusedLex: Map<string, number>;
  cos: number[];
  expect: string;
}
const rows: Row[] = [];
for (const x of tune) {
  const plain = (await engine.search({ q: x.q, limit: 10 })).hits.map((h) => h.id);
  const hits = engine.searchWith(FUSED_LEXICAL, { q: x.q, limit: docs.length }).hits;
  let best = 0;
  for (const h of hits) best = Math.max(best, h.lexical ?? h.score);
  const fusedLex = new Map(hits.map((h) => [h.id, (best > 0 ? (h.lexical ?? h.score) / best : 0) + (h.usage ?? 0)]));
  const q = queryVec.get(x.q)!;
  const cos = docVec.map((d) => {
    let c = 0;
    for (let k = 0; k < DIMS; k++) c += q[k] * d[k];
    return c;
  });
  rows.push({ n: words(x.q), plain, fusedLex, cos, expect: x.expect });
}

const rankOf = (list: string[], id: string) => list.indexOf(id) + 1;
const fused = (r: Row, weight: number, threshold: number) => {
  const scored: { id: string; s: number; quality: number }[] = [];
  docs.forEach((d, i) => {
    const lex = r.fusedLex.get(d.id);
    if (lex === undefined && r.cos[i] < threshold) return;
    scored.push({ id: d.id, s: (lex ?? 0) + weight * r.cos[i], quality: d.qualityScore });
  });
  scored.sort((a, b) => b.s - a.s || b.quality - a.quality || (a.id < b.id ? -1 : 1));
  return scored.slice(0, 10).map((s) => s.id);
};
const score = (ranks: number[]) => ({
  top1: Math.round((1000 * ranks.filter((r) => r === 1).length) / ranks.length) / 10,
  mrr10: Math.round((1000 * ranks.reduce((a, r) => a + (r > 0 ? 1 / r : 0), 0)) / ranks.length) / 10,
});

const byLength: Record<string, unknown> = {};
const fusedRanks = new Map<number, number[]>();
for (const w of [3, 4, 5, 6, 7, 8])
  fusedRanks.set(
    w,
    rows.map((r) => rankOf(fused(r, w, 0.3), r.expect)),
  );
const plainRanks = rows.map((r) => rankOf(r.plain, r.expect));
for (const [lo, hi] of [
  [1, 3],
  [4, 4],
  [5, 5],
  [6, 7],
  [8, 10],
  [11, 999],
]) {
  const idx = rows.map((r, i) => (r.n >= lo && r.n <= hi ? i : -1)).filter((i) => i >= 0);
  byLength[`${lo}-${hi}`] = { queries: idx.length, lexical: score(idx.map((i) => plainRanks[i])), fused5: score(idx.map((i) => fusedRanks.get(5)![i])) };
}
const settings: Record<string, unknown> = {};
for (const w of fusedRanks.keys())
  for (const minWords of [1, 3, 4, 5, 6]) {
    settings[`w${w}_min${minWords}`] = score(rows.map((r, i) => (r.n >= minWords ? fusedRanks.get(w)![i] : plainRanks[i])));
  }
console.log(
  JSON.stringify({
    bench: 'encoder-tuning',
    split: withUsage ? 'tuning 56-70%, usage from 0-56%' : 'tuning 70%',
    queries: rows.length,
    lexical: score(plainRanks),
    byLength,
    settings,
  }),
);
