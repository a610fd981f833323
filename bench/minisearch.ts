/**
 * A SearchEngine on MiniSearch, tuned as far as its options allow (same analyzer as the embedded engine, field
 * boosts, prefix on the last term only, typo tolerance by term length). Not the default: it is the yardstick the
 * embedded engine's relevance (MRR) and latency are measured against in tests and bench/search.ts. The only user
 * of the `minisearch` package (a devDependency).
 */
import MiniSearch from 'minisearch';
import { nameTerms, textTerms } from '../core/search/analyzer.js';
import type { SearchDocument, SearchEngine, SearchQuery, SearchResult } from '../core/search/engine.js';

const FIELDS = ['name', 'description', 'packageName', 'category'] as const;
const BOOST = { name: 4, description: 2, packageName: 1, category: 0.5 };

type Stored = Pick<SearchDocument, 'category' | 'healthStatus' | 'qualityScore'>;

function createIndex(): MiniSearch<SearchDocument> {
  return new MiniSearch<SearchDocument>({
    fields: [...FIELDS],
    storeFields: ['category', 'healthStatus', 'qualityScore'],
    tokenize: (text, field) => (field === 'name' || field === 'packageName' ? nameTerms(text) : textTerms(text)),
    processTerm: (term) => term,
    searchOptions: {
      boost: BOOST,
      combineWith: 'OR',
      tokenize: (text) => textTerms(text),
      prefix: (_term, i, terms) => i === terms.length - 1,
      fuzzy: (term) => (term.length >= 8 ? 2 : term.length >= 4 ? 1 : false),
      weights: { fuzzy: 0.45, prefix: 0.6 },
    },
  });
}

export function createMiniSearchEngine(): SearchEngine {
  let index = createIndex();

  const upsert = async (docs: SearchDocument[]): Promise<void> => {
    for (const doc of docs) {
      if (index.has(doc.id)) index.discard(doc.id);
      index.add(doc);
    }
  };

  return {
    engine: 'embedded',
    async replaceAll(docs) {
      index = createIndex();
      index.addAll(docs);
    },
    upsert,
    async remove(ids) {
      for (const id of ids) if (index.has(id)) index.discard(id);
    },
    async search(query: SearchQuery): Promise<SearchResult> {
      if (textTerms(query.q).length === 0) return { total: 0, hits: [] };
      const results = index.search(query.q, {
        filter: (r) => {
          const s = r as unknown as Stored;
          return s.healthStatus !== 'BROKEN' && (!query.category || s.category === query.category);
        },
      });
      results.sort(
        (a, b) =>
          b.score - a.score || (b as unknown as Stored).qualityScore - (a as unknown as Stored).qualityScore || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
      );
      const offset = query.offset ?? 0;
      const hits = results.slice(offset, offset + query.limit).map((r) => ({ id: r.id as string, score: r.score }));
      return { total: results.length, hits };
    },
    async status() {
      return { ok: true, engine: 'embedded', documents: index.documentCount, detail: 'minisearch' };
    },
    async close() {},
  };
}
