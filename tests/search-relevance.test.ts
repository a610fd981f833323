/**
 * Relevance on the real example tools (examples/tools/*): natural queries a user would type, each with the tool that
 * must come first (fixtures/search/relevance-queries.json). Reports the mean reciprocal rank (MRR) of the embedded
 * engine and of a tuned MiniSearch on the same analyzer, since the embedded engine replaced MiniSearch on the promise
 * of ranking at least as well.
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { SearchDocument, SearchEngine } from '../core/search/engine.js';
import { createEmbeddedSearch } from '../core/search/embedded.js';
import { createMiniSearchEngine } from '../core/search/minisearch.js';
import { exampleTools } from '../bench/synthetic-tools.js';

interface RelevanceQuery {
  q: string;
  expect: string;
}

const queries: RelevanceQuery[] = JSON.parse(
  readFileSync(new URL('./fixtures/search/relevance-queries.json', import.meta.url), 'utf8'),
);
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
  t.deepEqual(queries.filter((q) => !names.has(q.expect)).map((q) => q.expect), [], 'expected tools exist');
});

test('embedded engine: MRR on the example tools is at least 0.9, and not below MiniSearch', async (t) => {
  const { docs } = await exampleTools(examplesDir);
  const embedded = await meanReciprocalRank(createEmbeddedSearch(), docs);
  const minisearch = await meanReciprocalRank(createMiniSearchEngine(), docs);
  t.log(`embedded MRR ${embedded.mrr.toFixed(3)} over ${queries.length} queries, ${docs.length} tools`);
  t.log(`MiniSearch (same analyzer, tuned) MRR ${minisearch.mrr.toFixed(3)}`);
  for (const miss of embedded.misses) t.log(`embedded miss: ${miss}`);
  for (const miss of minisearch.misses) t.log(`MiniSearch miss: ${miss}`);
  t.true(embedded.mrr >= 0.9, `MRR ${embedded.mrr.toFixed(3)} < 0.9`);
  t.true(embedded.mrr >= minisearch.mrr, 'embedded ranks at least as well as MiniSearch');
});
