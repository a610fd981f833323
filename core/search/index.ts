/**
 * Picks the search engine from config: Meilisearch when MEILI_HOST is set, else the embedded in-process engine, with
 * a sentence encoder in a worker thread when SEARCH_ENCODER=use.
 */
import type { SearchEngine } from './engine.js';
import { createEmbeddedSearch } from './embedded.js';
import { createEncodedSearch } from './encoded.js';
import { createMeiliSearch } from './meilisearch.js';
import { createSentenceEncoder } from './sentence-encoder.js';
import type { UsageSource } from './usage.js';

export type { SearchDocument, SearchEngine, SearchHit, SearchQuery, SearchResult, SearchStatus } from './engine.js';

/** `usage`: learning from use (usage.ts), for the embedded engine only (not with SEARCH_ENCODER=use or Meilisearch). */
export function createSearchEngine(
  config: { MEILI_HOST?: string; MEILI_API_KEY?: string; SEARCH_ENCODER?: 'none' | 'use' },
  usage?: UsageSource,
): SearchEngine {
  if (config.MEILI_HOST) return createMeiliSearch({ host: config.MEILI_HOST, apiKey: config.MEILI_API_KEY || undefined });
  return config.SEARCH_ENCODER === 'use' ? createEncodedSearch(createSentenceEncoder()) : createEmbeddedSearch(undefined, usage);
}
