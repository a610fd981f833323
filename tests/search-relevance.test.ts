/**
 * Relevance on the real example tools (examples/tools/*): natural queries a user would type, each with the tool that
 * must come first (fixtures/search/relevance-queries.json). Reports the mean reciprocal rank (MRR) of the embedded
 * engine and of a tuned MiniSearch (bench/minisearch.ts, on the same analyzer), since the embedded engine replaced
 * MiniSearch on the promise of ranking at least as well. Then the outside check of issue 16: on the held-out MetaTool queries
 * (../shared/datasets/metatool beside the repository; skipped when absent), the engine beats a plain BM25.
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { SearchDocument, SearchEngine } from '../core/search/engine.js';
import { createEmbeddedSearch } from '../core/search/embedded.js';
import { createMiniSearchEngine } from '../bench/minisearch.js';
import { exampleTools } from '../bench/synthetic-tools.js';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadMetaTool, plainBm25 } from '../bench/relevance.js';
import { SOURCE_ROOT } from './helpers/source-root.js';

interface RelevanceQuery {
  q: string;
  expect: string;
}

const queries: RelevanceQuery[] = JSON.parse(readFileSync(new URL('./fixtures/search/relevance-queries.json', import.meta.url), 'utf8'));
const examplesDir = fileURLToPath(new URL('../examples/tools', import.meta.url));

async function meanReciprocalRank(engine: SearchEngine, docs: SearchDocument[]) {
  await engine.replaceAll(docs);
  const misses: string[] = [];
  let sum = 0;
  for (const { q, expect } of queries) {
    const { hits } = await engine.search({ q, limit: 10 });
    const names = hits.map((h) => docs.find((d) => d.id === h.id)!.name);
    const rank = names.indexOf(expect) + 1;
    sum += rank > 0 ? 1 / rank : 0;
    if (rank !== 1) misses.push(`"${q}": ${expect} at ${rank || '>10'}, first ${names[0] ?? 'nothing'}`);
  }
  return { mrr: sum / queries.length, misses };
}

test('the query set is big enough and names only real example tools', async (t) => {
  const { docs, skipped } = await exampleTools(examplesDir);
  t.deepEqual(skipped, [], 'every example package loads');
  t.true(queries.length >= 24);
  const names = new Set(docs.map((d) => d.name));
  t.deepEqual(
    queries.filter((q) => !names.has(q.expect)).map((q) => q.expect),
    [],
    'expected tools exist',
  );
});

test('embedded engine: MRR on the example tools is at least 0.95, and not below MiniSearch', async (t) => {
  const { docs } = await exampleTools(examplesDir);
  const embedded = await meanReciprocalRank(createEmbeddedSearch(), docs);
  const minisearch = await meanReciprocalRank(createMiniSearchEngine(), docs);
  t.log(`embedded MRR ${embedded.mrr.toFixed(3)} over ${queries.length} queries, ${docs.length} tools`);
  t.log(`MiniSearch (same analyzer, tuned) MRR ${minisearch.mrr.toFixed(3)}`);
  for (const miss of embedded.misses) t.log(`embedded miss: ${miss}`);
  for (const miss of minisearch.misses) t.log(`MiniSearch miss: ${miss}`);
  t.true(embedded.mrr >= 0.95, `MRR ${embedded.mrr.toFixed(3)} < 0.95`);
  t.true(embedded.mrr >= minisearch.mrr, 'embedded ranks at least as well as MiniSearch');
});

const metatoolDir = resolve(SOURCE_ROOT, '../shared/datasets/metatool');
const haveMetaTool = existsSync(join(metatoolDir, 'all_clean_data.csv'));

(haveMetaTool ? test : test.skip)('held-out MetaTool: the embedded engine is ahead of plain BM25 on top-1 and MRR@10', async (t) => {
  const { docs, heldOut } = loadMetaTool(metatoolDir);
  const engine = createEmbeddedSearch();
  await engine.replaceAll(docs);
  const bm25 = plainBm25(docs);
  let ours = { top1: 0, rr: 0 };
  let base = { top1: 0, rr: 0 };
  const add = (m: typeof ours, ids: string[], expect: string) => {
    const r = ids.slice(0, 10).indexOf(expect) + 1;
    return { top1: m.top1 + (r === 1 ? 1 : 0), rr: m.rr + (r > 0 ? 1 / r : 0) };
  };
  for (const { q, expect } of heldOut) {
    ours = add(
      ours,
      (await engine.search({ q, limit: 10 })).hits.map((h) => h.id),
      expect,
    );
    base = add(base, bm25(q, 10), expect);
  }
  const n = heldOut.length;
  t.log(
    `ours top-1 ${((100 * ours.top1) / n).toFixed(1)} MRR@10 ${((100 * ours.rr) / n).toFixed(1)}; BM25 ${((100 * base.top1) / n).toFixed(1)} / ${((100 * base.rr) / n).toFixed(1)} (${n} queries)`,
  );
  t.true(ours.top1 > base.top1 * 1.05, 'top-1 ahead of BM25 by 5 % or more');
  t.true(ours.rr > base.rr * 1.1, 'MRR@10 ahead of BM25 by 10 % or more');
});
