/**
 * Picks the search engine from config: Meilisearch when MEILI_HOST is set, else the embedded in-process engine, with
 * a sentence encoder in a worker thread for queries of four words or more unless SEARCH_ENCODER=none.
 */
import type { SearchEngine } from './engine.js';
import { createEmbeddedSearch } from './embedded.js';
import { createEncodedSearch, type SentenceVectorStore } from './encoded.js';
import { createMeiliSearch } from './meilisearch.js';
import { createSentenceEncoder } from './sentence-encoder.js';
import type { UsageSource } from './usage.js';

export type { SearchDocument, SearchEngine, SearchHit, SearchQuery, SearchResult, SearchStatus } from './engine.js';

/**
 * `usage`: learning from use (usage.ts), for the embedded engine (with or without the encoder; not Meilisearch).
 * `vectors`: where the encoder's tool vectors are kept between restarts (none: each start encodes every tool).
 */
export function createSearchEngine(
  config: { MEILI_HOST?: string; MEILI_API_KEY?: string; SEARCH_ENCODER?: 'none' | 'use' },
  usage?: UsageSource,
  vectors?: SentenceVectorStore,
): SearchEngine {
  if (config.MEILI_HOST) return createMeiliSearch({ host: config.MEILI_HOST, apiKey: config.MEILI_API_KEY || undefined });
  return config.SEARCH_ENCODER === 'use' ? createEncodedSearch(createSentenceEncoder(), { usage, store: vectors }) : createEmbeddedSearch(undefined, usage);
}
