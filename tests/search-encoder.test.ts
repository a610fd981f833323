/**
 * SEARCH_ENCODER=use: the embedded engine with the real sentence encoder (Universal Sentence Encoder lite in a worker
 * thread). A query sharing no word with the right tool finds it; filters, BROKEN tools, total and paging behave as
 * without the encoder; if the encoder's thread dies, search answers by words; and the service wires it from config.
 */
import test from 'ava';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { SearchDocument } from '../core/search/engine.js';
import { searchDoc } from './helpers/search-docs.js';
import { createEmbeddedSearch } from '../core/search/embedded.js';
import { createEncodedSearch } from '../core/search/encoded.js';
import { VectorRows } from '../core/search/scan.js';
import { SCAN_WASM } from '../core/search/scan-wasm.js';
import { compileScan } from '../bin/build-scan.js';
import { TopK } from '../core/search/top-k.js';
import { createSentenceEncoder } from '../core/search/sentence-encoder.js';
import path from 'node:path';
import { EXAMPLES_DIR, type Service, startService } from './helpers/service.js';
import { settle, waitUntil as until } from './helpers/wait.js';
import { createTestDatabase } from './helpers/postgres.js';
import { listSearchDocuments } from '../core/repos/tools.js';

const doc = searchDoc;

const DOCS: SearchDocument[] = [
  doc({ id: 'shop', name: 'productSearch', description: 'Find products tailored to your preferences in online shops.', category: 'web-scraping' }),
  doc({
    id: 'forecast',
    name: 'getForecast',
    description: 'Returns the forecast for a city: temperature, precipitation and wind.',
    category: 'data-processing',
  }),
  doc({ id: 'fx', name: 'convertCurrency', description: 'Converts an amount between currencies at the current exchange rate.', category: 'data-processing' }),
  doc({ id: 'slug', name: 'slugify', description: 'Turns a title into a URL slug.', category: 'text-analysis' }),
  doc({ id: 'hash', name: 'sha256', description: 'Computes the SHA-256 digest of a text.', category: 'security' }),
];

async function engines(docs: SearchDocument[]) {
  const plain = createEmbeddedSearch();
  await plain.replaceAll(docs);
  const encoded = createEncodedSearch(createSentenceEncoder());
  await encoded.replaceAll(docs);
  await encoded.settled();
  return { plain, encoded };
}

test('a query that shares no word with the right tool finds it by meaning; the words-only engine finds nothing', async (t) => {
  const { plain, encoded } = await engines(DOCS);
  t.teardown(() => encoded.close());
  for (const [q, want] of [
    ['will it rain in Lisbon tomorrow', 'forecast'],
    ['how many yen is 20 dollars', 'fx'],
  ] as const) {
    t.is((await plain.search({ q, limit: 5 })).total, 0, `words alone find nothing for "${q}"`);
    t.is((await encoded.search({ q, limit: 5 })).hits[0]?.id, want, q);
  }
  // A 2,000-character agent query (the task, then instructions): the encoder reads its first 500 characters.
  let long = 'Will it rain in Lisbon tomorrow? ';
  while (long.length < 2000) long += 'Pick the most suitable tool, call it with valid parameters and report back briefly. ';
  t.is((await encoded.search({ q: long.slice(0, 2000), limit: 5 })).hits[0]?.id, 'forecast');
  // Words still count: an exact name is first, with or without the encoder.
  t.is((await encoded.search({ q: 'slugify', limit: 5 })).hits[0]?.id, 'slug');
  t.deepEqual(await encoded.search({ q: '   ', limit: 5 }), { total: 0, hits: [] });
});

test('a tool whose vector arrives after a long query was ranked is found by meaning from the next query on', async (t) => {
  // The encoded engine packs the tools' vectors into rows at the first long query; a vector computed later goes into
  // its row. Here the tools' encoding is held until the first query was answered by words alone.
  const real = createSentenceEncoder();
  t.teardown(() => real.close());
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const encoded = createEncodedSearch({
    ...real,
    embed: async (texts, opts) => {
      if (!opts?.urgent) await held;
      return real.embed(texts, opts);
    },
  });
  await encoded.replaceAll(DOCS);
  await encoded.whenReady();
  const q = 'will it rain in Lisbon tomorrow';
  t.is((await encoded.search({ q, limit: 5 })).total, 0, 'no tool has its vector yet');
  t.is(encoded.encoderStats().documentsWaiting, DOCS.length);
  release();
  await encoded.settled();
  t.is((await encoded.search({ q, limit: 5 })).hits[0]?.id, 'forecast');
});

test('a background encoding pass that throws is reported, and the next change of the index is still encoded', async (t) => {
  // The passes are one chain: a pass that threw used to reject the chain, and every later pass was skipped, so tools
  // added afterwards were never encoded (found by words only, for good). Here the vector store throws at the first full load.
  const real = createSentenceEncoder();
  t.teardown(() => real.close());
  const saved: string[] = [];
  let full = 0;
  const encoded = createEncodedSearch(real, {
    store: {
      load: async () => new Map(),
      save: async (rows) => {
        saved.push(...rows.map((r) => r.hash));
      },
      keepOnly: (() => {
        if (full++ === 0) throw new Error('store unreachable');
        return Promise.resolve();
      }) as (hashes: string[]) => Promise<void>,
    },
  });
  await encoded.replaceAll(DOCS.slice(0, 1));
  await encoded.settled();
  t.regex((await encoded.status()).detail ?? '', /last encoding pass failed: store unreachable/);
  await encoded.upsert(DOCS.slice(1));
  await encoded.whenReady();
  await encoded.settled();
  t.is(encoded.encoderStats().documentsWaiting, 0, 'every tool has its vector');
  t.is(saved.length, DOCS.length);
  t.is((await encoded.search({ q: 'will it rain in Lisbon tomorrow', limit: 5 })).hits[0]?.id, 'forecast');
});

const plainDot = (a: Float32Array, b: Float32Array) => {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i] * b[i];
  return sum;
};

test("the fused ranking's first k, kept without sorting the rest, are a full sort's first k (ties by quality, then id)", (t) => {
  // encoded.ts keeps only offset + limit hits of the scan over every tool (TopK, top-k.ts).
  let seed = 7;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const q = Float32Array.from({ length: 512 }, () => rnd() - 0.5);
  const vectors = Array.from({ length: 2000 }, (_, i) => (i % 50 === 0 ? q : Float32Array.from({ length: 512 }, () => rnd() - 0.5)));
  const scored = vectors.map((v, i) => ({ id: `t${(i * 7919) % 2003}`, score: Math.round(plainDot(v, q) * 4) / 4, quality: i % 3 }));
  const order = (a: (typeof scored)[0], b: (typeof scored)[0]) => b.score - a.score || b.quality - a.quality || (a.id < b.id ? -1 : 1);
  const full = [...scored].sort(order);
  for (const k of [0, 1, 10, 37, 110, 2000, 2500]) {
    const top = new TopK(k, order);
    for (const s of scored) top.offer(s);
    t.deepEqual(
      top.sorted().map((s) => s.id),
      full.slice(0, k).map((s) => s.id),
      `k = ${k}`,
    );
  }
});

test("the scan's products (WebAssembly, scan.wat) are each row's dot product with the query; a row never set is 0", (t) => {
  let seed = 11;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const unit = () => {
    const v = Float32Array.from({ length: 512 }, () => rnd() - 0.5);
    const norm = Math.sqrt(plainDot(v, v));
    return v.map((x) => x / norm);
  };
  const rows = new VectorRows(1001, 512);
  const vectors = Array.from({ length: 1000 }, unit);
  vectors.forEach((v, i) => rows.set(i, v));
  const q = vectors[17];
  const scores = rows.scan(q);
  t.is(scores.length, 1001);
  for (let i = 0; i < 1000; i++) t.true(Math.abs(scores[i] - plainDot(q, vectors[i])) < 1e-6, `row ${i}`);
  t.true(Math.abs(scores[17] - 1) < 1e-6);
  t.is(scores[1000], 0);
  t.throws(() => new VectorRows(3, 12), { message: /not a multiple of 8/ });
  t.deepEqual(new VectorRows(0, 512).scan(q), new Float32Array(0));
  // A shorter query after a full one: its missing dimensions are zeros, not the previous query's.
  const half = q.subarray(0, 256);
  t.true(Math.abs(rows.scan(half)[17] - plainDot(half, vectors[17].subarray(0, 256))) < 1e-6);
});

test('the compiled scan (core/search/scan-wasm.ts) is the one scan.wat compiles to (`npm run build:scan`)', async (t) => {
  t.is(Buffer.from(await compileScan()).toString('base64'), SCAN_WASM);
});

test('filters, BROKEN tools, total and paging apply to hits found by meaning', async (t) => {
  const docs = [
    ...DOCS,
    doc({
      id: 'forecast-broken',
      name: 'weatherNow',
      description: 'Current weather and rain radar for a city.',
      healthStatus: 'BROKEN',
      category: 'data-processing',
    }),
    doc({ id: 'forecast-web', name: 'umbrellaAlert', description: 'Emails you on days you will need an umbrella.', category: 'web-scraping' }),
  ];
  const { encoded } = await engines(docs);
  t.teardown(() => encoded.close());
  const q = 'will it rain in Lisbon tomorrow';
  const all = await encoded.search({ q, limit: 10 });
  t.is(all.hits[0]?.id, 'forecast');
  t.true(all.hits.some((h) => h.id === 'forecast-web'));
  t.false(
    all.hits.some((h) => h.id === 'forecast-broken'),
    'a BROKEN tool never appears',
  );
  t.is(all.hits.length, all.total, 'total counts exactly the hits');
  const web = await encoded.search({ q, category: 'web-scraping', limit: 10 });
  t.true(web.hits.length > 0 && web.hits.every((h) => docs.find((d) => d.id === h.id)?.category === 'web-scraping'), 'the category filter holds');
  const pages = [...(await encoded.search({ q, limit: 1 })).hits, ...(await encoded.search({ q, limit: 10, offset: 1 })).hits];
  t.deepEqual(
    pages.map((h) => h.id),
    all.hits.map((h) => h.id),
    'pages of one query are consistent',
  );
  // An upsert is encoded in the background, then found by meaning; a removal is gone at once.
  await encoded.upsert([
    doc({ id: 'umbrella', name: 'umbrellaAdvisor', description: 'Tells you whether to take an umbrella today.', category: 'data-processing' }),
  ]);
  await encoded.settled();
  t.true((await encoded.search({ q, limit: 3 })).hits.some((h) => h.id === 'umbrella'));
  await encoded.remove(['umbrella']);
  t.false((await encoded.search({ q, limit: 10 })).hits.some((h) => h.id === 'umbrella'));
});

test('if the encoder thread is gone, search still answers by words and status says why', async (t) => {
  const encoder = createSentenceEncoder();
  const encoded = createEncodedSearch(encoder);
  await encoded.replaceAll(DOCS);
  await encoded.settled();
  await encoder.close();
  const res = await encoded.search({ q: 'sha256 of a text', limit: 5 });
  t.is(res.hits[0]?.id, 'hash');
  t.is((await encoded.search({ q: 'will it rain in Lisbon tomorrow', limit: 5 })).total, 0, 'nothing by meaning any more');
  t.regex((await encoded.status()).detail ?? '', /sentence encoder: failed/);
});

/** A counter or gauge of the API's metrics (core/infra/metrics.ts), read from a scrape. */
async function metric(svc: Service, name: string): Promise<number> {
  const text = await svc.api.deps.metrics.scrape();
  const m = text.match(new RegExp(`^${name} (\\S+)$`, 'm'));
  if (!m) throw new Error(`no ${name} in the scrape`);
  return Number(m[1]);
}

/** Waits until the model is loaded and every indexed tool has its vector (read or encoded). */
async function encoderSettled(svc: Service, tools: number) {
  // On a timeout, the failure shows what was there (the engine's status says why a tool has no vector).
  const read = async () => ({
    ready: await metric(svc, 'toolshed_search_encoder_ready'),
    waiting: await metric(svc, 'toolshed_search_encoder_documents_waiting'),
    documents: (await svc.api.deps.search.status()).documents,
  });
  const done = (s: Awaited<ReturnType<typeof read>>) => s.ready === 1 && s.waiting === 0 && s.documents === tools;
  const last = await settle(read, done);
  if (!done(last)) throw new Error(`the encoder did not settle: ${JSON.stringify(last)}; ${(await svc.api.deps.search.status()).detail}`);
}

const LONG = 'which weekday will christmas be';

test('by default the service ranks a long query by words and meaning (fusion), a short one by words alone; a repeated query is served from the cache', async (t) => {
  // SEARCH_ENCODER unset: the configuration's default, as on a fresh install (the test helper turns it off otherwise).
  const svc = await startService({ sandbox: 'process', env: { SEARCH_ENCODER: undefined } });
  t.teardown(() => svc.close());
  t.is(svc.config.SEARCH_ENCODER, 'use');
  t.is((await svc.importPackage(`path:${path.join(EXAMPLES_DIR, 'datetime-tools')}`)).status, 201);
  await svc.api.searchSync.flush();
  const docs = await listSearchDocuments(svc.api.deps.db);
  await encoderSettled(svc, docs.length);

  // The same catalogue by words alone (SEARCH_ENCODER=none) ranks the long query wrong: "weekday" is in explainCron's description.
  const words = createEmbeddedSearch();
  await words.replaceAll(docs);
  const nameOf = (id: string | undefined) => docs.find((d) => d.id === id)?.name;
  t.is(nameOf((await words.search({ q: LONG, limit: 5 })).hits[0]?.id), 'explainCron');

  const search = async (q: string) => {
    const res = await svc.request('GET', `/api/tools/search?q=${encodeURIComponent(q)}`);
    t.is(res.status, 200);
    return res.body.results.tools.map((x: { name: string }) => x.name) as string[];
  };
  const encodedBefore = await metric(svc, 'toolshed_search_encoder_queries_encoded_total');
  t.is((await search(LONG))[0], 'dateInfo', 'the fusion ranks the tool that means it first');
  t.is(await metric(svc, 'toolshed_search_encoder_queries_encoded_total'), encodedBefore + 1);
  const hitsBefore = await metric(svc, 'toolshed_search_encoder_query_cache_hits_total');
  // The same query again, with other spacing (the cache's key is the normalised query): from the cache.
  t.is((await search(`  which weekday   will christmas be `))[0], 'dateInfo');
  t.is(await metric(svc, 'toolshed_search_encoder_queries_encoded_total'), encodedBefore + 1, 'not encoded again');
  t.is(await metric(svc, 'toolshed_search_encoder_query_cache_hits_total'), hitsBefore + 1, 'served by the cache');

  // A short query (three words or fewer) never reaches the encoder, and is ranked as by words alone.
  for (const q of ['weekday', 'christmas weekday', 'cron schedule explain']) {
    const names = await search(q);
    t.deepEqual(
      names,
      (await words.search({ q, limit: 20 })).hits.map((h) => nameOf(h.id)),
      q,
    );
  }
  t.is(await metric(svc, 'toolshed_search_encoder_queries_encoded_total'), encodedBefore + 1, 'short queries are not encoded');
  t.is(await metric(svc, 'toolshed_search_encoder_query_cache_hits_total'), hitsBefore + 1, 'nor looked up');

  // Hostile input reaches the encoder only as the contract allows: NUL and over-long queries are 400s in the contract
  // shape, an upper-case path is not the route, and the longest allowed query is answered (the encoder reads 500
  // characters of it). Search stays public: no key and a stranger's key get the same answer.
  const nul = await svc.request('GET', '/api/tools/search?q=weather%00day');
  t.is(nul.status, 400);
  t.is(nul.body.success, false);
  t.is((await svc.request('GET', `/api/tools/search?q=${'x'.repeat(4001)}`)).status, 400);
  t.not((await svc.request('GET', `/API/TOOLS/SEARCH?q=${encodeURIComponent(LONG)}`)).status, 200);
  const longest = await svc.request('GET', `/api/tools/search?q=${encodeURIComponent(`${LONG} `.padEnd(4000, 'z '))}`);
  t.is(longest.status, 200);
  const stranger = await svc.createUser({ tier: 'free' });
  const asStranger = await svc.request('GET', `/api/tools/search?q=${encodeURIComponent(LONG)}`, { key: stranger.key });
  t.is(asStranger.body.results.tools[0]?.name, 'dateInfo');

  // One ranker: a collection's MCP `search_tools` ranks its tools as the registry search does, encoder included.
  const names = docs.filter((d) => d.packageName === '@toolshed-examples/datetime-tools').map((d) => d.name);
  t.true(names.includes('dateInfo') && names.includes('explainCron'));
  const c = await svc.createCollection(
    stranger.key,
    { name: 'Dates' },
    names.map((n) => `@toolshed-examples/datetime-tools::${n}`),
  );
  const client = new Client({ name: 'toolshed-tests', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${svc.url}/api/mcp/${stranger.username}/${c.uid}/http?mode=search`)));
  t.teardown(() => client.close());
  for (const q of [LONG, 'weekday', 'at what time does a cron schedule of every monday at nine run']) {
    const found = (await client.callTool({ name: 'search_tools', arguments: { query: q, limit: 20 } })) as CallToolResult;
    const viaMcp = (found.structuredContent as { tools: { name: string }[] }).tools.map((x) => x.name);
    t.deepEqual(
      viaMcp,
      (await search(q)).filter((n) => names.includes(n)),
      `search_tools and /api/tools/search agree on "${q}"`,
    );
  }
});

test("a restart reads the tools' sentence vectors from Postgres instead of encoding them again", async (t) => {
  const database = await createTestDatabase();
  const first = await startService({ sandbox: 'process', env: { SEARCH_ENCODER: 'use' }, database: { url: database.url, drop: async () => undefined } });
  t.is((await first.importPackage(`path:${path.join(EXAMPLES_DIR, 'datetime-tools')}`)).status, 201);
  await first.api.searchSync.flush();
  const tools = (await listSearchDocuments(first.api.deps.db)).length;
  await encoderSettled(first, tools);
  t.is(await metric(first, 'toolshed_search_encoder_documents_encoded_total'), tools, 'the first start encodes every tool');
  t.is(await metric(first, 'toolshed_search_encoder_documents_loaded_total'), 0);
  // A vector is in the index before it is saved (the save follows its batch): wait for the saves, then count.
  const kept = async () => Number((await first.api.deps.db('search_sentence_vectors').count<{ n: string }[]>({ n: '*' }))[0].n);
  t.is(await settle(kept, (n) => n >= tools), tools, 'one kept vector per tool text');
  await first.close();

  const second = await startService({ sandbox: 'process', env: { SEARCH_ENCODER: 'use' }, database });
  t.teardown(() => second.close());
  await encoderSettled(second, tools);
  t.is(await metric(second, 'toolshed_search_encoder_documents_loaded_total'), tools, 'every vector read back');
  t.is(await metric(second, 'toolshed_search_encoder_documents_encoded_total'), 0, 'none encoded again');
  const res = await second.request('GET', `/api/tools/search?q=${encodeURIComponent(LONG)}`);
  t.is(res.body.results.tools[0]?.name, 'dateInfo', 'ranked with the vectors read back');

  // A tool whose description changes gets a new vector (its old one is not reused).
  await second.api.deps.db('tools').where({ name: 'dateInfo' }).update({ description: 'Tells which day of the week a date falls on.' });
  await second.api.searchSync.flush();
  await until(
    async () =>
      (await metric(second, 'toolshed_search_encoder_documents_encoded_total')) === 1 &&
      (await metric(second, 'toolshed_search_encoder_documents_waiting')) === 0,
    (done) => done,
    'the changed description encoded',
  );
});

test('an input the model refuses fails that call only: the thread lives on and encodes the next text', async (t) => {
  const encoder = createSentenceEncoder();
  t.teardown(() => encoder.close());
  await t.throwsAsync(encoder.embed(['']), { message: /sentence encoder:/ }, 'the model cannot encode an empty text');
  t.is(encoder.failure(), undefined);
  const [v] = await encoder.embed(['weather in Lisbon']);
  t.is(v.length, 512);
  t.true(Math.abs(Math.hypot(...v) - 1) < 1e-4, 'a unit vector');
});
