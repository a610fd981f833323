/**
 * An AI SDK agent that finds a tool in a Toolshed registry and runs it, then the same two tools used directly.
 *
 *   npm start                                          # the registry on :3000, with the example tools
 *   npx tsx clients/registry-tools/examples/agent.ts   # REGISTRY_API_URL overrides http://localhost:3000
 *
 * No LLM vendor is needed: without LLM_BASE_URL the agent's model is a small scripted one (the AI SDK's
 * MockLanguageModelV3) that calls registrySearchTool, then registryExecuteTool with the first result, then answers
 * from what the tool returned. With LLM_BASE_URL (and LLM_API_KEY, LLM_MODEL) set, a real OpenAI-compatible model
 * takes its place and the rest of the code stays the same.
 *
 * In an app, import from '@toolshed/registry-tools' instead of '../src/index.js'.
 */
import { generateText, stepCountIs, type LanguageModel, type Tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { createRegistryTools, type RegistrySearchOutput } from '../src/index.js';

const TASK = 'Make a URL slug for the title "Hello, Toolshed agents!"';

const tools = createRegistryTools({
  apiUrl: process.env.REGISTRY_API_URL || 'http://localhost:3000',
  executorUrl: process.env.REGISTRY_EXECUTOR_URL || undefined,
  apiKey: process.env.REGISTRY_API_KEY || undefined,
});

async function agentModel(): Promise<LanguageModel> {
  if (process.env.LLM_BASE_URL) {
    // Any OpenAI-compatible endpoint; @ai-sdk/openai is the example's dependency, not the package's.
    const { createOpenAI } = await import('@ai-sdk/openai');
    const openai = createOpenAI({ baseURL: process.env.LLM_BASE_URL, apiKey: process.env.LLM_API_KEY ?? '' });
    return openai.chat(process.env.LLM_MODEL || 'gpt-4o-mini');
  }
  return scriptedModel();
}

/** Plays the model's part: search → execute the first hit → answer. It reads the tool results from its prompt. */
function scriptedModel(): LanguageModel {
  const usage = {
    inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: 0, text: 0, reasoning: 0 },
  };
  const call = (toolName: string, input: unknown) => ({
    content: [{ type: 'tool-call' as const, toolCallId: `call-${toolName}`, toolName, input: JSON.stringify(input) }],
    finishReason: { unified: 'tool-calls' as const, raw: undefined },
    usage,
    warnings: [],
  });
  const answer = (text: string) => ({
    content: [{ type: 'text' as const, text }],
    finishReason: { unified: 'stop' as const, raw: undefined },
    usage,
    warnings: [],
  });

  return new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      const results = new Map<string, { type: string; value: unknown }>();
      for (const message of prompt) {
        if (message.role !== 'tool') continue;
        for (const part of message.content) if (part.type === 'tool-result') results.set(part.toolName, part.output as { type: string; value: unknown });
      }
      const searched = results.get('registrySearchTool');
      const executed = results.get('registryExecuteTool');
      if (!searched) return call('registrySearchTool', { query: 'slug url title', limit: 3 });
      if (searched.type !== 'json') return answer(`The search failed: ${String(searched.value)}`);
      const first = (searched.value as RegistrySearchOutput).tools[0];
      if (!executed) {
        if (!first) return answer('The registry has no tool for this.');
        return call('registryExecuteTool', { toolId: first.toolId, params: { text: 'Hello, Toolshed agents!' } });
      }
      if (executed.type !== 'json') return answer(`${first.toolId} failed: ${String(executed.value)}`);
      return answer(`I ran ${first.toolId}; it returned ${JSON.stringify((executed.value as { output: unknown }).output)}`);
    },
  });
}

/** Calls a tool the way the AI SDK does (these two return promises, never streams). */
async function run<I, O>(t: Tool<I, O>, input: I): Promise<O> {
  return (await t.execute!(input, { toolCallId: 'direct', messages: [] })) as O;
}

async function main() {
  const result = await generateText({
    model: await agentModel(),
    tools,
    stopWhen: stepCountIs(5),
    system: 'You can use the Toolshed registry: find a tool with registrySearchTool, then run it with registryExecuteTool.',
    prompt: TASK,
  });
  for (const step of result.steps) {
    for (const c of step.toolCalls) console.log(`→ ${c.toolName} ${JSON.stringify(c.input)}`);
  }
  console.log(`agent: ${result.text}`);

  // Direct use, without a model: the tools are plain async functions too.
  const found = await run(tools.registrySearchTool, { query: 'sha256 hash', category: 'security', limit: 1 });
  console.log(`search: ${found.tools.map((t) => t.toolId).join(', ') || 'nothing'}`);
  if (found.tools[0]) {
    const ran = await run(tools.registryExecuteTool, { toolId: found.tools[0].toolId, params: { text: 'abc' } });
    console.log(`direct: ${ran.toolId} in ${ran.executionTimeMs} ms → ${JSON.stringify(ran.output)}`);
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
