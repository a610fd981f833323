/**
 * Search relevance on outside data, with the engine called directly (no HTTP, no Postgres):
 *   npx tsx bench/relevance.ts            one JSON line: held-out MetaTool top-1 / MRR@10 / Recall@10 for our engine
 *                                         and for a plain BM25 written here, the 63-query example-tool MRR, latency
 *   npx tsx bench/relevance.ts --on=tune  the same figures on the tuning split (for trying changes)
 *   npx tsx bench/relevance.ts --tune     grid search of ranking parameters on the MetaTool tuning split only
 *   npx tsx bench/relevance.ts --encoder=use   the same line for the engine with the sentence encoder (SEARCH_ENCODER=use,
 *                                         the service's default: queries of 4+ words fused, shorter ones by words)
 *   npx tsx bench/relevance.ts --rewrite=<url>|echo   with query rewriting by a model (SEARCH_QUERY_REWRITE=llm)
 *   npx tsx bench/relevance.ts --instructions   also each query behind eight retrieval instructions (`instructed`)
 *   npx tsx bench/relevance.ts --usage    also `usage`: the tuning split (70 %) replayed as usage — each query a search
 *                                         by its own simulated caller, then a run of the labelled tool — aggregated
 *                                         by the service's code (core/search/usage.ts), and the held-out figures with
 *                                         it. With --on=tune: the first 56 % replayed, the other 14 % measured.
 *
 * MetaTool (MIT, Huang et al., ICLR 2024) is read from ../shared/datasets/metatool beside the repository, never
 * copied into it. Split: a query is in the held-out 30 % when fnv1a(query text) % 100 >= 70, so the split is stable,
 * needs no seed and puts identical query texts on the same side. Tuning (--tune) only ever sees the other 70 %.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SearchDocument, SearchEngine } from '../core/search/engine.js';
import { createEmbeddedSearch } from '../core/search/embedded.js';
import { DEFAULT_RANKING, type RankingParams } from '../core/search/ranker.js';
import { aggregateVotes, buildUsageTable, DEFAULT_USAGE, fixedUsage, type UsageParams, type UsageSource, usageTermsOf } from '../core/search/usage.js';
import { createEncodedSearch } from '../core/search/encoded.js';
import { createSentenceEncoder } from '../core/search/sentence-encoder.js';
import { exampleTools } from './synthetic-tools.js';
import { createOpenAiCompatibleProvider } from '../core/llm/openai-compatible.js';
import { createLogger } from '../core/infra/logger.js';
import { withQueryRewrite } from '../core/search/query-rewrite.js';
import { type FakeLlmVendor, startFakeLlmVendor } from '../tests/helpers/fake-llm-vendor.js';

const repoRoot = resolve(fileURLToPath(import.meta.url), '../..');
const DATA_DIR = resolve(repoRoot, '../shared/datasets/metatool');

export interface LabelledQuery {
  q: string;
  expect: string;
}

/** RFC 4180 CSV (quoted fields, doubled quotes, newlines inside quotes). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

/** FNV-1a, 32 bits, over UTF-16 code units: the split's stable hash. */
export function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

export const isHeldOut = (q: string) => fnv1a(q) % 100 >= 70;

export function loadMetaTool(dir = DATA_DIR): { docs: SearchDocument[]; tune: LabelledQuery[]; heldOut: LabelledQuery[] } {
  const descriptions: Record<string, string> = JSON.parse(readFileSync(join(dir, 'plugin_des.json'), 'utf8'));
  const docs: SearchDocument[] = Object.entries(descriptions).map(([name, description]) => ({
    id: name,
    name,
    description,
    packageName: '',
    category: 'automation',
    healthStatus: 'HEALTHY',
    qualityScore: 0.5,
  }));
  const known = new Set(Object.keys(descriptions));
  const tune: LabelledQuery[] = [];
  const heldOut: LabelledQuery[] = [];
  for (const [q, tool] of parseCsv(readFileSync(join(dir, 'all_clean_data.csv'), 'utf8')).slice(1)) {
    const expect = tool?.trim();
    if (!q || !expect || !known.has(expect)) continue;
    (isHeldOut(q) ? heldOut : tune).push({ q, expect });
  }
  return { docs, tune, heldOut };
}

// ---------------------------------------------------------------------------------------------------------------
// The baseline: plain BM25 (k1 1.5, b 0.75) over name + description as one field, lowercased words split on
// punctuation and camelCase, a classic English stop-word list, no stemming, no typos, no prefixes.

const BASELINE_STOP = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both ' +
    'but by can could did do does doing down during each few for from further had has have having he her here hers ' +
    'herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on ' +
    'once only or other our ours ourselves out over own same she should so some such than that the their theirs them ' +
    'themselves then there these they this those through to too under until up very was we were what when where ' +
    'which while who whom why will with would you your yours yourself yourselves'
  ).split(' '),
);

function baselineTokens(text: string): string[] {
  return (text.match(/[\p{L}\p{N}]+/gu) ?? [])
    .flatMap((w) => w.split(/(?<=[\p{Ll}\p{N}])(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})/u))
    .map((w) => w.toLowerCase())
    .filter((w) => !BASELINE_STOP.has(w));
}

export function plainBm25(docs: SearchDocument[], k1 = 1.5, b = 0.75) {
  const tfs = docs.map((d) => {
    const tf = new Map<string, number>();
    for (const t of baselineTokens(`${d.name} ${d.description}`)) tf.set(t, (tf.get(t) ?? 0) + 1);
    return tf;
  });
  const lens = docs.map((d) => baselineTokens(`${d.name} ${d.description}`).length);
  const avg = lens.reduce((a, x) => a + x, 0) / docs.length;
  const df = new Map<string, number>();
  for (const tf of tfs) for (const t of tf.keys()) df.set(t, (df.get(t) ?? 0) + 1);
  return (q: string, limit: number): string[] => {
    const terms = [...new Set(baselineTokens(q))];
    const scored: { id: string; s: number }[] = [];
    docs.forEach((d, i) => {
      let s = 0;
      for (const t of terms) {
        const f = tfs[i].get(t);
        if (!f) continue;
        const n = df.get(t)!;
        s += Math.log(1 + (docs.length - n + 0.5) / (n + 0.5)) * ((f * (k1 + 1)) / (f + k1 * (1 - b + (b * lens[i]) / avg)));
      }
      if (s > 0) scored.push({ id: d.id, s });
    });
    return scored
      .sort((x, y) => y.s - x.s || (x.id < y.id ? -1 : 1))
      .slice(0, limit)
      .map((x) => x.id);
  };
}

// ---------------------------------------------------------------------------------------------------------------

interface Metrics {
  top1: number;
  mrr10: number;
  recall10: number;
}

type Ranked = (q: string) => Promise<string[]> | string[];

async function evaluate(queries: LabelledQuery[], rank: Ranked, times?: number[]): Promise<Metrics> {
  let top1 = 0;
  let rr = 0;
  let recall = 0;
  for (const { q, expect } of queries) {
    const t0 = performance.now();
    const ids = await rank(q);
    times?.push(performance.now() - t0);
    const r = ids.slice(0, 10).indexOf(expect) + 1;
    if (r === 1) top1++;
    if (r > 0) {
      rr += 1 / r;
      recall++;
    }
  }
  const n = Math.max(queries.length, 1);
  return { top1: top1 / n, mrr10: rr / n, recall10: recall / n };
}

const engineRanker =
  (engine: SearchEngine): Ranked =>
  async (q) =>
    (await engine.search({ q, limit: 10 })).hits.map((h) => h.id);

const withEncoder = process.argv.includes('--encoder=use');
/**
 * --rewrite=<OpenAI-compatible base URL> (LLM_API_KEY, LLM_MODEL from the environment): queries of 4+ words go through
 * the model first (SEARCH_QUERY_REWRITE=llm). --rewrite=echo: the OpenAI-compatible stand-in of the tests answers each
 * query with its own words, which measures the mechanism (HTTP round trip, SDK, keywords + query ranked), not a model.
 */
const rewriteArg = process.argv.find((a) => a.startsWith('--rewrite='))?.slice('--rewrite='.length);
let standIn: FakeLlmVendor | undefined;

async function rewriting(engine: SearchEngine): Promise<SearchEngine> {
  if (!rewriteArg) return engine;
  if (rewriteArg === 'echo') standIn ??= await startFakeLlmVendor();
  const llm = createOpenAiCompatibleProvider({
    baseUrl: standIn?.baseUrl ?? rewriteArg,
    apiKey: process.env.LLM_API_KEY,
    model: process.env.LLM_MODEL ?? 'gpt-4o-mini',
    embeddingModel: 'unused',
  });
  const rewritten = withQueryRewrite(engine, llm, createLogger('warn'), { timeoutMs: 30_000, cooldownMs: 0, maxInFlight: 1 });
  return {
    ...rewritten,
    async search(query) {
      standIn?.chat.push({ text: query.q.replace(/[^\p{L}\p{N}]+/gu, ' ').trim() || 'x' });
      const result = await rewritten.search(query);
      if (standIn) standIn.chat.length = 0; // a short query made no call: drop its unused answer
      return result;
    },
  };
}

/** The engine under test: the default embedded one, or (--encoder=use) the one with the sentence encoder, settled. */
async function engineOver(docs: SearchDocument[], params?: RankingParams, usage?: UsageSource): Promise<SearchEngine> {
  if (withEncoder) {
    const engine = createEncodedSearch(createSentenceEncoder(), { usage });
    await engine.replaceAll(docs);
    await engine.settled();
    await engine.whenReady();
    return rewriting(engine);
  }
  const engine = createEmbeddedSearch(params, usage);
  await engine.replaceAll(docs);
  return rewriting(engine);
}

/**
 * Usage replayed: each query is a search by a caller of its own (`sim-<i>`), followed within the window by a run of
 * the labelled tool — one vote per term of the query for that tool — aggregated as the service aggregates its votes
 * (one per term, tool and caller; fresh, so weight 1 each) into the table the ranker reads.
 */
export function replayedUsage(queries: LabelledQuery[], params: UsageParams = DEFAULT_USAGE): UsageSource {
  const now = Date.now();
  const votes = queries.map((x, i) => ({ terms: usageTermsOf(x.q), toolId: x.expect, caller: `sim-${i}`, at: now }));
  return fixedUsage(buildUsageTable(aggregateVotes(votes, now, 30 * 86_400_000), params));
}

const argNumber = (name: string) => {
  const v = process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  return v === undefined ? undefined : Number(v);
};

async function usageFigures(docs: SearchDocument[], replay: LabelledQuery[], measured: LabelledQuery[]) {
  // --usage-weight= / --usage-prior= / --usage-min= / --usage-tools=: trying values (on the tuning split only).
  const params: UsageParams = {
    minCallers: argNumber('usage-min') ?? DEFAULT_USAGE.minCallers,
    prior: argNumber('usage-prior') ?? DEFAULT_USAGE.prior,
    maxToolsPerTerm: argNumber('usage-tools') ?? DEFAULT_USAGE.maxToolsPerTerm,
  };
  const usage = replayedUsage(replay, params);
  const engine = await engineOver(docs, { ...DEFAULT_RANKING, usageWeight: argNumber('usage-weight') ?? DEFAULT_RANKING.usageWeight }, usage);
  const m = await evaluate(measured, engineRanker(engine));
  await engine.close();
  return { replayed: replay.length, pairs: usage.current().pairs, ours: { top1: pct(m.top1), mrr10: pct(m.mrr10), recall10: pct(m.recall10) } };
}

async function examplesMrr(params?: RankingParams): Promise<number> {
  const queries: LabelledQuery[] = JSON.parse(readFileSync(join(repoRoot, 'tests/fixtures/search/relevance-queries.json'), 'utf8'));
  const { docs } = await exampleTools(join(repoRoot, 'examples/tools'));
  const engine = await engineOver(docs, params);
  const byId = new Map(docs.map((d) => [d.id, d.name]));
  const ranked = engineRanker(engine);
  const m = await evaluate(queries, async (q) => (await ranked(q)).map((id) => byId.get(id)!));
  await engine.close();
  return m.mrr10;
}

const pct = (x: number) => Math.round(x * 1000) / 10;
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function report(): Promise<void> {
  const data = loadMetaTool();
  const { docs, tune } = data;
  // --on=tune reports on the tuning split instead: for trying changes without looking at the held-out queries.
  const onTune = process.argv.includes('--on=tune');
  const heldOut = onTune ? data.tune : data.heldOut;
  const engine = await engineOver(docs);
  for (const { q } of tune.slice(0, 300)) await engine.search({ q, limit: 10 });
  const times: number[] = [];
  const ours = await evaluate(heldOut, engineRanker(engine), times);
  const bm25Rank = plainBm25(docs);
  const base = await evaluate(heldOut, (q) => bm25Rank(q, 10));
  times.sort((a, b) => a - b);
  const instructed = process.argv.includes('--instructions') ? await instructionCost(heldOut, engine, bm25Rank) : undefined;
  let usage: (Awaited<ReturnType<typeof usageFigures>> & { without?: { top1: number; mrr10: number; recall10: number } }) | undefined;
  if (process.argv.includes('--usage')) {
    // The replayed queries never include a measured one: held-out (or, with --on=tune, the last 14 % of the tuning split).
    const replay = onTune ? tune.filter((x) => fnv1a(x.q) % 100 < 56) : tune;
    const measured = onTune ? tune.filter((x) => fnv1a(x.q) % 100 >= 56) : heldOut;
    usage = await usageFigures(docs, replay, measured);
    if (onTune) {
      const without = await evaluate(measured, engineRanker(engine));
      usage = { ...usage, without: { top1: pct(without.top1), mrr10: pct(without.mrr10), recall10: pct(without.recall10) } };
    }
  }
  console.log(
    JSON.stringify({
      bench: 'relevance',
      dataset: 'metatool',
      split: onTune ? 'tuning 70% (fnv1a(query) % 100 < 70)' : 'held-out 30% (fnv1a(query) % 100 >= 70)',
      encoder: withEncoder ? 'use' : 'none',
      ...(rewriteArg ? { rewrite: rewriteArg === 'echo' ? 'echo (stand-in)' : (process.env.LLM_MODEL ?? 'gpt-4o-mini') } : {}),
      tools: docs.length,
      queries: heldOut.length,
      ours: { top1: pct(ours.top1), mrr10: pct(ours.mrr10), recall10: pct(ours.recall10) },
      bm25: { top1: pct(base.top1), mrr10: pct(base.mrr10), recall10: pct(base.recall10) },
      examples_mrr: Math.round((await examplesMrr()) * 1000) / 1000,
      p50_ms: Math.round(percentile(times, 50) * 1000) / 1000,
      p99_ms: Math.round(percentile(times, 99) * 1000) / 1000,
      ...(instructed ? { instructed } : {}),
      ...(usage ? { usage } : {}),
    }),
  );
  await engine.close();
  await standIn?.close();
}

/**
 * Retrieval instructions in front of the request, as agents and embedding-model prompts write them (issue 28): the
 * first four were in view while core/search/instruction.ts was written, the other four were not (`unseen`). Each
 * instruction's top-1 / MRR@10 over the same queries, for our engine and for plain BM25, and the means.
 */
export const INSTRUCTIONS = {
  seen: [
    'Given a user request, retrieve the API that can fulfil it: ',
    'Represent this query for retrieving relevant tools: ',
    'Instruct: Given a user query, retrieve the most relevant tool that can help answer it\nQuery: ',
    'Retrieve the model card of the model that best solves this task: ',
  ],
  unseen: [
    'Given a question, retrieve relevant documents that best answer the question: ',
    'Find the function that solves the following problem: ',
    'Instruction: Identify the most suitable API endpoint for the request below.\nRequest: ',
    'Given a task description, find the Hugging Face model that performs it: ',
  ],
};

async function instructionCost(queries: LabelledQuery[], engine: SearchEngine, bm25Rank: (q: string, limit: number) => string[]) {
  const rows: { instruction: string; unseen: boolean; ours: [number, number]; bm25: [number, number] }[] = [];
  for (const [kind, list] of Object.entries(INSTRUCTIONS)) {
    for (const instruction of list) {
      const with_ = queries.map((x) => ({ q: instruction + x.q, expect: x.expect }));
      const ours = await evaluate(with_, engineRanker(engine));
      const base = await evaluate(with_, (q) => bm25Rank(q, 10));
      rows.push({
        instruction: instruction.trim(),
        unseen: kind === 'unseen',
        ours: [pct(ours.top1), pct(ours.mrr10)],
        bm25: [pct(base.top1), pct(base.mrr10)],
      });
    }
  }
  const mean = (xs: number[]) => Math.round((xs.reduce((a, b) => a + b, 0) / xs.length) * 10) / 10;
  const meanOf = (unseen: boolean) => {
    const r = rows.filter((x) => x.unseen === unseen);
    return { ours: [mean(r.map((x) => x.ours[0])), mean(r.map((x) => x.ours[1]))], bm25: [mean(r.map((x) => x.bm25[0])), mean(r.map((x) => x.bm25[1]))] };
  };
  return { seen: meanOf(false), unseen: meanOf(true), each: rows };
}

/**
 * Coordinate ascent on the tuning split: starting from DEFAULT_RANKING, each parameter in turn takes the value from its
 * grid that maximises MRR@10 on the tuning queries (ties keep the current value), for two rounds. Prints every
 * improvement and the final parameters; nothing is read from the held-out split.
 */
async function tuneGrid(): Promise<void> {
  const { docs, tune } = loadMetaTool();
  const score = async (params: RankingParams) => {
    const engine = createEmbeddedSearch(params);
    await engine.replaceAll(docs);
    return (await evaluate(tune, engineRanker(engine))).mrr10;
  };
  type Knob = { name: string; values: number[]; set: (p: RankingParams, v: number) => RankingParams };
  const field =
    (i: number, key: 'fieldWeights' | 'fieldB'): Knob['set'] =>
    (p, v) => {
      const xs = [...p[key]];
      xs[i] = v;
      return { ...p, [key]: xs };
    };
  const knobs: Knob[] = [
    { name: 'w.name', values: [0.5, 1, 1.5, 2, 3, 5], set: field(0, 'fieldWeights') },
    { name: 'w.description', values: [1, 1.5, 2, 3, 4], set: field(1, 'fieldWeights') },
    { name: 'b.name', values: [0, 0.25, 0.5, 0.75, 1], set: field(0, 'fieldB') },
    { name: 'b.description', values: [0.25, 0.5, 0.75, 0.9, 1], set: field(1, 'fieldB') },
    { name: 'k1', values: [0.6, 0.9, 1.2, 1.5, 2, 3], set: (p, v) => ({ ...p, k1: v }) },
    { name: 'coverage', values: [0, 0.25, 0.5, 1, 1.5, 2], set: (p, v) => ({ ...p, coverage: v }) },
    { name: 'synonymWeight', values: [0, 0.3, 0.5, 0.7], set: (p, v) => ({ ...p, synonymWeight: v }) },
    { name: 'stemPrefixWeight', values: [0, 0.3, 0.5, 0.7, 0.9], set: (p, v) => ({ ...p, stemPrefixWeight: v }) },
    { name: 'joinWeight', values: [0.25, 0.5, 1], set: (p, v) => ({ ...p, joinWeight: v }) },
    { name: 'positionFrom', values: [8, 12, 20, 40], set: (p, v) => ({ ...p, positionFrom: v }) },
    { name: 'pairWeight', values: [0, 0.25, 0.5, 1], set: (p, v) => ({ ...p, pairWeight: v }) },
    { name: 'semanticWeight', values: [0, 0.5, 0.75, 1, 1.25, 1.5, 2], set: (p, v) => ({ ...p, semanticWeight: v }) },
  ];
  let best = DEFAULT_RANKING;
  let bestScore = await score(best);
  console.log(JSON.stringify({ start: bestScore, params: best }));
  for (let round = 0; round < 2; round++) {
    for (const knob of knobs) {
      for (const v of knob.values) {
        const candidate = knob.set(best, v);
        const s = await score(candidate);
        if (s > bestScore + 1e-9) {
          bestScore = s;
          best = candidate;
          console.log(JSON.stringify({ round, knob: knob.name, value: v, tuneMrr10: Math.round(s * 10000) / 10000 }));
        }
      }
    }
  }
  console.log(JSON.stringify({ tuneMrr10: bestScore, params: best }));
}

async function main(): Promise<void> {
  if (!existsSync(join(DATA_DIR, 'plugin_des.json')) || !existsSync(join(DATA_DIR, 'all_clean_data.csv'))) {
    console.error(`bench:relevance: MetaTool data not found at ${DATA_DIR} (plugin_des.json, all_clean_data.csv)`);
    process.exit(1);
  }
  if (process.argv.includes('--tune')) await tuneGrid();
  else await report();
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
