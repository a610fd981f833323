/**
 * Agents put a retrieval instruction before the request ("Given a user request, retrieve the API that can fulfil it:
 * …"). Its words — user, request, retrieve, API, tool — must not pick the tools whose descriptions hold them: search
 * ranks the request, and says how well a tool covers the request, not the instruction (core/search/instruction.ts).
 */
import test from 'ava';
import type { SearchDocument } from '../core/search/engine.js';
import { createEmbeddedSearch } from '../core/search/embedded.js';
import { withoutInstruction } from '../core/search/instruction.js';
import { queryCoverage } from '../core/search/match.js';
import { searchDoc as doc } from './helpers/search-docs.js';

const DOCS: SearchDocument[] = [
  doc({ id: 'invoice', name: 'sendInvoice', description: 'Sends an invoice to a customer by email.' }),
  doc({ id: 'user', name: 'lookupUser', description: 'Finds one user record by its id and returns the profile of the user who made the request.' }),
  doc({ id: 'apis', name: 'listAPIs', description: 'Lists the API endpoints and tools a service exposes, to retrieve the most relevant one.' }),
  doc({ id: 'csv', name: 'csvToJson', description: 'Parses CSV rows into an array of JSON objects.' }),
  doc({ id: 'model', name: 'modelCardReader', description: 'Reads the model card of a machine learning model and retrieves its task.' }),
  doc({ id: 'weather', name: 'weatherForecast', description: 'Gets the weather forecast for a city for the next days.' }),
];

const INSTRUCTIONS = [
  'Given a user request, retrieve the API that can fulfil it: ',
  'Represent this query for retrieving relevant tools: ',
  'Instruct: Given a user query, retrieve the most relevant tool that can help answer it\nQuery: ',
  'Retrieve the model card of the model that best solves this task: ',
  'Instruction: Identify the most suitable API endpoint for the request below.\nRequest: ',
];
const REQUESTS = ['send an invoice to my customer by email', 'turn this csv file into json', 'the weather forecast for Oslo tomorrow'];

async function ranked(q: string): Promise<string[]> {
  const engine = createEmbeddedSearch();
  await engine.replaceAll(DOCS);
  return (await engine.search({ q, limit: 10 })).hits.map((h) => h.id);
}

test('a request behind a retrieval instruction ranks as the request alone, and covers tools as it does', async (t) => {
  for (const request of REQUESTS) {
    const bare = await ranked(request);
    t.true(['invoice', 'csv', 'weather'].includes(bare[0]!), `${request}: ${bare}`);
    for (const instruction of INSTRUCTIONS) {
      t.deepEqual(await ranked(instruction + request), bare, `${JSON.stringify(instruction)} + ${request}`);
      for (const d of DOCS) {
        const tool = { name: d.name, description: d.description, input_schema: {} };
        t.is(queryCoverage(instruction + request, tool), queryCoverage(request, tool), `${d.name}: ${instruction}`);
      }
    }
  }
});

test("a person's own request that holds a colon, or reads like an instruction, is left as it is", (t) => {
  for (const q of [
    'convert time: 3pm EST to PST',
    'search api: github repos',
    'Can you find the answer to this question, "What are the impacts of climate change?", in the PDF document with the given document ID: [doc_id]?',
    'To retrieve details of a call from your account using the plugin, you can follow these steps: open the plugin and find the call.',
    'Given a user request, retrieve the API that can fulfil it: ok',
    'retrieve the API: weather',
  ]) {
    t.is(withoutInstruction(q), q);
  }
  t.is(withoutInstruction('Given a user request, retrieve the API that can fulfil it: send an invoice'), 'send an invoice');
});
