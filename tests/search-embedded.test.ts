/**
 * The embedded engine's behaviour (shared checks in fixtures/search/engine-behaviour.ts), plus what only an
 * in-process engine can promise: incremental updates that stay correct through many changes.
 */
import test from 'ava';
import { createEmbeddedSearch } from '../core/search/embedded.js';
import { DEFAULT_RANKING } from '../core/search/ranker.js';
import { aggregateVotes, buildUsageTable, UsageTable, usageTermsOf } from '../core/search/usage.js';
import { searchDoc } from './helpers/search-docs.js';
import { createSearchEngine } from '../core/search/index.js';
import { syntheticTools } from '../bench/synthetic-tools.js';
import { BEHAVIOUR_DOCS, registerEngineBehaviour } from './fixtures/search/engine-behaviour.js';

registerEngineBehaviour(test, 'embedded', async () => {
  const engine = createEmbeddedSearch();
  await engine.replaceAll(BEHAVIOUR_DOCS);
  return engine;
});

test('createSearchEngine picks the embedded engine without MEILI_HOST', (t) => {
  t.is(createSearchEngine({}).engine, 'embedded');
  t.is(createSearchEngine({ MEILI_HOST: '' }).engine, 'embedded');
  t.is(createSearchEngine({ MEILI_HOST: 'http://127.0.0.1:7700' }).engine, 'meilisearch');
});

test('many upserts and removals give the same results as indexing the final set at once', async (t) => {
  const docs = syntheticTools(3000);
  const incremental = createEmbeddedSearch();
  await incremental.replaceAll(docs);
  // Remove half, re-add a third of them with new descriptions, change health of others: compaction runs meanwhile.
  const removed = docs.filter((_, i) => i % 2 === 0);
  await incremental.remove(removed.map((d) => d.id));
  const changed = removed.filter((_, i) => i % 3 === 0).map((d) => ({ ...d, description: `${d.description} Revised.` }));
  await incremental.upsert(changed);
  const flipped = docs.filter((_, i) => i % 2 === 1 && i % 5 === 0).map((d) => ({ ...d, healthStatus: 'BROKEN' as const }));
  await incremental.upsert(flipped);

  const finalDocs = new Map(docs.filter((_, i) => i % 2 === 1).map((d) => [d.id, d]));
  for (const d of [...changed, ...flipped]) finalDocs.set(d.id, d);
  const fresh = createEmbeddedSearch();
  await fresh.replaceAll([...finalDocs.values()]);

  t.is((await incremental.status()).documents, finalDocs.size);
  for (const q of ['convert csv', 'hash password', 'resize png imag', 'revised', 'scrape page title']) {
    const a = await incremental.search({ q, limit: 20 });
    const b = await fresh.search({ q, limit: 20 });
    t.is(a.total, b.total, q);
    t.deepEqual(
      a.hits.map((h) => h.id),
      b.hits.map((h) => h.id),
      q,
    );
  }
});

test('ties are broken by qualityScore, then id', async (t) => {
  const engine = createEmbeddedSearch();
  const base = { description: 'Same words.', packageName: '@demo/same', category: 'automation' as const, healthStatus: 'HEALTHY' as const };
  await engine.replaceAll([
    { ...base, id: 'b', name: 'sameTool', qualityScore: 0.5 },
    { ...base, id: 'a', name: 'sameTool', qualityScore: 0.5 },
    { ...base, id: 'c', name: 'sameTool', qualityScore: 0.9 },
  ]);
  const r = await engine.search({ q: 'same words', limit: 10 });
  t.deepEqual(
    r.hits.map((h) => h.id),
    ['c', 'a', 'b'],
  );
});

test('a kept answer is never stale: a changed, added, removed, broken or re-rated tool and a new usage table show at once', async (t) => {
  let table = UsageTable.empty;
  const engine = createEmbeddedSearch(DEFAULT_RANKING, { current: () => table });
  // Two tools alike in every word: their quality score alone orders them.
  const a = searchDoc({ id: 'a', name: 'weatherCity', description: 'The weather in a city.', qualityScore: 0.5 });
  const b = searchDoc({ id: 'b', name: 'weatherCity', description: 'The weather in a city.', qualityScore: 0.5 });
  await engine.replaceAll([a, b]);
  const ids = async (q = 'weather city') => (await engine.search({ q, limit: 10 })).hits.map((h) => h.id);
  const first = await ids();
  t.deepEqual(await ids(), first, 'asked twice, the same answer');
  // Each change below must show on the very next identical query.
  await engine.upsert([{ ...b, qualityScore: 0.9 }]);
  t.is((await ids())[0], 'b', 'a better quality score');
  await engine.upsert([{ ...a, qualityScore: 1 }]);
  t.is((await ids())[0], 'a', 'and back');
  await engine.upsert([{ ...a, healthStatus: 'BROKEN' }]);
  t.deepEqual(await ids(), ['b'], 'a broken tool leaves the answer');
  await engine.upsert([searchDoc({ id: 'c', name: 'cityWeather', description: 'Weather for a city, city by city.' })]);
  t.true((await ids()).includes('c'), 'an added tool');
  await engine.remove(['c']);
  t.false((await ids()).includes('c'), 'a removed tool');
  const tides = { ...b, name: 'tideTables', description: 'Tide tables for a harbour.' };
  await engine.upsert([tides, { ...a, healthStatus: 'HEALTHY', qualityScore: 0.5 }]);
  t.deepEqual(await ids(), ['a'], 'a changed description');
  await engine.replaceAll([tides]);
  t.deepEqual(await ids(), [], 'a new index');
  const now = Date.now();
  const votes = Array.from({ length: 3 }, (_, i) => ({ terms: usageTermsOf('weather city'), toolId: 'b', caller: `c${i}`, at: now }));
  table = buildUsageTable(aggregateVotes(votes, now, 86_400_000));
  t.deepEqual(await ids(), ['b'], 'a refreshed usage table: callers ran tideTables after these words');
  // A caller changing a returned hit does not change what the next caller gets.
  const r = await engine.search({ q: 'weather city', limit: 10 });
  r.hits[0]!.score = -1;
  t.not((await engine.search({ q: 'weather city', limit: 10 })).hits[0]!.score, -1);
});
