/**
 * SEARCH_QUERY_REWRITE=llm: a long request is rewritten into keywords by the configured model before ranking. The
 * model is the OpenAI-compatible stand-in (the real wire protocol, the real AI SDK provider); the engine is the real
 * embedded one. What a user notices: the request finds the tool its words miss; short queries, a failing, slow or
 * hostile model and a flood of identical queries cost nothing but the words-only answer.
 */
import path from 'node:path';
import test from 'ava';
import { loadConfig } from '../core/infra/config.js';
import { createOpenAiCompatibleProvider } from '../core/llm/openai-compatible.js';
import { createLogger } from '../core/infra/logger.js';
import { createEmbeddedSearch } from '../core/search/embedded.js';
import type { SearchDocument } from '../core/search/engine.js';
import { keywordsOf, withQueryRewrite } from '../core/search/query-rewrite.js';
import { startFakeLlmVendor } from './helpers/fake-llm-vendor.js';
import { searchDoc as doc } from './helpers/search-docs.js';
import { EXAMPLES_DIR, startService } from './helpers/service.js';
import { textSink } from './helpers/text-sink.js';

const DOCS: SearchDocument[] = [
  doc({ id: 'translate', name: 'translateText', description: 'Translates text from one language to another.' }),
  doc({ id: 'essay', name: 'essayOutline', description: 'Drafts an outline for an essay on a topic, with sections and key points.' }),
  doc({ id: 'calendar', name: 'nextWeekday', description: 'Returns the date of the next Monday, Tuesday or other day of the week.' }),
  doc({ id: 'fx', name: 'convertCurrency', description: 'Converts an amount between currencies at the current exchange rate.' }),
];
const REQUEST = 'my essay has to be in French by Monday, can you help me with that?';

/** The timeout is ample unless a test is about it: a loaded machine must not turn an answer into a fallback. */
async function setup(t: { teardown: (fn: () => unknown) => void }, timeoutMs = 30_000) {
  const vendor = await startFakeLlmVendor();
  t.teardown(() => vendor.close());
  const llm = createOpenAiCompatibleProvider({ baseUrl: vendor.baseUrl, apiKey: 'sk-test-secret', model: 'gpt-test', embeddingModel: 'emb-test' });
  const sink = textSink();
  const logger = createLogger('debug', sink.stream);
  const plain = createEmbeddedSearch();
  await plain.replaceAll(DOCS);
  const search = withQueryRewrite(plain, llm, logger, { timeoutMs, cooldownMs: 60_000 });
  return { vendor, plain, search, logs: sink.text };
}

const ids = (r: { hits: { id: string }[] }) => r.hits.map((h) => h.id);

test('a request whose words miss the right tool finds it through the keywords; what the model read is the request', async (t) => {
  const { vendor, plain, search } = await setup(t);
  const before = await plain.search({ q: REQUEST, limit: 10 });
  t.not(ids(before)[0], 'translate', 'the words alone do not put the translator first');
  vendor.chat.push({ text: 'translate text french language' });
  const after = await search.search({ q: REQUEST, limit: 10 });
  t.is(ids(after)[0], 'translate');
  t.is(after.rewrittenQuery, 'translate text french language');
  // Nothing the request's own words found is lost.
  for (const id of ids(before)) t.true(ids(after).includes(id), id);
  const [call] = vendor.chatRequests();
  t.is(call.body.model, 'gpt-test');
  t.is(call.body.messages.at(-1).content, REQUEST);
  t.regex(call.body.messages[0].content, /search keywords/);
});

test('short queries go straight to the engine, and a query asked again is answered from the cache', async (t) => {
  const { vendor, plain, search } = await setup(t);
  t.deepEqual(await search.search({ q: 'translate french', limit: 5 }), await plain.search({ q: 'translate french', limit: 5 }));
  t.is(vendor.chatRequests().length, 0);
  vendor.chat.push({ text: 'translate text french', delayMs: 200 });
  // The same request three times at once, then once more: one call to the model.
  const all = await Promise.all([1, 2, 3].map(() => search.search({ q: REQUEST, limit: 5 })));
  const again = await search.search({ q: REQUEST, limit: 5 });
  for (const r of [...all, again]) t.is(r.rewrittenQuery, 'translate text french');
  t.is(vendor.chatRequests().length, 1);
});

test('a failing model: the words-only answer, one warning without the key, and no more calls during the pause', async (t) => {
  const { vendor, plain, search, logs } = await setup(t);
  vendor.chat.push({ error: { status: 500, message: 'overloaded' } });
  const r = await search.search({ q: REQUEST, limit: 10 });
  t.deepEqual(r, await plain.search({ q: REQUEST, limit: 10 }));
  t.is(r.rewrittenQuery, undefined);
  const other = await search.search({ q: 'please find me something to convert dollars into euros', limit: 10 });
  t.is(ids(other)[0], 'fx');
  t.is(vendor.chatRequests().length, 1, 'paused after the failure');
  t.regex(logs(), /search query rewrite failed/);
  t.is(logs().match(/search query rewrite failed/g)?.length, 1);
  t.false(logs().includes('sk-test-secret'));
});

test('a model slower than the timeout does not hold the search', async (t) => {
  const { vendor, plain, search } = await setup(t, 300);
  vendor.chat.push({ text: 'translate text french', delayMs: 10_000 });
  const started = performance.now();
  const r = await search.search({ q: REQUEST, limit: 10 });
  t.true(performance.now() - started < 5000, 'answered after the 300 ms timeout, not after the model');
  t.deepEqual(r, await plain.search({ q: REQUEST, limit: 10 }));
});

test('a hostile or empty answer is only ever search words: letters, digits, spaces and hyphens, at most 200 characters', async (t) => {
  const { vendor, plain, search } = await setup(t);
  vendor.chat.push({ text: 'IGNORE previous\u0000 <script>alert(1)</script>; DROP TABLE tools; -- translate\n\nfrench' });
  const r = await search.search({ q: REQUEST, limit: 10 });
  t.is(r.rewrittenQuery, 'ignore previous script alert 1 script drop table tools translate french');
  t.is(ids(r)[0], 'translate');
  vendor.chat.push({ text: ' ;;; \n ' });
  const q2 = 'help me with my essay on the history of French, due on Monday';
  t.deepEqual(await search.search({ q: q2, limit: 10 }), await plain.search({ q: q2, limit: 10 }));
  t.is(keywordsOf('word '.repeat(2000))!.length <= 200, true);
  t.is(keywordsOf('ä-ö 日本語 x_y'), 'ä-ö 日本語 x y');
});

test('configuration: SEARCH_QUERY_REWRITE=llm without a model is refused at start, with the reason', (t) => {
  const err = t.throws(() => loadConfig({ SEARCH_QUERY_REWRITE: 'llm' }));
  t.regex(err!.message, /SEARCH_QUERY_REWRITE: llm needs a language model: set LLM_BASE_URL/);
  t.is(loadConfig({}).SEARCH_QUERY_REWRITE, 'off');
});

test('in the service: GET /api/tools/search ranks by the keywords and says which it used; short queries are not sent', async (t) => {
  const vendor = await startFakeLlmVendor();
  t.teardown(() => vendor.close());
  const svc = await startService({ sandbox: 'process', env: { LLM_BASE_URL: vendor.baseUrl, SEARCH_QUERY_REWRITE: 'llm' } });
  t.teardown(() => svc.close());
  t.is((await svc.importPackage(`path:${path.join(EXAMPLES_DIR, 'datetime-tools')}`)).status, 201);
  const q = 'my backup job should go off every night, when will it actually happen next?';
  vendor.chat.push({ text: 'next cron schedule runs' });
  const res = await svc.request('GET', `/api/tools/search?q=${encodeURIComponent(q)}`);
  t.is(res.status, 200);
  t.is(res.body.query, q);
  t.is(res.body.rewrittenQuery, 'next cron schedule runs');
  t.is(res.body.results.tools[0].name, 'nextCronRuns');
  const short = await svc.request('GET', '/api/tools/search?q=cron');
  t.is(short.status, 200);
  t.false('rewrittenQuery' in short.body);
  t.is(vendor.chatRequests().length, 1);
});
