/**
 * The search port: one interface, two engines (embedded BM25, Meilisearch). Callers get ranked tool ids;
 * the rows themselves come from Postgres.
 */
import type { Category, HealthStatus } from '../types.js';

/** What the engines index for one tool. */
export interface SearchDocument {
  id: string;
  name: string;
  description: string;
  /**
   * The input schema's parameter names and descriptions as one text (schemaText() in analyzer.ts), indexed as its
   * own field. Optional: a document without it is indexed on the other fields.
   */
  parameters?: string;
  packageName: string;
  category: Category;
  healthStatus: HealthStatus;
  qualityScore: number;
}

export interface SearchQuery {
  q: string;
  category?: Category;
  /** 1..100 */
  limit: number;
  offset?: number;
}

export interface SearchHit {
  id: string;
  score: number;
  /**
   * The embedded engine's BM25F score before meaning re-weighs it (score is relative to the best hit): comparable
   * between two queries over the same documents, as the offline agent compares a clause with its whole prompt.
   */
  lexical?: number;
  /** What learning from use added to score (usage.ts), when it added anything. */
  usage?: number;
}

export interface SearchResult {
  /** Number of matching (non-BROKEN, category-filtered) tools, not only those returned. */
  total: number;
  hits: SearchHit[];
  /** The keywords the query was rewritten into before ranking (SEARCH_QUERY_REWRITE=llm, query-rewrite.ts), if it was. */
  rewrittenQuery?: string;
}

export interface SearchStatus {
  ok: boolean;
  engine: 'embedded' | 'meilisearch';
  documents: number;
  detail?: string;
}

export interface SearchEngine {
  readonly engine: 'embedded' | 'meilisearch';
  /** Replaces the whole index (used at start, from Postgres). */
  replaceAll(docs: SearchDocument[]): Promise<void>;
  /** Adds or replaces documents by id. */
  upsert(docs: SearchDocument[]): Promise<void>;
  remove(ids: string[]): Promise<void>;
  /** BROKEN tools never appear in results. */
  search(query: SearchQuery): Promise<SearchResult>;
  /**
   * Just these documents ranked for a query, best first, only those it finds (a collection's tools for an MCP
   * endpoint's `search_tools`): the way search() ranks the index, with word rarity counted within the set. The
   * embedded engine has it (with or without the sentence encoder); for Meilisearch the caller ranks with the embedded
   * ranking (rankDocuments).
   */
  rankAmong?(docs: SearchDocument[], q: string): Promise<SearchHit[]>;
  status(): Promise<SearchStatus>;
  close(): Promise<void>;
}
