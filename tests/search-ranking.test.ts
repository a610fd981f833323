/**
 * Ranking behaviour of the embedded engine that issue 16 ("search quality measured on outside data") fixed, each as a
 * user would see it: conversational filler words, typo expansion of correctly spelled words, plural acronyms, glued
 * names, the input schema's parameters, long agent queries, and word vectors breaking ties of meaning.
 */
import test from 'ava';
import type { SearchDocument } from '../core/search/engine.js';
import { searchDoc } from './helpers/search-docs.js';
import { createEmbeddedSearch } from '../core/search/embedded.js';
import { DEFAULT_RANKING } from '../core/search/ranker.js';
import { parseQuery, schemaText, textTerms } from '../core/search/analyzer.js';

const doc = searchDoc;

async function ranked(docs: SearchDocument[], q: string, limit = 10): Promise<string[]> {
  const engine = createEmbeddedSearch();
  await engine.replaceAll(docs);
  return (await engine.search({ q, limit })).hits.map((h) => h.id);
}

const DOCS: SearchDocument[] = [
  doc({ id: 'air', name: 'airQualityForecast', description: 'Planning something outdoors? Get the 2-day air quality forecast for any US zip code.' }),
  doc({ id: 'invoice', name: 'sendInvoice', description: 'Sends an invoice to a customer by email.' }),
  doc({ id: 'feed', name: 'feedReader', description: 'Reads the latest items of an RSS or Atom feed.' }),
  doc({ id: 'seed', name: 'seedDatabase', description: 'Fills a database with seed rows for testing.' }),
  doc({ id: 'format', name: 'formatSourceCode', description: 'Formats source code in many programming languages.' }),
  doc({ id: 'core', name: 'coreDumpAnalyzer', description: 'Analyses a core dump of a crashed process.' }),
  doc({ id: 'node', name: 'nodeVersions', description: 'Lists the released versions of a node package.' }),
  doc({ id: 'user', name: 'lookupUser', description: 'Finds one user record by its id and returns the profile.' }),
  doc({ id: 'links', name: 'extractURLs', description: 'Finds every link in a web page.' }),
  doc({ id: 'apis', name: 'listAPIs', description: 'Lists the endpoints a service exposes.' }),
  doc({ id: 'timed', name: 'TimedSwitch', description: 'Turns a device on or off after a delay; a timed switch can be cancelled or changed later.' }),
  doc({ id: 'cancel', name: 'CancelTimedSwitch', description: 'Cancels a pending timed switch.' }),
  doc({ id: 'csv', name: 'csvToJson', description: 'Parses CSV rows into an array of JSON objects.' }),
  doc({ id: 'text', name: 'normalizeText', description: 'Normalizes unicode and collapses repeated whitespace in a text.' }),
  doc({ id: 'report', name: 'writeReport', description: 'Writes a plain language report from a list of findings.' }),
];

test('conversational filler ("we need our", "can you help us") does not pick a tool', async (t) => {
  const hits = await ranked(DOCS, 'we need our invoice to reach us, can you help?');
  t.is(hits[0], 'invoice');
  t.false((await ranked(DOCS, 'we need our stuff, can you help us please')).includes('air'), '"us" is a stop word');
  t.is((await ranked(DOCS, 'air quality in the US'))[0], 'air', 'in capitals, "US" still counts');
});

test('a correctly spelled word is not expanded to look-alike words', async (t) => {
  const code = await ranked(DOCS, 'format my code');
  t.is(code[0], 'format');
  t.false(code.includes('core'), 'code ↛ core');
  t.false(code.includes('node'), 'code ↛ node');
  const need = await ranked(DOCS, 'I need a database filled with test rows');
  t.is(need[0], 'seed');
  t.false(need.includes('feed'), 'need ↛ feed');
  // A word that matches nothing is still forgiven.
  t.is((await ranked(DOCS, 'fromat sourse code'))[0], 'format');
});

test('plural acronyms match their singular: IDs → id, URLs → url, APIs → api', async (t) => {
  t.deepEqual(textTerms('user IDs'), ['user', 'id']);
  const glued = textTerms('getURLsFromPage');
  t.true(glued.includes('url') && !glued.includes('ur') && !glued.includes('ls'), glued.join(' '));
  t.is((await ranked(DOCS, 'look up users by IDs'))[0], 'user');
  t.is((await ranked(DOCS, 'extract url'))[0], 'links');
  t.is((await ranked(DOCS, 'list api'))[0], 'apis');
});

test('glued words favour the more complete name: "cancel a timed switch" ranks CancelTimedSwitch first', async (t) => {
  t.deepEqual((await ranked(DOCS, 'cancel a timed switch')).slice(0, 2), ['cancel', 'timed']);
  t.is((await ranked(DOCS, 'timed switch'))[0], 'timed');
  t.is((await ranked(DOCS, 'csv to json'))[0], 'csv');
});

test('parameter names and descriptions from the input schema are searchable, below name and description', async (t) => {
  const schema = {
    type: 'object',
    properties: {
      amount: { type: 'number', description: 'How much money to convert.' },
      currency: { type: 'string', description: 'ISO 4217 code of the target currency, e.g. EUR.' },
      options: { type: 'object', properties: { roundingMode: { type: 'string', description: 'banker or half-up' } } },
    },
  };
  const params = schemaText(schema);
  t.true(params.includes('currency') && params.includes('ISO 4217') && params.includes('roundingMode'));
  const docs = [
    ...DOCS,
    doc({ id: 'money', name: 'convertMoney', description: 'Converts an amount between two units of money.', parameters: params }),
    doc({ id: 'rounding', name: 'roundingMode', description: 'Explains the rounding modes of IEEE 754.' }),
  ];
  t.is((await ranked(docs, 'iso 4217'))[0], 'money');
  t.is((await ranked(docs, 'convert to a target currency'))[0], 'money');
  t.is((await ranked(docs, 'rounding mode'))[0], 'rounding', 'a name match beats a parameter match');
});

test('a 2,000-character agent query is accepted and still ranks the task’s tool first', async (t) => {
  const task = 'Convert the attached CSV export of our customers into JSON objects.';
  const instruction =
    ' You are an autonomous agent working for the user. Choose the single most suitable tool for the task above, call ' +
    'it with valid parameters, check that the result is complete, and then report back to the user in plain, ' +
    'friendly language. If a step fails, explain what went wrong and what you tried, retry once with corrected ' +
    'input, and never invent data that the tool did not return. Keep the answer short and do not include internal ' +
    'reasoning, secrets, or tokens.';
  let q = task;
  while (q.length + instruction.length <= 2000) q += instruction;
  q = q.padEnd(2000, '.');
  t.is(q.length, 2000);
  const hits = await ranked(DOCS, q);
  t.is(hits[0], 'csv');
  // Longer input is cut, not refused, and the query stays bounded in terms.
  t.notThrows(() => parseQuery(q.repeat(5)));
  t.is((await ranked(DOCS, q + q))[0], 'csv');
});

test('among the tools a query reaches, the one closest in meaning ranks first (word vectors); they add no hits', async (t) => {
  const docs = [
    doc({ id: 'a-sales', name: 'salesReport', description: 'A daily report of revenue, orders and refunds.' }),
    doc({ id: 'b-rain', name: 'rainReport', description: 'A daily report of rainfall, humidity and sunshine.' }),
  ];
  t.deepEqual(await ranked(docs, 'a report on the weather'), ['b-rain', 'a-sales'], 'weather ~ rainfall, humidity, sunshine');
  t.deepEqual(await ranked(docs, 'a report of our earnings'), ['a-sales', 'b-rain'], 'earnings ~ revenue');
  // Lexically the two are a tie (the same words match): without the vectors the id decides, whatever the meaning.
  const lexical = createEmbeddedSearch({ ...DEFAULT_RANKING, semanticWeight: 0 });
  await lexical.replaceAll(docs);
  t.deepEqual(
    (await lexical.search({ q: 'a report on the weather', limit: 10 })).hits.map((h) => h.id),
    ['a-sales', 'b-rain'],
  );
  // A tool is found by its words, never by closeness alone; unknown words change nothing.
  t.deepEqual(await ranked(docs, 'weather forecast'), []);
  t.is((await createEmbeddedSearch().search({ q: 'weather', limit: 5 })).total, 0);
  t.deepEqual(await ranked(docs, 'qzxv report on the weather'), ['b-rain', 'a-sales']);
});
