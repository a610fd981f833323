/**
 * The SearchEngine on a Meilisearch server (chosen when MEILI_HOST is set): for deployments that want search in its
 * own process, shared by several API instances. The only module that imports the `meilisearch` client. Every write
 * waits for its task, so a search right after replaceAll/upsert/remove sees the change.
 */
import { Meilisearch, MeilisearchApiError, type EnqueuedTaskPromise, type Settings } from 'meilisearch';
import type { SearchDocument, SearchEngine, SearchQuery, SearchResult } from './engine.js';
import { nameWords, SEARCH_STOP_WORDS, synonymGroups } from './analyzer.js';
import { withoutInstruction } from './instruction.js';

export interface MeiliSearchOptions {
  host: string;
  apiKey?: string;
  indexName?: string;
}

const TASK_TIMEOUT_MS = 120_000;
const BATCH = 5_000;

const SETTINGS: Settings = {
  // Weight order: name (and its camelCase words), description, parameters (input schema text), packageName, category.
  searchableAttributes: ['name', 'nameWords', 'description', 'parameters', 'packageName', 'category'],
  filterableAttributes: ['category', 'healthStatus'],
  sortableAttributes: ['qualityScore'],
  rankingRules: ['words', 'typo', 'proximity', 'attribute', 'sort', 'exactness', 'qualityScore:desc'],
  typoTolerance: { enabled: true, minWordSizeForTypos: { oneTypo: 4, twoTypos: 8 } },
  stopWords: [...SEARCH_STOP_WORDS],
  // Page-based search reports an exact totalHits only up to this many matches.
  pagination: { maxTotalHits: 50_000 },
  // The embedded engine's synonym groups, each word mapped to the others.
  synonyms: Object.fromEntries(synonymGroups().flatMap((g) => g.map((w) => [w, g.filter((o) => o !== w)]))),
};

/** Meilisearch ids allow only [A-Za-z0-9_-]; tool ids are opaque, so the primary key is their base64url form. */
const keyOf = (id: string) => Buffer.from(id, 'utf8').toString('base64url');

interface MeiliDoc extends SearchDocument {
  key: string;
  nameWords: string;
}

const toMeili = (doc: SearchDocument): MeiliDoc => ({
  ...doc,
  parameters: doc.parameters ?? '',
  key: keyOf(doc.id),
  nameWords: nameWords(doc.name),
});

async function settle(task: EnqueuedTaskPromise, allow: string[] = []): Promise<void> {
  const done = await task.waitTask({ timeout: TASK_TIMEOUT_MS });
  if (done.status === 'succeeded' || (done.error && allow.includes(done.error.code))) return;
  throw new Error(`Meilisearch task ${done.type} ${done.status}: ${done.error?.message ?? 'no detail'}`);
}

export function createMeiliSearch(opts: MeiliSearchOptions): SearchEngine {
  const client = new Meilisearch({ host: opts.host, apiKey: opts.apiKey });
  const indexName = opts.indexName ?? 'tools';
  let ready: Promise<void> | undefined;

  const prepareIndex = async (uid: string): Promise<void> => {
    await settle(client.createIndex(uid, { primaryKey: 'key' }), ['index_already_exists']);
    await settle(client.index(uid).updateSettings(SETTINGS));
  };
  /** Creates the index and applies settings once per process (on first use, never at import). */
  const ensureIndex = (): Promise<void> => {
    ready ??= prepareIndex(indexName).catch((err) => {
      ready = undefined;
      throw err;
    });
    return ready;
  };
  const addAll = async (uid: string, docs: SearchDocument[]): Promise<void> => {
    for (let i = 0; i < docs.length; i += BATCH) {
      await settle(client.index<MeiliDoc>(uid).addDocuments(docs.slice(i, i + BATCH).map(toMeili)));
    }
  };

  return {
    engine: 'meilisearch',

    /** Builds a fresh index beside the live one and swaps them, so searches never see a half-built index. */
    async replaceAll(docs) {
      await ensureIndex();
      const next = `${indexName}_next`;
      await client.deleteIndexIfExists(next);
      await prepareIndex(next);
      await addAll(next, docs);
      await settle(client.swapIndexes([{ indexes: [indexName, next], rename: false }]));
      await settle(client.deleteIndex(next));
    },

    async upsert(docs) {
      await ensureIndex();
      await addAll(indexName, docs);
    },

    async remove(ids) {
      if (ids.length === 0) return;
      await ensureIndex();
      await settle(client.index(indexName).deleteDocuments(ids.map(keyOf)));
    },

    async search(query: SearchQuery): Promise<SearchResult> {
      if (!/[\p{L}\p{N}]/u.test(query.q)) return { total: 0, hits: [] };
      await ensureIndex();
      const filter = ['healthStatus != BROKEN'];
      if (query.category) filter.push(`category = ${JSON.stringify(query.category)}`);
      const offset = query.offset ?? 0;
      // One page of offset+limit hits gives an exact totalHits (offset/limit paging only estimates it).
      const res = await client.index<MeiliDoc>(indexName).search(withoutInstruction(query.q), {
        filter,
        page: 1,
        hitsPerPage: offset + query.limit,
        attributesToRetrieve: ['id'],
        showRankingScore: true,
        matchingStrategy: 'frequency',
      });
      const hits = res.hits.slice(offset).map((h) => ({ id: h.id, score: h._rankingScore ?? 0 }));
      return { total: res.totalHits, hits };
    },

    async status() {
      try {
        await client.health();
      } catch (err) {
        return { ok: false, engine: 'meilisearch', documents: 0, detail: (err as Error).message };
      }
      try {
        const stats = await client.index(indexName).getStats();
        return { ok: true, engine: 'meilisearch', documents: stats.numberOfDocuments, detail: opts.host };
      } catch (err) {
        const missing = err instanceof MeilisearchApiError && err.cause?.code === 'index_not_found';
        return { ok: missing, engine: 'meilisearch', documents: 0, detail: (err as Error).message };
      }
    },

    async close() {},
  };
}
