/**
 * Picks the search engine from config: Meilisearch when MEILI_HOST is set, else the embedded in-process engine, with
 * a sentence encoder in a worker thread when SEARCH_ENCODER=use.
 */
import type { SearchEngine } from './engine.js';
import { createEmbeddedSearch } from './embedded.js';
import { createEncodedSearch } from './encoded.js';
import { createMeiliSearch } from './meilisearch.js';
import { createSentenceEncoder } from './sentence-encoder.js';

export type { SearchDocument, SearchEngine, SearchHit, SearchQuery, SearchResult, SearchStatus } from './engine.js';

export function createSearchEngine(config: { MEILI_HOST?: string; MEILI_API_KEY?: string; SEARCH_ENCODER?: 'none' | 'use' }): SearchEngine {
  if (config.MEILI_HOST) return createMeiliSearch({ host: config.MEILI_HOST, apiKey: config.MEILI_API_KEY || undefined });
  return config.SEARCH_ENCODER === 'use' ? createEncodedSearch(createSentenceEncoder()) : createEmbeddedSearch();
}
