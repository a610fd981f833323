/**
 * Picks the LLM provider from config: the OpenAI-compatible one when LLM_BASE_URL is set, else the offline one.
 */
import type { Config } from '../infra/config.js';
import { createOfflineProvider } from './offline/index.js';
import { createOpenAiCompatibleProvider } from './openai-compatible.js';
import type { LlmProvider } from './provider.js';

export type LlmConfig = Pick<Config, 'LLM_BASE_URL' | 'LLM_API_KEY' | 'LLM_MODEL' | 'LLM_EMBEDDING_MODEL'> & Partial<Pick<Config, 'LLM_MODELS'>>;

export function createLlmProvider(config: LlmConfig): LlmProvider {
  if (!config.LLM_BASE_URL) return createOfflineProvider();
  return createOpenAiCompatibleProvider({
    baseUrl: config.LLM_BASE_URL,
    apiKey: config.LLM_API_KEY,
    model: config.LLM_MODEL,
    models: config.LLM_MODELS,
    embeddingModel: config.LLM_EMBEDDING_MODEL,
  });
}

export type * from './provider.js';
export { LlmError, llmLogFields } from './llm-error.js';
export { checkAssertions, withRunBudgets } from './assertions.js';
export { cosine, mostSimilar } from './similarity.js';
export { llmToolNames } from './tool-names.js';
