/**
 * Optional query rewriting (SEARCH_QUERY_REWRITE=llm): before ranking, an agent's long request ("my essay has to be
 * in French by Monday, can you help") goes to the configured language model, which answers with a few keywords
 * naming the capability ("translate text french"). The engine then ranks the keywords followed by the request, so
 * the keywords add the intent words and nothing the request's own words find is lost.
 *
 * Never required: a short query (under `minWords` words) is not rewritten; a failed, refused or late answer (after
 * `timeoutMs`) leaves the query as it was, and rewriting then pauses for `cooldownMs`, so a model that is down costs
 * one wait, not one per search. At most `maxInFlight` rewrites run at once (beyond that, words only), answers are
 * cached by query text, and a query already being rewritten waits for that call instead of making another.
 *
 * The model's answer is only ever used as search words: letters, digits, spaces and hyphens, at most 200 characters.
 */
import { LRUCache } from 'lru-cache';
import { LlmError, llmLogFields, type LlmProvider } from '../llm/index.js';
import type { Logger } from '../infra/logger.js';
import type { SearchEngine, SearchQuery, SearchResult } from './engine.js';

export interface QueryRewriteOptions {
  timeoutMs: number;
  /** Queries with fewer words than this are ranked as they are. */
  minWords?: number;
  cooldownMs?: number;
  maxInFlight?: number;
  cacheSize?: number;
}

const KEYWORDS_CHARS = 200;

/** The model's answer as search words, or null when nothing usable is left. */
export function keywordsOf(answer: string): string | null {
  const words = answer
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s-]+/gu, ' ')
    .split(/\s+/)
    .map((w) => w.replace(/^-+|-+$/g, ''))
    .filter(Boolean);
  let out = '';
  for (const w of words) {
    if (out.length + w.length + 1 > KEYWORDS_CHARS) break;
    out = out ? `${out} ${w}` : w;
  }
  return out || null;
}

export function withQueryRewrite(engine: SearchEngine, llm: LlmProvider, logger: Logger, options: QueryRewriteOptions): SearchEngine {
  const { timeoutMs, minWords = 4, cooldownMs = 30_000, maxInFlight = 8, cacheSize = 2000 } = options;
  const cache = new LRUCache<string, string>({ max: cacheSize });
  const inFlight = new Map<string, Promise<string | null>>();
  let pausedUntil = 0;
  let failuresSinceLog = 0;
  let lastLogAt = 0;

  const noteFailure = (err: unknown) => {
    pausedUntil = Date.now() + cooldownMs;
    failuresSinceLog++;
    // One line per cooldown at most: a model that is down must not write a line per search.
    if (Date.now() - lastLogAt < cooldownMs) return;
    lastLogAt = Date.now();
    const fields = err instanceof LlmError ? llmLogFields(err) : { detail: err instanceof Error ? err.message : String(err) };
    logger.warn(
      { ...fields, failures: failuresSinceLog, pauseMs: cooldownMs },
      'search query rewrite failed; searching by the query as written, and not rewriting for a while',
    );
    failuresSinceLog = 0;
  };

  const ask = async (q: string): Promise<string | null> => {
    try {
      const answer = await llm.searchKeywords(q, AbortSignal.timeout(timeoutMs));
      const keywords = answer && keywordsOf(answer.keywords);
      if (keywords) cache.set(q, keywords);
      return keywords;
    } catch (err) {
      noteFailure(err);
      return null;
    }
  };

  const keywordsFor = (q: string): Promise<string | null> | string | null => {
    const cached = cache.get(q);
    if (cached !== undefined) return cached;
    const pending = inFlight.get(q);
    if (pending) return pending;
    if (Date.now() < pausedUntil || inFlight.size >= maxInFlight) return null;
    const call = ask(q).finally(() => inFlight.delete(q));
    inFlight.set(q, call);
    return call;
  };

  return {
    engine: engine.engine,
    replaceAll: (docs) => engine.replaceAll(docs),
    upsert: (docs) => engine.upsert(docs),
    remove: (ids) => engine.remove(ids),
    status: () => engine.status(),
    close: () => engine.close(),
    // A collection's search_tools is not rewritten (a model call per MCP search); it ranks as the engine does.
    rankAmong: engine.rankAmong?.bind(engine),
    async search(query: SearchQuery): Promise<SearchResult> {
      const q = query.q.trim();
      if (q.split(/\s+/).length < minWords) return engine.search(query);
      const keywords = await keywordsFor(q);
      if (!keywords) return engine.search(query);
      return { ...(await engine.search({ ...query, q: `${keywords} ${query.q}` })), rewrittenQuery: keywords };
    },
  };
}
