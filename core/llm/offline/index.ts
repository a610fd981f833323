/**
 * The offline LLM provider, the default when no LLM_BASE_URL is configured: deterministic and honest about what it
 * is (its model names say `offline`). Its agent chooses tools as registry search ranks them (core/search), fills arguments from
 * the prompt by each tool's JSON Schema, calls them and answers from their outputs; its judge applies rules; its
 * embeddings are hashed TF-IDF vectors; its scenarios are built from the tools' schemas and examples.
 */
import { isOnDemand, runOnDemand } from './on-demand.js';
import { compactJson, countWords, withExplicitParameters } from '../agent-support.js';
import { analyzePrompt } from './analysis.js';
import { fillArguments } from './arguments.js';
import { embedText } from './embedding.js';
import { judgeByRules } from './judge.js';
import { generateOfflineScenarios } from './scenarios.js';
import { planCalls } from './tool-choice.js';
import type { AgentResult, AgentRunOptions, AgentStep, LlmProvider, LlmToolSpec } from '../provider.js';

export const OFFLINE_CHAT_MODEL = 'offline-agent-v1';
export const OFFLINE_EMBEDDING_MODEL = 'offline-tfidf-v1';

const INFO = { provider: 'offline' as const, model: OFFLINE_CHAT_MODEL, temperature: 0 };

/** Word pieces per message.delta chunk: the answer streams as it would from a model. */
const WORDS_PER_DELTA = 3;

/** Keys of the explicit parameters that will land in this tool's input (the filler leaves those alone). */
function explicitKeys(spec: LlmToolSpec, opts: AgentRunOptions): Set<string> {
  return new Set(Object.keys(withExplicitParameters(spec, {}, opts.explicitParameters, opts.tools.length)));
}

/** Fills a call's arguments from its clause, or from the whole prompt when the clause lacks a required value. */
function fill(spec: LlmToolSpec, text: string, opts: AgentRunOptions) {
  const skip = explicitKeys(spec, opts);
  const first = fillArguments(spec.inputSchema, analyzePrompt(text), skip);
  if (first.missing.length === 0 || text === opts.prompt) return first;
  const whole = fillArguments(spec.inputSchema, analyzePrompt(opts.prompt), skip);
  return whole.missing.length < first.missing.length ? whole : first;
}

function describeMissing(spec: LlmToolSpec, missing: string[]): string {
  const props = (spec.inputSchema.properties ?? {}) as Record<string, { description?: string }>;
  const list = missing.map((k) => (props[k]?.description ? `"${k}" (${props[k].description!.replace(/\.$/, '')})` : `"${k}"`));
  const plural = missing.length > 1;
  return (
    `I would use ${spec.name}, but the request does not give its required parameter${plural ? 's' : ''} ` +
    `${list.join(' and ')}, so I did not run it. Please provide ${plural ? 'them' : 'it'}, for example in quotes.`
  );
}

function describeStep(step: AgentStep): string {
  const { error, output } = step.result;
  if (error) return `I ran ${step.toolName}, but it failed with ${error.code}: ${error.message}`;
  return `I ran ${step.toolName}: ${compactJson(output ?? null, 400)}`;
}

function noToolAnswer(tools: LlmToolSpec[]): string {
  if (tools.length === 0) return 'No tools are available to me, so I did not run anything.';
  const names =
    tools
      .slice(0, 8)
      .map((t) => t.name)
      .join(', ') + (tools.length > 8 ? ', …' : '');
  return `None of the available tools (${names}) matches this request, so I did not run anything.`;
}

function streamAnswer(text: string, opts: AgentRunOptions): void {
  if (!opts.onEvent) return;
  // Words, with long ones (a JSON output) cut into pieces, as a model's tokens would be.
  const pieces = text.match(/\s*\S{1,24}\s*/g) ?? [];
  for (let i = 0; i < pieces.length; i += WORDS_PER_DELTA) {
    opts.onEvent({ type: 'message.delta', text: pieces.slice(i, i + WORDS_PER_DELTA).join('') });
  }
}

async function runAgent(opts: AgentRunOptions): Promise<AgentResult> {
  if (isOnDemand(opts.tools)) return runOnDemand(opts, runAgent);
  const steps: AgentStep[] = [];
  const notes: string[] = [];
  const fitOf = (spec: LlmToolSpec, text: string) => fillArguments(spec.inputSchema, analyzePrompt(text), explicitKeys(spec, opts)).fit;
  const plan = planCalls(opts.prompt, opts.tools, opts.maxSteps, fitOf);
  for (const [i, call] of plan.entries()) {
    opts.signal?.throwIfAborted();
    const { input, missing } = fill(call.spec, call.text, opts);
    if (missing.length) {
      notes.push(describeMissing(call.spec, missing));
      continue;
    }
    const merged = withExplicitParameters(call.spec, input, opts.explicitParameters, opts.tools.length);
    const toolCallId = `offline_call_${i + 1}`;
    opts.onEvent?.({ type: 'tool.started', toolCallId, toolName: call.spec.name, input: merged });
    const result = await opts.callTool(call.spec.name, merged);
    steps.push({ toolCallId, toolName: call.spec.name, input: merged, result });
    opts.onEvent?.({ type: 'tool.completed', toolCallId, toolName: call.spec.name, result });
  }
  opts.signal?.throwIfAborted();
  const parts = [...steps.map(describeStep), ...notes];
  const text = parts.length ? parts.join('\n') : noToolAnswer(opts.tools);
  streamAnswer(text, opts);
  // Word counts, not model tokens: no model ran. Input is what a model would have read (system, prompt, tools).
  const offered = opts.tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema }));
  const inputTokens = countWords([opts.system ?? '', opts.prompt, JSON.stringify(offered)].join(' '));
  const outputTokens = countWords(text);
  return { ...INFO, text, steps, usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens } };
}

export function createOfflineProvider(): LlmProvider {
  return {
    provider: 'offline',
    chatModel: OFFLINE_CHAT_MODEL,
    // The offline agent ignores `model`; naming another model would only pretend a real one ran.
    chatModels: [OFFLINE_CHAT_MODEL],
    embeddingModel: OFFLINE_EMBEDDING_MODEL,
    runAgent,
    async judge(input) {
      // Rules, no model: nothing is consumed, so usage is zero.
      return { ...INFO, ...judgeByRules(input), usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 } };
    },
    async embed(texts) {
      return texts.map(embedText);
    },
    async generateScenarios(input) {
      return generateOfflineScenarios(input);
    },
    async searchKeywords() {
      return null;
    },
  };
}
