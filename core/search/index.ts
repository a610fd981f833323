/**
 * Picks the search engine from config: Meilisearch when MEILI_HOST is set, the embedded in-process engine otherwise.
 */
import type { SearchEngine } from './engine.js';
import { createEmbeddedSearch } from './embedded.js';
import { createMeiliSearch } from './meilisearch.js';

export type { SearchDocument, SearchEngine, SearchHit, SearchQuery, SearchResult, SearchStatus } from './engine.js';

export function createSearchEngine(config: { MEILI_HOST?: string; MEILI_API_KEY?: string }): SearchEngine {
  return config.MEILI_HOST ? createMeiliSearch({ host: config.MEILI_HOST, apiKey: config.MEILI_API_KEY || undefined }) : createEmbeddedSearch();
}
