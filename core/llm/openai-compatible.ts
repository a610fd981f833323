/**
 * The LLM port on any OpenAI-compatible server (OpenAI, vLLM, Ollama, LM Studio, LiteLLM...), through the Vercel AI
 * SDK's OpenAI provider on the chat-completions API, the one such servers speak. The only importer of
 * `@ai-sdk/openai`. Vendor failures become an LlmError whose message never holds the API key.
 *
 * The SDK (about 1 MB of modules, 0.3 s of a process's start) is not loaded at import: a service without LLM_BASE_URL
 * never loads it, and one with it loads it in the background once the provider is made.
 */
import type { JSONSchema7, LanguageModelUsage, ToolSet } from 'ai';
import { z } from 'zod';
import { assertToolNames, withExplicitParameters } from './agent-support.js';
import { checkAssertions, describeAssertions } from './assertions.js';
import { judgePrompt, JUDGE_SYSTEM, scenariosPrompt, SCENARIOS_SYSTEM, SEARCH_KEYWORDS_QUERY_CHARS, SEARCH_KEYWORDS_SYSTEM } from './prompts.js';
import { LlmError, publicLlmMessage } from './llm-error.js';
import type { AgentResult, AgentStep, GeneratedScenario, LlmProvider, ToolCallResult, Usage } from './provider.js';

export interface OpenAiCompatibleOptions {
  baseUrl: string;
  apiKey?: string;
  model: string;
  /** Further models an agent may name (`AgentRunOptions.model`), besides `model` itself. */
  models?: string[];
  embeddingModel: string;
  /** Sampling temperature of agent runs and judgements (default 0, for repeatable runs). */
  temperature?: number;
  /** Retries of a failed vendor call (429, 5xx); the SDK backs off exponentially. Default 2. */
  maxRetries?: number;
}

const verdictSchema = z.object({ verdict: z.enum(['pass', 'fail']), reason: z.string() });
const scenariosSchema = z.object({
  scenarios: z.array(z.object({ prompt: z.string(), name: z.string(), description: z.string(), tags: z.array(z.string()) })),
});

type Sdk = typeof import('ai') & Pick<typeof import('@ai-sdk/openai'), 'createOpenAI'>;
let sdkLoading: Promise<Sdk> | undefined;
const loadSdk = (): Promise<Sdk> =>
  (sdkLoading ??= Promise.all([import('ai'), import('@ai-sdk/openai')]).then(([ai, { createOpenAI }]) => ({ ...ai, createOpenAI })));

const usageOf = (u: LanguageModelUsage | undefined): Usage => {
  const inputTokens = u?.inputTokens ?? 0;
  const outputTokens = u?.outputTokens ?? 0;
  return { inputTokens, outputTokens, totalTokens: u?.totalTokens ?? inputTokens + outputTokens };
};

/** The URL without user info, query or fragment. */
function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(unparsable LLM_BASE_URL)';
  }
}

export function createOpenAiCompatibleProvider(options: OpenAiCompatibleOptions): LlmProvider {
  const { baseUrl, model: chatModel, embeddingModel } = options;
  // The default model is always nameable: an agent without a model runs on it anyway.
  const chatModels = [...new Set([chatModel, ...(options.models ?? [])])];
  const apiKey = options.apiKey ?? '';
  const temperature = options.temperature ?? 0;
  const maxRetries = options.maxRetries ?? 2;
  // `apiKey: ''` would make the SDK look for OPENAI_API_KEY; servers without auth get a placeholder instead.
  let client: Promise<{ sdk: Sdk; openai: ReturnType<Sdk['createOpenAI']> }> | undefined;
  const connect = () =>
    (client ??= loadSdk().then((sdk) => ({ sdk, openai: sdk.createOpenAI({ baseURL: baseUrl, apiKey: apiKey || 'no-key', name: 'openai-compatible' }) })));
  // Loaded in the background once the provider exists, so that the first call (a search's keyword rewrite has a short
  // budget) does not wait for it; a failure to load surfaces at that call.
  setImmediate(() => void connect().catch(() => undefined));
  // For log lines: credentials in the URL (user:pass@, ?key=) stay out of them.
  const logUrl = safeUrl(baseUrl);
  const info = (model = chatModel) => ({ provider: 'openai-compatible' as const, model, temperature });

  /**
   * Turns whatever the SDK threw into an LlmError: a stable message by status for users, the vendor's words (its
   * answer, or the connection error naming the address) as `detail` for the log, with the key cut out of both.
   */
  function vendorError({ RetryError, APICallError }: Sdk, err: unknown): LlmError {
    const last = RetryError.isInstance(err) ? err.lastError : err;
    const apiError = APICallError.isInstance(last) ? last : undefined;
    const status = apiError?.statusCode;
    // An APICallError without a status never got an answer (refused, reset, DNS, timeout); so did an abort.
    const unreachable = (apiError && status === undefined) || (last instanceof Error && /^(?:AbortError|TimeoutError)$/.test(last.name));
    let said = last instanceof Error ? last.message : String(last);
    if (apiError?.responseBody) said += ` — body: ${apiError.responseBody.slice(0, 500)}`;
    if (apiKey) said = said.split(apiKey).join('[redacted]');
    const detail = `LLM provider at ${logUrl}: ${status ? `HTTP ${status}` : 'request failed'}: ${said}`;
    return new LlmError(publicLlmMessage({ status, reachable: !unreachable }), status, detail);
  }

  async function guarded<T>(call: (c: Awaited<ReturnType<typeof connect>>) => Promise<T>): Promise<T> {
    const c = await connect();
    try {
      return await call(c);
    } catch (err) {
      throw err instanceof LlmError ? err : vendorError(c.sdk, err);
    }
  }

  return {
    provider: 'openai-compatible',
    chatModel,
    chatModels,
    embeddingModel,

    async runAgent(opts): Promise<AgentResult> {
      assertToolNames(opts.tools);
      const model = opts.model ?? chatModel;
      // The routes check agents' models already; this keeps any other path from billing an unlisted model.
      if (!chatModels.includes(model)) throw new LlmError('LLM model not allowed', undefined, `model "${model}" is not in LLM_MODELS`);
      const { sdk, openai } = await connect();
      const { tool, jsonSchema, streamText, stepCountIs } = sdk;
      const steps: AgentStep[] = [];
      // A failure of callTool itself (not the tool's own error) ends the run: it is ours, not the model's.
      const stop = new AbortController();
      let infraError: unknown;
      const tools: ToolSet = {};
      for (const spec of opts.tools) {
        tools[spec.name] = tool({
          description: spec.description,
          inputSchema: jsonSchema<Record<string, unknown>>(spec.inputSchema as JSONSchema7),
          execute: async (modelInput: unknown, { toolCallId }) => {
            const input = withExplicitParameters(spec, modelInput, opts.explicitParameters, opts.tools.length);
            opts.onEvent?.({ type: 'tool.started', toolCallId, toolName: spec.name, input });
            let result: ToolCallResult;
            try {
              result = await opts.callTool(spec.name, input);
            } catch (err) {
              infraError = err;
              stop.abort(err);
              throw err;
            }
            steps.push({ toolCallId, toolName: spec.name, input, result });
            opts.onEvent?.({ type: 'tool.completed', toolCallId, toolName: spec.name, result });
            return result.error ? { error: result.error } : (result.output ?? null);
          },
        });
      }
      const signal = opts.signal ? AbortSignal.any([opts.signal, stop.signal]) : stop.signal;
      const stream = streamText({
        model: openai.chat(model),
        system: opts.system,
        ...(opts.history?.length
          ? { messages: [...opts.history.map((m) => ({ role: m.role, content: m.content })), { role: 'user' as const, content: opts.prompt }] }
          : { prompt: opts.prompt }),
        tools,
        stopWhen: stepCountIs(opts.maxSteps),
        temperature,
        maxRetries,
        abortSignal: signal,
        // Errors arrive as stream parts and are rethrown below; the SDK's default would log the raw vendor body.
        onError: () => {},
      });
      let text = '';
      let stepHasText = false;
      let usage: Usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
      let failure: unknown;
      for await (const part of stream.fullStream) {
        if (part.type === 'start-step') stepHasText = false;
        else if (part.type === 'text-delta' && part.text) {
          // Texts of successive steps are one answer to the reader: keep them apart as paragraphs.
          const delta = !stepHasText && text ? `\n\n${part.text}` : part.text;
          stepHasText = true;
          text += delta;
          opts.onEvent?.({ type: 'message.delta', text: delta });
        } else if (part.type === 'finish') usage = usageOf(part.totalUsage);
        else if (part.type === 'error') failure ??= part.error;
        else if (part.type === 'abort') failure ??= opts.signal?.reason ?? new Error('aborted');
      }
      if (infraError) throw infraError;
      if (failure) throw opts.signal?.aborted ? failure : vendorError(sdk, failure);
      return { ...info(model), text, steps, usage };
    },

    async judge(input) {
      const assertionResults = checkAssertions(input.assertions, input.steps, input.finalText);
      const { output, usage } = await guarded(({ sdk, openai }) =>
        sdk.generateText({
          model: openai.chat(chatModel),
          system: JUDGE_SYSTEM,
          prompt: judgePrompt(input),
          output: sdk.Output.object({ schema: verdictSchema }),
          temperature,
          maxRetries,
        }),
      );
      const held = assertionResults.every((r) => r.passed);
      const extra = describeAssertions(assertionResults);
      return {
        ...info(),
        verdict: output.verdict === 'pass' && held ? 'pass' : 'fail',
        reason: extra ? `${output.reason.trim().replace(/\.$/, '')}; ${extra}.` : output.reason.trim(),
        usage: usageOf(usage),
        assertionResults,
      };
    },

    async embed(texts) {
      if (texts.length === 0) return [];
      const { embeddings } = await guarded(({ sdk, openai }) => sdk.embedMany({ model: openai.embedding(embeddingModel), values: texts, maxRetries }));
      return embeddings;
    },

    async generateScenarios(input): Promise<GeneratedScenario[]> {
      const { output } = await guarded(({ sdk, openai }) =>
        sdk.generateText({
          model: openai.chat(chatModel),
          system: SCENARIOS_SYSTEM,
          prompt: scenariosPrompt(input),
          output: sdk.Output.object({ schema: scenariosSchema }),
          // Variety matters more than repeatability here, and regenerations must differ.
          temperature: Math.max(temperature, 0.8),
          maxRetries,
        }),
      );
      const avoid = new Set(input.avoid.map((p) => p.trim().toLowerCase()));
      return output.scenarios
        .filter((s) => s.prompt.trim() && !avoid.has(s.prompt.trim().toLowerCase()))
        .slice(0, input.count)
        .map((s) => ({
          prompt: s.prompt.trim(),
          name: (s.name.trim() || s.prompt.trim()).slice(0, 60),
          description: s.description.trim(),
          tags: [...new Set(s.tags.map((t) => t.trim().toLowerCase()).filter(Boolean))].slice(0, 8),
        }));
    },

    async searchKeywords(query, signal) {
      const { text, usage } = await guarded(({ sdk, openai }) =>
        sdk.generateText({
          model: openai.chat(chatModel),
          system: SEARCH_KEYWORDS_SYSTEM,
          prompt: query.slice(0, SEARCH_KEYWORDS_QUERY_CHARS),
          temperature: 0,
          maxOutputTokens: 40,
          // A search waits for this call: no retries (the caller falls back to the query's own words).
          maxRetries: 0,
          abortSignal: signal,
        }),
      );
      return { keywords: text, usage: usageOf(usage) };
    },
  };
}
