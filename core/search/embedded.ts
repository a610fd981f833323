/**
 * The default search engine: in-process BM25F over name > description > packageName > category, forgiving typos and
 * partial last words, with no service to run. Our own compact index rather than MiniSearch because MiniSearch could
 * not meet the latency goal at 10,000 tools (see bench/search.ts); tests/search-relevance.test.ts shows it ranks at
 * least as well.
 */
import type { SearchDocument, SearchEngine, SearchHit, SearchQuery, SearchResult } from './engine.js';
import { InvertedIndex } from './inverted-index.js';
import { DEFAULT_RANKING, Ranker, type RankingParams } from './ranker.js';
import type { UsageSource, UsageTable } from './usage.js';
import { wordVectors } from './word-vectors.js';

/** Answers kept per engine (each at most 100 hits of an id and three numbers). */
const ANSWERS_KEPT = 2000;

export type EmbeddedSearchEngine = SearchEngine & {
  /** The same index ranked with other parameters (the sentence encoder's fusion ranks without the word vectors). */
  searchWith(params: RankingParams, query: SearchQuery): SearchResult;
};

/** `usage`: learning from use (usage.ts), read on every search; none: ranking by the tools' words alone. */
export function createEmbeddedSearch(params: RankingParams = DEFAULT_RANKING, usage?: UsageSource): EmbeddedSearchEngine {
  const vectors = params.semanticWeight > 0 ? wordVectors() : null;
  let index = new InvertedIndex(vectors);
  let ranker = new Ranker(index, params, usage);
  /** Rankers of other parameters over the current index (each keeps its own scratch arrays). */
  let others = new Map<RankingParams, Ranker>();
  /** The latest answers (an LRU: a Map keeps insertion order), for the index version and usage table they were ranked on. */
  const answered: { index?: InvertedIndex; version: number; usage?: UsageTable; hits: Map<string, SearchResult> } = { version: -1, hits: new Map() };

  return {
    engine: 'embedded',
    async replaceAll(docs: SearchDocument[]) {
      const next = new InvertedIndex(vectors);
      for (const doc of docs) next.upsert(doc);
      next.dict.settle();
      index = next;
      ranker = new Ranker(next, params, usage);
      others = new Map();
    },
    async upsert(docs: SearchDocument[]) {
      for (const doc of docs) index.upsert(doc);
    },
    async remove(ids: string[]) {
      for (const id of ids) index.remove(id);
    },
    async search(query: SearchQuery): Promise<SearchResult> {
      // Answers are kept while nothing they depend on changed: the index (any upsert or remove bumps its version;
      // a replaceAll makes a new one) and the usage table (a refresh swaps it). The rows shown with the hits (rating,
      // health, description…) are not kept here: the route reads them per request.
      const table = usage?.current();
      if (answered.index !== index || answered.version !== index.version || answered.usage !== table) {
        answered.hits.clear();
        Object.assign(answered, { index, version: index.version, usage: table });
      }
      const key = `${query.limit}\u0000${query.offset ?? 0}\u0000${query.category ?? ''}\u0000${query.q}`;
      let result = answered.hits.get(key);
      if (result) answered.hits.delete(key);
      else result = ranker.search(query);
      answered.hits.set(key, result);
      if (answered.hits.size > ANSWERS_KEPT) answered.hits.delete(answered.hits.keys().next().value!);
      return { total: result.total, hits: result.hits.map((h) => ({ ...h })) };
    },
    searchWith(other: RankingParams, query: SearchQuery): SearchResult {
      let r = others.get(other);
      if (!r) others.set(other, (r = new Ranker(index, other, usage)));
      return r.search(query);
    },
    async rankAmong(docs, q) {
      return rankDocuments(docs, q, params, usage);
    },
    async status() {
      return { ok: true, engine: 'embedded', documents: index.liveCount, detail: `${index.dict.size} terms` };
    },
    async close() {},
  };
}

/**
 * A given set of documents ranked for a query, best first, only those matching a word of it: the embedded engine's
 * index, analyzer and ranking over just these documents (a collection's tools for an MCP endpoint's search_tools,
 * the tools offered to the offline agent). Over the same documents the order is the registry search's (`GET
 * /api/tools/search` with the embedded engine), since word rarity is counted within the set.
 */
export function rankDocuments(docs: SearchDocument[], q: string, params: RankingParams = DEFAULT_RANKING, usage?: UsageSource): SearchHit[] {
  const index = new InvertedIndex(params.semanticWeight > 0 ? wordVectors() : null);
  for (const doc of docs) index.upsert(doc);
  index.dict.settle();
  return new Ranker(index, params, usage).search({ q, limit: Math.max(docs.length, 1) }).hits;
}
