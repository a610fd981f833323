/**
 * Search latency benchmark: indexes 10,000 synthetic tools (plus the real examples), warms up, then times a
 * realistic query mix (1–4 words, typos, prefixes, category filters) one query at a time and prints one JSON line.
 *   npx tsx bench/search.ts [--engine=embedded|encoded|minisearch] [--docs=10000] [--queries=3000] [--long=500]
 * (encoded: the embedded engine with the sentence encoder, SEARCH_ENCODER=use, the default; build_ms includes
 * encoding every tool, or reading their vectors from /tmp/toolshed-bench-search-vectors/ kept by an earlier run.
 * It reports queries of three words or fewer (`short`, never encoded) apart from `long` ones: --long more queries
 * of 5–9 words, each distinct, so that every one is encoded — the query cache serves none of them.)
 * Every query goes to the index: no engine here caches results.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SearchEngine, SearchQuery } from '../core/search/engine.js';
import { createEmbeddedSearch } from '../core/search/embedded.js';
import { DEFAULT_RANKING, SEMANTIC_CANDIDATES } from '../core/search/ranker.js';
import { createMiniSearchEngine } from './minisearch.js';
import { createEncodedSearch, encodedQueryText, type SentenceVectorStore } from '../core/search/encoded.js';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createSentenceEncoder } from '../core/search/sentence-encoder.js';
import { exampleTools, seededRandom, syntheticTools, syntheticVocabulary } from './synthetic-tools.js';

const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const engineName = args.get('engine') ?? 'embedded';
const docCount = Number(args.get('docs') ?? 10_000);
const queryCount = Number(args.get('queries') ?? 3_000);

const FILLERS = ['how to', 'tool to', 'i need to', 'a tool that can', ''];

/** A realistic query mix drawn from the corpus vocabulary. */
export function queryMix(n: number, seed = 7): SearchQuery[] {
  const rnd = seededRandom(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)];
  const vocab = syntheticVocabulary();
  const queries: SearchQuery[] = [];
  for (let i = 0; i < n; i++) {
    const domain = pick(vocab);
    const words = Array.from({ length: 1 + Math.floor(rnd() * 4) }, () => (rnd() < 0.85 ? pick(domain.words) : pick(pick(vocab).words)));
    const roll = rnd();
    const k = Math.floor(rnd() * words.length);
    if (roll < 0.2 && words[k].length >= 5) words[k] = typo(words[k], rnd);
    else if (roll < 0.4) {
      const last = words[words.length - 1];
      words[words.length - 1] = last.slice(0, Math.max(2, Math.ceil(last.length * (0.4 + rnd() * 0.4))));
    } else if (roll < 0.55) words.unshift(pick(FILLERS));
    queries.push({
      q: words.join(' ').trim(),
      category: rnd() < 0.25 ? domain.category : undefined,
      limit: rnd() < 0.8 ? 10 : 20,
      offset: rnd() < 0.9 ? 0 : 10,
    });
  }
  return queries;
}

function typo(word: string, rnd: () => number): string {
  const i = 1 + Math.floor(rnd() * (word.length - 2));
  const kind = Math.floor(rnd() * 4);
  const letter = String.fromCharCode(97 + Math.floor(rnd() * 26));
  if (kind === 0) return word.slice(0, i) + word[i + 1] + word[i] + word.slice(i + 2);
  if (kind === 1) return word.slice(0, i) + word.slice(i + 1);
  if (kind === 2) return word.slice(0, i) + letter + word.slice(i + 1);
  return word.slice(0, i) + letter + word.slice(i);
}

/** Distinct natural-language queries of 5–9 words (a filler, then domain words). */
export function longQueries(n: number, seed = 11): SearchQuery[] {
  const rnd = seededRandom(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)];
  const vocab = syntheticVocabulary();
  const seen = new Set<string>();
  const out: SearchQuery[] = [];
  while (out.length < n) {
    const domain = pick(vocab);
    const words = Array.from({ length: 3 + Math.floor(rnd() * 4) }, () => pick(domain.words));
    const q = `${pick(['i need a tool that can', 'find something to', 'how do i', 'help me'])} ${words.join(' ')}`;
    if (seen.has(q)) continue;
    seen.add(q);
    out.push({ q, limit: 10 });
  }
  return out;
}

/** Tool vectors kept in files between runs of this bench (the service keeps them in Postgres). */
function fileStore(dir = '/tmp/toolshed-bench-search-vectors'): SentenceVectorStore {
  mkdirSync(dir, { recursive: true });
  return {
    async load(hashes) {
      const found = new Map<string, Float32Array>();
      for (const h of hashes) {
        const f = join(dir, h);
        if (existsSync(f)) found.set(h, new Float32Array(new Uint8Array(readFileSync(f)).buffer));
      }
      return found;
    },
    async save(rows) {
      for (const r of rows) writeFileSync(join(dir, r.hash), new Uint8Array(r.vector.buffer, r.vector.byteOffset, r.vector.byteLength));
    },
    async keepOnly() {},
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function main(): Promise<void> {
  const encoded = engineName === 'encoded' ? createEncodedSearch(createSentenceEncoder(), { store: fileStore() }) : undefined;
  const engine: SearchEngine = encoded ?? (engineName === 'minisearch' ? createMiniSearchEngine() : createEmbeddedSearch());
  const root = join(fileURLToPath(import.meta.url), '../..');
  const examples = await exampleTools(join(root, 'examples/tools'));
  const docs = [...examples.docs, ...syntheticTools(docCount - examples.docs.length)];

  const t0 = performance.now();
  await engine.replaceAll(docs);
  await encoded?.settled();
  await encoded?.whenReady();
  const buildMs = performance.now() - t0;

  for (const q of queryMix(500, 99)) await engine.search(q);
  const queries = queryMix(queryCount);
  const times: number[] = [];
  const shortTimes: number[] = [];
  const longTimes: number[] = [];
  const isLong = (q: string) => encodedQueryText(q) !== undefined;
  for (const q of queries) {
    const start = performance.now();
    await engine.search(q);
    const ms = performance.now() - start;
    times.push(ms);
    (isLong(q.q) ? longTimes : shortTimes).push(ms);
  }
  if (encoded) {
    for (const q of longQueries(Number(args.get('long') ?? 500))) {
      const start = performance.now();
      await engine.search(q);
      longTimes.push(performance.now() - start);
    }
  }
  times.sort((a, b) => a - b);
  shortTimes.sort((a, b) => a - b);
  longTimes.sort((a, b) => a - b);
  const round = (x: number) => Math.round(x * 1000) / 1000;
  const split = (xs: number[]) => ({ queries: xs.length, p50_ms: round(percentile(xs, 50)), p99_ms: round(percentile(xs, 99)) });
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  // The embedded engine re-weights only its best SEMANTIC_CANDIDATES hits by word vectors: how often are the first
  // ten (ids and order) other than with every hit re-weighted, and what would every hit cost?
  let depth: Record<string, number> | undefined;
  if (engineName === 'embedded') {
    const everyHit = createEmbeddedSearch({ ...DEFAULT_RANKING, semanticCandidates: Number.MAX_SAFE_INTEGER });
    await everyHit.replaceAll(docs);
    for (const q of queryMix(500, 99)) await everyHit.search(q);
    let same = 0;
    const allTimes: number[] = [];
    for (const q of queries) {
      const start = performance.now();
      const all = await everyHit.search({ ...q, offset: 0, limit: 10 });
      allTimes.push(performance.now() - start);
      const ours = await engine.search({ ...q, offset: 0, limit: 10 });
      if (all.hits.map((h) => h.id).join() === ours.hits.map((h) => h.id).join()) same++;
    }
    allTimes.sort((a, b) => a - b);
    depth = {
      candidates: SEMANTIC_CANDIDATES,
      sameFirstTenPercent: round((100 * same) / queries.length),
      everyHitP50Ms: round(percentile(allTimes, 50)),
      everyHitP99Ms: round(percentile(allTimes, 99)),
      everyHitMeanMs: round(allTimes.reduce((a, b) => a + b, 0) / allTimes.length),
    };
    await everyHit.close();
  }
  console.log(
    JSON.stringify({
      bench: 'search',
      engine: engineName,
      docs: docs.length,
      queries: times.length,
      p50_ms: round(percentile(times, 50)),
      p99_ms: round(percentile(times, 99)),
      mean_ms: round(mean),
      build_ms: Math.round(buildMs),
      short: split(shortTimes),
      long: split(longTimes),
      ...(encoded ? { encoder: encoded.encoderStats() } : {}),
      ...(depth ? { rerankDepth: depth } : {}),
    }),
  );
  await engine.close();
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
