/**
 * The offline provider's embeddings and scenario generation, the similarity helpers built on them, and the LLM tool
 * names, on the real example tools. Generated scenarios are also run by the offline agent and judged, end to end.
 */
import test from 'ava';
import { checkAssertions } from '../core/llm/assertions.js';
import { createOfflineProvider } from '../core/llm/offline/index.js';
import { cosine, mostSimilar } from '../core/llm/similarity.js';
import { llmToolNames } from '../core/llm/tool-names.js';
import { exampleLlmTools, runExampleTool } from './helpers/example-llm-tools.js';

const offline = createOfflineProvider();

const PARAPHRASES: [string, string][] = [
  ['Convert this CSV file with a header row into JSON objects', 'Turn the CSV with a header line into an array of JSON objects'],
  ['Compute the SHA-256 hash of the text "hello world"', 'What is the SHA-256 digest of the string "hello world"?'],
  ['Generate a strong random password with 16 characters', 'Create a random 16-character strong password'],
  ['Convert 100 degrees Celsius to Fahrenheit', 'What is 100 degrees Celsius in Fahrenheit?'],
  ['Extract all links from this HTML page', 'Get every link in the HTML of this page'],
  ['Explain the cron expression "0 9 * * 1-5" in plain English', 'What does the cron expression "0 9 * * 1-5" mean in plain English?'],
  ['Validate the email address jane@example.com', 'Check whether jane@example.com is a valid email address'],
  ['Turn the title "Hello World" into a URL slug', 'Make a URL slug from the title "Hello World"'],
  ['How many days are between 2024-01-31 and 2024-03-01?', 'Count the days from 2024-01-31 to 2024-03-01'],
  ['Decode this JWT token and show its claims', 'Show the claims inside this JWT token by decoding it'],
];

const UNRELATED: [string, string][] = [
  ['Convert this CSV file with a header row into JSON objects', 'What is the SHA-256 hash of the word banana?'],
  ['Generate a strong random password with 16 characters', 'Explain the cron expression "0 9 * * 1-5" in plain English'],
  ['Extract all links from this HTML page', 'How many days are between 2024-01-31 and 2024-03-01?'],
  ['Validate the email address jane@example.com', 'Convert 100 degrees Celsius to Fahrenheit'],
  ['Turn the title "Hello World" into a URL slug', 'Decode this JWT token and show its claims'],
  ['Compute the SHA-256 hash of the text "hello world"', 'Format this SQL query with uppercase keywords'],
  ['Calculate the p95 latency of these response times', 'Convert the colour #1e90ff to RGB and HSL'],
  ['Parse the URL https://example.com/a?b=1 into its parts', 'Estimate how many tokens this prompt uses'],
  ['Convert this CSV file with a header row into JSON objects', 'Turn the title "Hello World" into a URL slug'],
  ['Convert 100 degrees Celsius to Fahrenheit', 'Convert the colour #1e90ff to RGB and HSL'],
];

const similarity = async (a: string, b: string) => {
  const [va, vb] = await offline.embed([a, b]);
  return cosine(va, vb);
};

test('embeddings: fixed 1024 dimensions, unit length, deterministic, independent of the batch', async (t) => {
  const [a, b] = await offline.embed(['Slugify a blog title', 'Hash a password']);
  t.is(a.length, 1024);
  t.true(Math.abs(Math.hypot(...a) - 1) < 1e-3);
  t.deepEqual((await offline.embed(['Slugify a blog title']))[0], a, 'the same text alone gives the same vector');
  t.deepEqual((await offline.embed(['Hash a password', 'x', 'Slugify a blog title']))[2], a);
  t.notDeepEqual(a, b);
  t.deepEqual(await offline.embed([]), []);
});

test('embeddings: every paraphrase scores above 0.7', async (t) => {
  for (const [a, b] of PARAPHRASES) {
    const s = await similarity(a, b);
    t.true(s > 0.7, `${s.toFixed(3)}: "${a}" / "${b}"`);
  }
});

test('embeddings: every unrelated pair scores below 0.3', async (t) => {
  for (const [a, b] of UNRELATED) {
    const s = await similarity(a, b);
    t.true(s < 0.3, `${s.toFixed(3)}: "${a}" / "${b}"`);
  }
});

test('mostSimilar: the best match, and the matches above 0.3 sorted descending', async (t) => {
  const prompts = ['Turn the CSV with a header line into an array of JSON objects', 'Hash "banana" with SHA-256', 'Convert a CSV into JSON'];
  const vecs = await offline.embed(prompts);
  const [query] = await offline.embed(['Convert this CSV file with a header row into JSON objects']);
  const report = mostSimilar(
    query,
    prompts.map((name, i) => ({ id: `s${i}`, name, vec: vecs[i] })),
  );
  t.is(report.mostSimilar?.id, 's0');
  t.is(report.maxSimilarity, report.mostSimilar!.similarity);
  t.true(report.maxSimilarity > 0.7);
  t.deepEqual(
    report.similar.map((s) => s.id),
    ['s0', 's2'],
  );
  t.deepEqual(mostSimilar(query, []), { maxSimilarity: 0, mostSimilar: null, similar: [] });
  t.is(cosine([1, 0], [0, 0]), 0);
});

const input = async (count: number, attempt = 0, avoid: string[] = [], names?: string[]) => {
  const tools = (await exampleLlmTools()).filter((x) => !names || names.includes(x.name));
  return { collection: { name: 'Examples', description: 'All example tools' }, tools, count, avoid, attempt };
};

test('generateScenarios: the count asked, distinct concrete prompts naming their tool, short names, tags', async (t) => {
  const tools = await exampleLlmTools();
  const scenarios = await offline.generateScenarios(await input(10));
  t.is(scenarios.length, 10);
  t.is(new Set(scenarios.map((s) => s.prompt)).size, 10);
  t.true(new Set(scenarios.map((s) => s.tags[0])).size >= 8, 'spread over tools');
  for (const s of scenarios) {
    t.true(s.name.length > 0 && s.name.length <= 60, s.name);
    t.true(
      tools.some((x) => x.name === s.tags[0] && s.prompt.includes(x.name)),
      s.prompt,
    );
    t.true(s.description.length > 0);
  }
  t.deepEqual(await offline.generateScenarios(await input(10)), scenarios, 'deterministic');
});

test('generateScenarios: another attempt gives different prompts, and avoided ones are neither repeated nor paraphrased', async (t) => {
  const first = await offline.generateScenarios(await input(5, 0));
  const second = await offline.generateScenarios(
    await input(
      5,
      1,
      first.map((s) => s.prompt),
    ),
  );
  t.is(second.length, 5);
  t.deepEqual(
    second.filter((s) => first.some((f) => f.prompt === s.prompt)),
    [],
  );
  const avoided = await offline.embed(first.map((s) => s.prompt));
  for (const vec of await offline.embed(second.map((s) => s.prompt))) {
    t.true(
      mostSimilar(
        vec,
        avoided.map((v, i) => ({ id: String(i), name: '', vec: v })),
      ).maxSimilarity <= 0.7,
    );
  }
  const sameAvoid = await offline.generateScenarios(await input(5, 1));
  t.notDeepEqual(
    sameAvoid.map((s) => s.prompt),
    first.map((s) => s.prompt),
    'attempt alone changes the output',
  );
});

test('generateScenarios: one tool still gives varied prompts, never an avoided one', async (t) => {
  const one = await offline.generateScenarios(await input(6, 0, [], ['convertColor']));
  t.is(one.length, 6);
  t.is(new Set(one.map((s) => s.prompt)).size, 6);
  const again = await offline.generateScenarios(
    await input(
      6,
      1,
      one.map((s) => s.prompt),
      ['convertColor'],
    ),
  );
  t.true(again.length > 0);
  t.deepEqual(
    again.filter((s) => one.some((o) => o.prompt.toLowerCase() === s.prompt.toLowerCase())),
    [],
  );
});

test('generated scenarios run and pass end to end with the offline agent and judge', async (t) => {
  const tools = await exampleLlmTools();
  let passed = 0;
  const failures: string[] = [];
  for (const attempt of [0, 1]) {
    const scenarios = await offline.generateScenarios({ ...(await input(tools.length, attempt)) });
    for (const s of scenarios) {
      const run = await offline.runAgent({ prompt: s.prompt, tools, maxSteps: 10, callTool: runExampleTool });
      const verdict = await offline.judge({
        prompt: s.prompt,
        finalText: run.text,
        steps: run.steps,
        tools,
        assertions: [{ type: 'toolCalled', tool: s.tags[0] }],
      });
      if (verdict.verdict === 'pass') passed++;
      else failures.push(`${s.prompt} → ${verdict.reason}`);
    }
  }
  const total = tools.length * 2;
  for (const f of failures) t.log(f);
  t.log(`${passed}/${total} generated scenarios pass`);
  // The webhook tools need a WEBHOOK_SECRET that this in-process run does not give them.
  t.true(passed / total >= 0.9, `${passed}/${total}`);
});

test('llmToolNames: plain names unless they clash, then prefixed; always valid function names', (t) => {
  const names = llmToolNames([
    { id: '1', name: 'slugify', packageName: '@acme/text-tools' },
    { id: '2', name: 'format', packageName: '@acme/sql-tools' },
    { id: '3', name: 'format', packageName: '@acme/date tools' },
    { id: '4', name: 'x'.repeat(80), packageName: 'p' },
  ]);
  t.deepEqual([...names.keys()].sort(), ['date_tools__format', 'slugify', 'sql-tools__format', 'x'.repeat(64)]);
  t.is(names.get('sql-tools__format')?.id, '2');
  for (const n of names.keys()) t.regex(n, /^[A-Za-z0-9_-]{1,64}$/);
  const step = { toolCallId: 'c', toolName: 'sql-tools__format', input: {}, result: { output: 1, executionTimeMs: 1 } };
  t.true(checkAssertions([{ type: 'toolCalled', tool: 'format' }], [step], '')[0].passed, 'a prefixed name matches its tool');
});
