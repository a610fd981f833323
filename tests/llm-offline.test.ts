/**
 * The offline provider's agent and judge on the real example tools: tool choice by BM25, argument filling by JSON
 * Schema, explicit parameters, honest refusals, streaming, usage, determinism, and the judge's rules.
 */
import test from 'ava';
import { createLlmProvider } from '../core/llm/index.js';
import { createOfflineProvider } from '../core/llm/offline/index.js';
import type { AgentEvent, AgentRunOptions, AgentStep, LlmToolSpec, ToolCallResult } from '../core/llm/provider.js';
import { exampleLlmTools, runExampleTool } from './helpers/example-llm-tools.js';

const offline = createOfflineProvider();

async function run(prompt: string, extra: Partial<AgentRunOptions> = {}) {
  const tools = extra.tools ?? (await exampleLlmTools());
  const events: AgentEvent[] = [];
  const result = await offline.runAgent({
    prompt,
    tools,
    maxSteps: 10,
    callTool: runExampleTool,
    onEvent: (e) => events.push(e),
    ...extra,
  });
  return { ...result, events };
}

const inputOf = async (prompt: string, extra: Partial<AgentRunOptions> = {}) => (await run(prompt, extra)).steps[0]?.input;

test('without LLM_BASE_URL the provider is offline, and its model names say so', (t) => {
  const p = createLlmProvider({ LLM_MODEL: 'gpt-4o-mini', LLM_EMBEDDING_MODEL: 'text-embedding-3-small' });
  t.is(p.provider, 'offline');
  t.regex(p.chatModel, /offline/);
  t.regex(p.embeddingModel, /offline/);
});

const CHOICES: [string, string][] = [
  ['Convert this CSV to JSON: "name,age\\nAnn,31\\nBob,42"', 'csvToJson'],
  ['What is the SHA-256 hash of the word "banana"?', 'hashText'],
  ['Turn "Hello World, 2024 edition!" into a URL slug', 'slugify'],
  ['Generate 3 passwords of 24 characters without symbols', 'generatePassword'],
  ['How many days are between 2024-01-31 and 2024-03-01?', 'dateDifference'],
  ['Is jane.doe@gmial.com a valid email address?', 'validateEmail'],
  ['Parse the URL https://api.example.com:8443/v1/items?id=3#top', 'parseUrl'],
  ['What does HTTP status 429 mean?', 'lookupHttpStatus'],
  ['Explain the cron expression "*/15 9-17 * * MON-FRI"', 'explainCron'],
  ['Check the contrast between text colour "#777777" and background "white"', 'contrastRatio'],
  ['Diff {"a":1,"b":2} against {"a":1,"b":3,"c":4}', 'diffJson'],
  ['What is the MIME type of report.pdf?', 'lookupMimeType'],
  ['Format this SQL query: select a, b from t where x = 1', 'formatSql'],
  ['Compute the p95 latency of these response times: 120, 85, 240, 95, 310 ms', 'latencyPercentiles'],
];

test('tool choice: each prompt picks the expected example tool, and it runs without error', async (t) => {
  const tools = await exampleLlmTools();
  t.true(tools.length >= 40, 'all example tools are offered at once');
  for (const [prompt, expected] of CHOICES) {
    const { steps } = await run(prompt);
    t.is(steps[0]?.toolName, expected, prompt);
    t.is(steps[0]?.result.error, undefined, `${prompt}: ${steps[0]?.result.error?.message}`);
  }
});

test('arguments: quoted strings go to the parameter their neighbouring words name', async (t) => {
  t.like(await inputOf('Check the contrast between text colour "#777777" and background "white"'), {
    foreground: '#777777',
    background: 'white',
  });
  t.like(await inputOf('Turn the background "navy" and the foreground "#ffffff" into a WCAG contrast ratio'), {
    foreground: '#ffffff',
    background: 'navy',
  });
  t.like(await inputOf("What is the SHA-256 hash of “ünïcode ok”? It's for a test, don't 'worry'"), { text: 'ünïcode ok' });
});

test('arguments: numbers with their units stripped, by the words around them', async (t) => {
  t.like(await inputOf('Generate 3 passwords of 24 characters'), { count: 3, length: 24 });
  t.like(await inputOf('Convert 100 °C to F'), { value: 100, from: '°C', to: 'F' });
  t.like(await inputOf('Format 1,500,000 bytes as a file size with 1 decimals'), { bytes: 1500000, decimals: 1 });
  t.like(await inputOf('How many bytes is 1.5 GB?'), { size: '1.5 GB' }, 'a size written as text stays text');
});

test('arguments: URLs, e-mails, ISO dates and durations, UUIDs', async (t) => {
  t.like(await inputOf('Extract the links from “<a href="/about">About</a>” on https://example.com/'), {
    html: '<a href="/about">About</a>',
    baseUrl: 'https://example.com/',
  });
  t.like(await inputOf('Validate the email address ops+alerts@example.org'), { email: 'ops+alerts@example.org' });
  t.like(await inputOf('How many days from 2024-01-31 to 2024-03-01T12:00:00Z?'), { start: '2024-01-31', end: '2024-03-01T12:00:00Z' });
  t.like(await inputOf('Add the duration P1M to the date 2024-01-31'), { date: '2024-01-31', duration: 'P1M' });
  t.like(await inputOf('Validate the UUID c232ab00-9414-11ec-b3c8-9f6bdeced846'), { uuid: 'c232ab00-9414-11ec-b3c8-9f6bdeced846' });
});

test('arguments: enums named in the prompt, booleans, lists and JSON', async (t) => {
  t.like(await inputOf('Hash "abc" with SHA-512 and give the digest as base64'), { algorithm: 'sha512', encoding: 'base64', text: 'abc' });
  t.like(await inputOf('Convert "user account id" to snake case'), { to: 'snake', text: 'user account id' });
  t.like(await inputOf('Generate a password without symbols and with exclude ambiguous'), { symbols: false, excludeAmbiguous: true });
  t.like(await inputOf('Convert the CSV "a;b\\n1;2" to JSON with no header, delimiter semicolon'), { header: false, delimiter: 'semicolon' });
  t.like(await inputOf('Which of the paths "src/a.ts", "src/b/c.ts" and "README.md" match the glob pattern "src/**/*.ts"?'), {
    patterns: ['src/**/*.ts'],
    paths: ['src/a.ts', 'src/b/c.ts', 'README.md'],
  });
  t.like(await inputOf('Latency percentiles of 120, 85, 240 and 95 ms'), { values: [120, 85, 240, 95] });
  t.like(await inputOf('Diff {"a":1} against {"a":2}'), { before: { a: 1 }, after: { a: 2 } });
});

test('arguments: schema defaults fill what the prompt does not say', async (t) => {
  t.deepEqual(await inputOf('What is the SHA-256 hash of "abc"?'), { algorithm: 'sha256', text: 'abc', encoding: 'hex', inputEncoding: 'utf8' });
  t.like(await inputOf('Slugify "Hello World"'), { separator: '-', lowercase: true });
});

test('explicit parameters win over the prompt and can supply a missing required one', async (t) => {
  t.like(await inputOf('What is the SHA-256 hash of "abc"?', { explicitParameters: { algorithm: 'md5' } }), { algorithm: 'md5', text: 'abc' });
  const tools = (await exampleLlmTools()).filter((x) => x.name === 'slugify');
  const { steps } = await run('make a slug please', { tools, explicitParameters: { text: 'Ça va, 2024?', maxLength: 5 } });
  t.deepEqual(steps[0].input, { text: 'Ça va, 2024?', maxLength: 5, separator: '-', lowercase: true });
  t.is((steps[0].result.output as { slug: string }).slug, 'ca-va');
});

test('a missing required parameter means no call and an honest answer naming it', async (t) => {
  const calls: string[] = [];
  const { steps, text } = await run('Please hash something for me with SHA-512', {
    callTool: async (name) => {
      calls.push(name);
      return { executionTimeMs: 0 };
    },
  });
  t.deepEqual(calls, []);
  t.deepEqual(steps, []);
  t.regex(text, /hashText/);
  t.regex(text, /required parameter "text"/);
});

test('nothing fitting means no call and a plain answer', async (t) => {
  const { steps, text } = await run('Tell me a joke about penguins');
  t.deepEqual(steps, []);
  t.regex(text, /None of the available tools/);
});

test('a prompt asking for two things calls two tools, within maxSteps', async (t) => {
  const prompt = 'Hash the text "hello" with SHA-512, then turn "Hello World" into a URL slug.';
  const both = await run(prompt);
  t.deepEqual(
    both.steps.map((s) => [s.toolName, (s.input as { text: string }).text]),
    [
      ['hashText', 'hello'],
      ['slugify', 'Hello World'],
    ],
  );
  t.regex(both.text, /I ran hashText.*\nI ran slugify/s);
  t.is((await run(prompt, { maxSteps: 1 })).steps.length, 1);
});

test('events: tool.started, tool.completed, then the answer as several message.delta chunks; usage in words', async (t) => {
  const { events, text, usage, steps, provider, model, temperature } = await run('Slugify "Hello World"');
  t.deepEqual(
    events.slice(0, 2).map((e) => e.type),
    ['tool.started', 'tool.completed'],
  );
  t.deepEqual(events[0], { type: 'tool.started', toolCallId: 'offline_call_1', toolName: 'slugify', input: steps[0].input });
  const deltas = events.slice(2);
  t.true(deltas.length >= 2 && deltas.every((e) => e.type === 'message.delta'));
  t.is(deltas.map((e) => (e as { text: string }).text).join(''), text);
  t.regex(text, /^I ran slugify: \{"slug":"hello-world"/);
  t.true(usage.inputTokens > 100, 'the tool schemas count as input');
  t.is(usage.outputTokens, text.split(/\s+/).filter(Boolean).length);
  t.is(usage.totalTokens, usage.inputTokens + usage.outputTokens);
  t.deepEqual({ provider, model, temperature }, { provider: 'offline', model: 'offline-agent-v1', temperature: 0 });
});

test('determinism: the same request gives the same calls and answer', async (t) => {
  const a = await run('Generate 2 version 4 UUIDs in uppercase', { callTool: async () => ({ output: { ok: 1 }, executionTimeMs: 1 }) });
  const b = await run('Generate 2 version 4 UUIDs in uppercase', { callTool: async () => ({ output: { ok: 1 }, executionTimeMs: 1 }) });
  t.deepEqual(a, b);
  t.like(a.steps[0].input, { count: 2, version: 4, uppercase: true });
});

test('an aborted signal stops the run', async (t) => {
  const controller = new AbortController();
  controller.abort(new Error('client went away'));
  await t.throwsAsync(run('Slugify "x"', { signal: controller.signal }), { message: 'client went away' });
});

// ---- judge ----

const slugSpec = async (): Promise<LlmToolSpec[]> => (await exampleLlmTools()).filter((x) => x.name === 'slugify');
const step = (result: Partial<ToolCallResult>, toolName = 'slugify'): AgentStep => ({
  toolCallId: 'c1',
  toolName,
  input: { text: 'Hello World' },
  result: { executionTimeMs: 1, ...result },
});

test('judge: a real run on topic passes, and says why', async (t) => {
  const prompt = 'Use slugify to turn "Hello World, 2024 edition!" into a URL slug.';
  const r = await run(prompt);
  const v = await offline.judge({
    prompt,
    finalText: r.text,
    steps: r.steps,
    tools: await exampleLlmTools(),
    assertions: [{ type: 'toolCalled', tool: 'slugify' }, { type: 'outputContains', text: 'HELLO-WORLD-2024' }, { type: 'noToolErrors' }],
  });
  t.is(v.verdict, 'pass', v.reason);
  t.regex(v.reason, /^Pass: slugify was called, no tool call failed, the output is non-empty, it is on topic .*all 3 assertion\(s\) held\.$/);
  t.deepEqual(
    v.assertionResults.map((a) => a.passed),
    [true, true, true],
  );
  t.deepEqual(v.usage, { inputTokens: 0, outputTokens: 0, totalTokens: 0 });
  t.is(v.model, 'offline-agent-v1');
});

test('judge: fails on a tool error, on no tool call, off topic, and on failed assertions', async (t) => {
  const tools = await slugSpec();
  const prompt = 'Turn "Hello World" into a URL slug';
  const errored = await offline.judge({
    prompt,
    finalText: 'It failed.',
    steps: [step({ error: { code: 'TOOL_ERROR', message: 'boom' } })],
    tools,
    assertions: null,
  });
  t.is(errored.verdict, 'fail');
  t.regex(errored.reason, /slugify failed with TOOL_ERROR: boom/);

  const none = await offline.judge({ prompt, finalText: 'No tool fits.', steps: [], tools, assertions: null });
  t.is(none.verdict, 'fail');
  t.regex(none.reason, /no tool was called/);

  const offTopic = await offline.judge({
    prompt: 'What is the weather in Paris tomorrow?',
    finalText: 'I ran slugify: {"slug":"x"}',
    steps: [step({ output: { slug: 'x' } })],
    tools,
    assertions: null,
  });
  t.is(offTopic.verdict, 'fail');
  t.regex(offTopic.reason, /off topic/);

  const asserted = await offline.judge({
    prompt,
    finalText: 'I ran slugify: {"slug":"hello-world"}',
    steps: [step({ output: { slug: 'hello-world' } })],
    tools,
    assertions: [{ type: 'toolCalled', tool: 'hashText' }, { type: 'outputContains', text: 'banana' }, { type: 'noToolErrors' }],
  });
  t.is(asserted.verdict, 'fail');
  t.deepEqual(
    asserted.assertionResults.map((a) => a.passed),
    [false, false, true],
  );
  t.regex(asserted.reason, /hashText was not called \(called: slugify\); output does not contain "banana"/);
  t.regex(asserted.reason, /held: slugify was called/);
});
