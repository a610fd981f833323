/**
 * Learning from use through the real API (docs/search.md, "Learning from use"): a search by an identified caller
 * followed by a run of a tool becomes one vote per (term, tool, caller); only the votes of SEARCH_LEARNING_MIN_CALLERS
 * distinct callers lift a tool, by a bounded amount; anonymous callers record nothing. SEARCH_LEARNING=off:
 * search-learning-off.test.ts. Core checks of the table and the bound come first (no service needed).
 */
import test from 'ava';
import { createEmbeddedSearch } from '../core/search/embedded.js';
import { DEFAULT_RANKING } from '../core/search/ranker.js';
import { aggregateVotes, buildUsageTable, fixedUsage, usageTermsOf } from '../core/search/usage.js';
import { searchDoc } from './helpers/search-docs.js';

const DOCS = [
  searchDoc({ id: 'weather', name: 'weatherForecast', description: 'The weather forecast for a city: rain, wind and temperature.' }),
  searchDoc({ id: 'rain', name: 'rainRadar', description: 'A rain radar image of a region.' }),
  searchDoc({ id: 'stocks', name: 'stockQuote', description: 'The latest quote of a stock.' }),
];

function tableOf(callers: number, toolId: string, q: string) {
  const now = Date.now();
  const votes = Array.from({ length: callers }, (_, i) => ({ terms: usageTermsOf(q), toolId, caller: `c${i}`, at: now }));
  return buildUsageTable(aggregateVotes(votes, now, 86_400_000));
}

test('core: a lone caller is one vote whatever they repeat; the boost needs distinct callers and is bounded', async (t) => {
  const now = Date.now();
  const loop = Array.from({ length: 50 }, () => ({ terms: usageTermsOf('rain forecast'), toolId: 'stocks', caller: 'me', at: now }));
  const aggregates = aggregateVotes(loop, now, 86_400_000);
  t.deepEqual(
    aggregates.map((a) => a.callers),
    aggregates.map(() => 1),
  );
  t.is(buildUsageTable(aggregates).pairs, 0);

  const plain = createEmbeddedSearch();
  await plain.replaceAll(DOCS);
  const before = await plain.search({ q: 'rain forecast', limit: 10 });
  t.is(before.hits[0].id, 'weather');
  for (const callers of [3, 10_000]) {
    const engine = createEmbeddedSearch(DEFAULT_RANKING, fixedUsage(tableOf(callers, 'rain', 'rain forecast')));
    await engine.replaceAll(DOCS);
    const after = await engine.search({ q: 'rain forecast', limit: 10 });
    t.is(after.hits[0].id, 'rain', `${callers} callers`);
    // Scores relative to the best lexical hit (≤ 1 + cosine ≤ 2) plus at most usageWeight.
    t.true(after.hits[0].score <= 2 + DEFAULT_RANKING.usageWeight, String(after.hits[0].score));
  }
  // A tool the words do not reach but that callers ran after them is found; without usage it is not.
  t.false(before.hits.some((h) => h.id === 'stocks'));
  const engine = createEmbeddedSearch(DEFAULT_RANKING, fixedUsage(tableOf(3, 'stocks', 'rain forecast')));
  await engine.replaceAll(DOCS);
  t.true((await engine.search({ q: 'rain forecast', limit: 10 })).hits.some((h) => h.id === 'stocks'));
});
