/**
 * The OpenAI-compatible provider on the real Vercel AI SDK against a local server that speaks the chat-completions
 * and embeddings wire protocol with scripted answers (tests/helpers/fake-llm-vendor.ts).
 */
import test from 'ava';
import { createOpenAiCompatibleProvider } from '../core/llm/openai-compatible.js';
import { createLlmProvider } from '../core/llm/index.js';
import { LlmError } from '../core/llm/llm-error.js';
import type { AgentEvent, LlmToolSpec, ToolCallResult } from '../core/llm/provider.js';
import { startFakeLlmVendor, type FakeLlmVendor } from './helpers/fake-llm-vendor.js';

const API_KEY = 'sk-test-secret-123456';

const slugify: LlmToolSpec = {
  name: 'slugify',
  description: 'Converts a title into a URL-friendly slug.',
  inputSchema: {
    type: 'object',
    properties: { text: { type: 'string' }, separator: { type: 'string', enum: ['-', '_'] } },
    required: ['text'],
    additionalProperties: false,
  },
};

async function withVendor(fn: (vendor: FakeLlmVendor) => Promise<void>): Promise<void> {
  const vendor = await startFakeLlmVendor();
  try {
    await fn(vendor);
  } finally {
    await vendor.close();
  }
}

const providerFor = (vendor: FakeLlmVendor, extra: { maxRetries?: number; models?: string[] } = {}) =>
  createOpenAiCompatibleProvider({
    baseUrl: vendor.baseUrl,
    apiKey: API_KEY,
    model: 'fake-chat-1',
    embeddingModel: 'fake-embed-1',
    temperature: 0,
    ...extra,
  });

test('createLlmProvider picks the OpenAI-compatible provider when LLM_BASE_URL is set', (t) => {
  const p = createLlmProvider({ LLM_BASE_URL: 'http://127.0.0.1:9/v1', LLM_API_KEY: 'k', LLM_MODEL: 'm', LLM_EMBEDDING_MODEL: 'e' });
  t.is(p.provider, 'openai-compatible');
  t.is(p.chatModel, 'm');
  t.is(p.embeddingModel, 'e');
});

test('runAgent: streamed tool call, explicit parameters win, result sent back, answer streamed, usage summed', (t) =>
  withVendor(async (vendor) => {
    vendor.chat.push(
      {
        toolCalls: [{ id: 'call_1', name: 'slugify', arguments: { text: 'Hello World', separator: '-' }, pieces: 4 }],
        usage: { prompt_tokens: 50, completion_tokens: 12 },
      },
      { text: 'The slug is hello_world, ready to use.', usage: { prompt_tokens: 80, completion_tokens: 9 } },
    );
    const calls: { name: string; input: unknown }[] = [];
    const events: AgentEvent[] = [];
    const result = await providerFor(vendor).runAgent({
      system: 'You are a helpful agent.',
      prompt: 'Slugify "Hello World" with underscores',
      tools: [slugify],
      maxSteps: 10,
      explicitParameters: { separator: '_' },
      callTool: async (name, input): Promise<ToolCallResult> => {
        calls.push({ name, input });
        return { output: { slug: 'hello_world' }, executionTimeMs: 7, executionId: 'exec-1' };
      },
      onEvent: (e) => events.push(e),
    });

    t.deepEqual(calls, [{ name: 'slugify', input: { text: 'Hello World', separator: '_' } }]);
    t.is(result.provider, 'openai-compatible');
    t.is(result.model, 'fake-chat-1');
    t.is(result.temperature, 0);
    t.is(result.text, 'The slug is hello_world, ready to use.');
    t.deepEqual(result.steps, [
      {
        toolCallId: 'call_1',
        toolName: 'slugify',
        input: { text: 'Hello World', separator: '_' },
        result: { output: { slug: 'hello_world' }, executionTimeMs: 7, executionId: 'exec-1' },
      },
    ]);
    t.deepEqual(result.usage, { inputTokens: 130, outputTokens: 21, totalTokens: 151 });

    // Events: the tool call bracketed by started/completed, then the answer as several deltas in order.
    t.deepEqual(
      events.slice(0, 2).map((e) => e.type),
      ['tool.started', 'tool.completed'],
    );
    t.deepEqual((events[0] as any).input, { text: 'Hello World', separator: '_' });
    const deltas = events.filter((e) => e.type === 'message.delta').map((e) => (e as any).text);
    t.true(deltas.length > 3, 'the answer arrives in several chunks');
    t.is(deltas.join(''), result.text);

    // What the vendor received: the tool's schema first, then the tool result as a `tool` message.
    const [first, second] = vendor.chatRequests();
    t.is(first.headers.authorization, `Bearer ${API_KEY}`);
    t.true(first.body.stream);
    t.is(first.body.model, 'fake-chat-1');
    t.is(first.body.messages[0].role, 'system');
    t.deepEqual(first.body.tools[0].function.name, 'slugify');
    t.deepEqual(first.body.tools[0].function.parameters.required, ['text']);
    const toolMessage = second.body.messages.find((m: any) => m.role === 'tool');
    t.is(toolMessage.tool_call_id, 'call_1');
    t.deepEqual(JSON.parse(toolMessage.content), { slug: 'hello_world' });
  }));

test('runAgent: a tool error goes back to the model as an error object', (t) =>
  withVendor(async (vendor) => {
    vendor.chat.push({ toolCalls: [{ name: 'slugify', arguments: '{"text":""}' }] }, { text: 'The tool failed.' });
    const result = await providerFor(vendor).runAgent({
      prompt: 'slugify nothing',
      tools: [slugify],
      maxSteps: 3,
      callTool: async () => ({ error: { code: 'TOOL_ERROR', message: 'text must not be empty' }, executionTimeMs: 2 }),
    });
    t.is(result.steps[0].result.error?.code, 'TOOL_ERROR');
    const toolMessage = vendor.chatRequests()[1].body.messages.find((m: any) => m.role === 'tool');
    t.deepEqual(JSON.parse(toolMessage.content), { error: { code: 'TOOL_ERROR', message: 'text must not be empty' } });
  }));

test('runAgent: a failure of callTool itself ends the run with that error; the model can be overridden', (t) =>
  withVendor(async (vendor) => {
    vendor.chat.push({ toolCalls: [{ name: 'slugify', arguments: { text: 'x' } }] }, { text: 'never asked for' });
    const err = await t.throwsAsync(
      providerFor(vendor, { models: ['agent-model-2'] }).runAgent({
        prompt: 'slugify x',
        tools: [slugify],
        maxSteps: 5,
        model: 'agent-model-2',
        callTool: async () => {
          throw new Error('queue unavailable');
        },
      }),
    );
    t.is(err!.message, 'queue unavailable');
    t.is(vendor.chatRequests().length, 1, 'the model is not asked again');
    t.is(vendor.chatRequests()[0].body.model, 'agent-model-2');
    // A model outside the allow-list is refused before the vendor is asked.
    const refused = await t.throwsAsync(
      providerFor(vendor).runAgent({ prompt: 'hi', tools: [], maxSteps: 1, model: 'agent-model-2', callTool: async () => ({ executionTimeMs: 0 }) }),
      { instanceOf: LlmError, message: 'LLM model not allowed' },
    );
    t.truthy(refused);
    t.is(vendor.chatRequests().length, 1);
  }));

test('runAgent: an aborted signal rejects', (t) =>
  withVendor(async (vendor) => {
    vendor.chat.push({ text: 'hello there' });
    const controller = new AbortController();
    controller.abort(new Error('client went away'));
    await t.throwsAsync(
      providerFor(vendor).runAgent({ prompt: 'hi', tools: [], maxSteps: 1, signal: controller.signal, callTool: async () => ({ executionTimeMs: 0 }) }),
    );
  }));

test('runAgent stops at maxSteps', (t) =>
  withVendor(async (vendor) => {
    for (let i = 0; i < 3; i++) vendor.chat.push({ toolCalls: [{ id: `c${i}`, name: 'slugify', arguments: { text: `x${i}` } }] });
    let n = 0;
    const result = await providerFor(vendor).runAgent({
      prompt: 'loop',
      tools: [slugify],
      maxSteps: 2,
      callTool: async () => ({ output: { n: ++n }, executionTimeMs: 1 }),
    });
    t.is(result.steps.length, 2);
    t.is(vendor.chatRequests().length, 2);
    t.is(vendor.chat.length, 1, 'the third scripted reply was never asked for');
  }));

test('judge returns the scripted verdict and still applies assertions in code', (t) =>
  withVendor(async (vendor) => {
    vendor.chat.push({ text: JSON.stringify({ verdict: 'pass', reason: 'The slug was produced by slugify.' }) });
    vendor.chat.push({ text: JSON.stringify({ verdict: 'pass', reason: 'Looks right.' }) });
    const provider = providerFor(vendor);
    const steps = [{ toolCallId: 'c', toolName: 'slugify', input: { text: 'Hi' }, result: { output: { slug: 'hi' }, executionTimeMs: 1 } }];
    const ok = await provider.judge({
      prompt: 'slugify Hi',
      finalText: 'The slug is hi',
      steps,
      tools: [slugify],
      assertions: [
        { type: 'toolCalled', tool: 'slugify' },
        { type: 'outputContains', text: 'HI' },
      ],
    });
    t.is(ok.verdict, 'pass');
    t.true(ok.reason.startsWith('The slug was produced by slugify'));
    t.deepEqual(
      ok.assertionResults.map((r) => r.passed),
      [true, true],
    );
    t.is(ok.usage.totalTokens, 15);
    t.is(ok.model, 'fake-chat-1');
    const request = vendor.chatRequests()[0].body;
    t.is(request.response_format.type, 'json_schema');
    t.regex(request.messages.at(-1).content, /slugify\(\{"text":"Hi"\}\) → output \{"slug":"hi"\}/);

    const overruled = await provider.judge({
      prompt: 'slugify Hi',
      finalText: 'The slug is hi',
      steps,
      tools: [slugify],
      assertions: [{ type: 'outputContains', text: 'banana' }],
    });
    t.is(overruled.verdict, 'fail', 'a failed assertion fails the run whatever the model says');
    t.regex(overruled.reason, /does not contain "banana"/);
  }));

test('embed returns the vendor vectors in order', (t) =>
  withVendor(async (vendor) => {
    vendor.embeddings.push({
      vectors: [
        [0.1, 0.2],
        [0.3, 0.4],
      ],
    });
    const vectors = await providerFor(vendor).embed(['one', 'two']);
    t.deepEqual(vectors, [
      [0.1, 0.2],
      [0.3, 0.4],
    ]);
    const request = vendor.requests.find((r) => r.path === '/v1/embeddings')!;
    t.deepEqual(request.body.input, ['one', 'two']);
    t.is(request.body.model, 'fake-embed-1');
  }));

test('generateScenarios parses the scripted JSON, trims to count and drops avoided prompts', (t) =>
  withVendor(async (vendor) => {
    const scenarios = [
      { prompt: 'Slugify "Hello World"', name: 'Slug a title', description: 'd1', tags: ['slugify', 'Text'] },
      { prompt: 'Already there', name: 'dup', description: 'd2', tags: [] },
      { prompt: 'Make a slug of "Ça va?"', name: 'x'.repeat(80), description: 'd3', tags: ['slugify'] },
      { prompt: 'One too many', name: 'extra', description: 'd4', tags: [] },
    ];
    vendor.chat.push({ text: JSON.stringify({ scenarios }) });
    const out = await providerFor(vendor).generateScenarios({
      collection: { name: 'Text', description: null },
      tools: [{ ...slugify, healthExample: { params: { text: 'Hello' } } }],
      count: 2,
      avoid: ['already there'],
      attempt: 1,
    });
    t.deepEqual(
      out.map((s) => s.prompt),
      ['Slugify "Hello World"', 'Make a slug of "Ça va?"'],
    );
    t.deepEqual(out[0].tags, ['slugify', 'text']);
    t.is(out[1].name.length, 60);
    const sent = vendor.chatRequests()[0].body.messages.at(-1).content as string;
    t.regex(sent, /already there/);
    t.regex(sent, /attempt 2/);
    t.regex(sent, /"text":"Hello"/);
  }));

test('a vendor 401 surfaces as a clear LlmError without the API key', (t) =>
  withVendor(async (vendor) => {
    vendor.chat.push({ error: { status: 401, message: `Incorrect API key provided: ${API_KEY}.` } });
    const err = await t.throwsAsync(
      providerFor(vendor, { maxRetries: 0 }).runAgent({ prompt: 'hi', tools: [slugify], maxSteps: 2, callTool: async () => ({ executionTimeMs: 0 }) }),
      { instanceOf: LlmError },
    );
    t.is(err!.vendorStatus, 401);
    t.is(err!.message, 'LLM provider rejected the request (status 401)');
    t.regex(err!.detail!, /HTTP 401/);
    t.regex(err!.detail!, /Incorrect API key provided/);
    t.false(err!.message.includes(API_KEY));
    t.false(err!.detail!.includes(API_KEY));
  }));

test('a vendor 500 surfaces as a clear LlmError, after the configured retries', (t) =>
  withVendor(async (vendor) => {
    vendor.chat.push({ error: { status: 500, message: 'The server had an error' } });
    vendor.embeddings.push({ error: { status: 500, message: 'embedding backend down' } });
    const provider = providerFor(vendor, { maxRetries: 0 });
    const judged = await t.throwsAsync(provider.judge({ prompt: 'p', finalText: '', steps: [], tools: [], assertions: null }), { instanceOf: LlmError });
    t.is(judged!.message, 'LLM provider unavailable (status 500)');
    t.regex(judged!.detail!, /HTTP 500: The server had an error/);
    const embedded = await t.throwsAsync(provider.embed(['x']), { instanceOf: LlmError });
    t.regex(embedded!.detail!, /embedding backend down/);
    t.false(embedded!.detail!.includes(API_KEY));
  }));

test('an unreachable server is an LlmError too', async (t) => {
  const vendor = await startFakeLlmVendor();
  await vendor.close();
  const err = await t.throwsAsync(providerFor(vendor, { maxRetries: 0 }).embed(['x']), { instanceOf: LlmError });
  t.is(err!.message, 'LLM provider unavailable');
  t.regex(err!.detail!, /LLM provider at http:\/\/127\.0\.0\.1/);
});
