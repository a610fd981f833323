/**
 * Learning from use through the real API (docs/search.md, "Learning from use"): a search by an identified caller
 * followed by a run of a tool becomes one vote per (term, tool, caller); only the votes of SEARCH_LEARNING_MIN_CALLERS
 * distinct callers lift a tool, by a bounded amount; anonymous callers record nothing. SEARCH_LEARNING=off:
 * search-learning-off.test.ts. Core checks of the table and the bound come first (no service needed).
 */
import test from 'ava';
import path from 'node:path';
import { createEmbeddedSearch } from '../core/search/embedded.js';
import { DEFAULT_RANKING } from '../core/search/ranker.js';
import { aggregateVotes, buildUsageTable, fixedUsage, usageTermsOf } from '../core/search/usage.js';
import { usageCallerKey } from '../core/repos/search-usage.js';
import { searchDoc } from './helpers/search-docs.js';
import { until } from './helpers/processes.js';
import { EXAMPLES_DIR, startService, type Service } from './helpers/service.js';

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

test('core: a phrase callers searched says more than its words apart ("stock price" is not "stock chart" + "price chart")', async (t) => {
  const now = Date.now();
  const votes = (n: number, q: string, toolId: string) =>
    Array.from({ length: n }, (_, i) => ({ terms: usageTermsOf(q), toolId, caller: `${q}-${i}`, at: now }));
  // Each word alone was followed more often by rainRadar; the phrase itself, by weatherForecast.
  const table = buildUsageTable(
    aggregateVotes([...votes(4, 'stock chart', 'rain'), ...votes(4, 'price chart', 'rain'), ...votes(3, 'stock price', 'weather')], now, 86_400_000),
  );
  const engine = createEmbeddedSearch(DEFAULT_RANKING, fixedUsage(table));
  await engine.replaceAll(DOCS);
  const ids = (await engine.search({ q: 'stock price', limit: 10 })).hits.map((h) => h.id);
  t.true(ids.indexOf('weather') >= 0 && ids.indexOf('weather') < ids.indexOf('rain'), ids.join(' '));
});

let svc: Service;
const Q = 'convert text';
const TEXT_TOOLS = '@toolshed-examples/text-tools';

test.before(async () => {
  svc = await startService({ sandbox: 'process', env: { SEARCH_LEARNING_REFRESH_MS: '100', MAX_ACTIVE_EXECUTIONS: '1000' } });
  const res = await svc.importPackage(`path:${path.join(EXAMPLES_DIR, 'text-tools')}`);
  if (res.status !== 201 && res.status !== 200) throw new Error(`import: ${res.status} ${res.text}`);
});
test.after.always(async () => {
  await svc?.close();
});

const order = async (q: string, key?: string) => {
  const res = await svc.request('GET', `/api/tools/search?q=${encodeURIComponent(q)}&limit=20`, { key });
  if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
  return (res.body.results.tools as { id: string; name: string }[]).map((x) => x.name);
};
const votes = async (name: string) => {
  const { rows } = await svc.api.deps.db.raw(
    'select count(*)::int as n, count(distinct caller)::int as callers from search_usage u join tools t on t.id = u.tool_id where t.name = ?',
    [name],
  );
  return rows[0] as { n: number; callers: number };
};
/** A search, then a run of the tool (queued: the vote is left when the run is accepted), as the given caller. */
const searchAndRun = async (tool: string, key?: string) => {
  await order(Q, key);
  const res = await svc.request('POST', `/api/tools/execute/${TEXT_TOOLS}/${tool}?wait=false`, { key, body: { params: { text: 'Hello World' } } });
  if (res.status !== 202) throw new Error(`execute: ${res.status} ${res.text}`);
};

test.serial('one user searching and running their tool 50 times does not move it; three distinct users do, once', async (t) => {
  const before = await order(Q);
  t.true(before.length >= 2, before.join());
  const target = before[1];
  t.not(before[0], target);

  const gamer = await svc.createUser();
  for (let i = 0; i < 50; i++) await searchAndRun(target, gamer.key);
  // One vote per term of the query for that one caller, however often they did it.
  t.deepEqual(await votes(target), { n: usageTermsOf(Q).length, callers: 1 });
  await svc.api.searchUsage.refresh();
  t.deepEqual(await order(Q), before);

  // An anonymous flood of the same records nothing and changes nothing.
  for (let i = 0; i < 20; i++) await searchAndRun(target);
  t.deepEqual(await votes(target), { n: usageTermsOf(Q).length, callers: 1 });
  await svc.api.searchUsage.refresh();
  t.deepEqual(await order(Q), before);

  const users = await Promise.all([svc.createUser(), svc.createUser()]);
  for (const u of users) await searchAndRun(target, u.key);
  t.deepEqual(await votes(target), { n: 3 * usageTermsOf(Q).length, callers: 3 });
  // No explicit refresh: the votes' NOTIFY makes the API process rebuild its table (SEARCH_LEARNING_REFRESH_MS 100).
  const after = await until(
    async () => {
      const o = await order(Q);
      return o[0] === target && o;
    },
    30_000,
    `${target} first after three distinct callers`,
  );
  t.is(after.length, before.length);
  // The words' own order of the others is kept: the boost moves the tool people ran, nothing else.
  t.deepEqual(
    after.filter((n) => n !== target),
    before.filter((n) => n !== target),
  );
});

test.serial('adding a tool to a collection soon after a search is a vote; a search too old is not', async (t) => {
  const u = await svc.createUser();
  await order('word statistics', u.key);
  const { rows } = await svc.api.deps.db.raw("select id from tools where name = 'diffText'");
  await svc.createCollection(u.key, { name: 'learning' }, [rows[0].id]);
  const { rows: terms } = await svc.api.deps.db.raw(
    "select array_agg(term order by term) as terms from search_usage u join tools t on t.id = u.tool_id where t.name = 'diffText'",
  );
  t.deepEqual(terms[0].terms, [...usageTermsOf('word statistics')].sort());

  // The window: a search older than SEARCH_LEARNING_WINDOW_SECONDS (600 s) earns no vote.
  const late = await svc.createUser();
  await order('compare two texts', late.key);
  await svc.api.deps.learning.flush();
  await svc.api.deps.db.raw("update search_last set at = now() - interval '11 minutes'");
  await svc.createCollection(late.key, { name: 'late' }, [rows[0].id]);
  const { rows: n } = await svc.api.deps.db.raw('select count(*)::int as n from search_usage where caller = ?', [usageCallerKey(late.id)]);
  t.is(n[0].n, 0);
});
