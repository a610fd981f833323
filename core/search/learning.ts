/**
 * The two moments learning from use records (docs/search.md, "Learning from use"): an identified caller's search,
 * and that caller's use of a tool soon after (a run over REST or MCP, or adding it to a collection). Anonymous callers
 * and SEARCH_LEARNING=off record nothing. A failure is logged and never fails the request.
 *
 * A search costs the request nothing but a Map entry: each process keeps its callers' latest query and writes them
 * all to Postgres in one statement every FLUSH_MS (the latest per caller; its terms are analysed then), so the search
 * route stays as cheap as before. A use first writes this process's pending searches, then credits the caller's
 * latest search from Postgres, wherever it was made.
 */
import type { Knex } from 'knex';
import type { Config } from '../infra/config.js';
import type { Logger } from '../infra/logger.js';
import { creditSearch, rememberSearches, usageCallerKey } from '../repos/search-usage.js';
import { usageTermsOf } from './usage.js';

const FLUSH_MS = 100;

export interface SearchLearning {
  /** Notes an identified caller's search (userId undefined: anonymous, nothing kept). */
  search(userId: string | undefined, q: string): void;
  /** A use of the tool by the caller: a vote for it on their latest search's terms, if that was recent enough. */
  use(userId: string | undefined, toolId: string): Promise<void>;
  /** Writes the pending searches now. */
  flush(): Promise<void>;
  stop(): Promise<void>;
}

export function createSearchLearning(db: Knex, config: Pick<Config, 'SEARCH_LEARNING' | 'SEARCH_LEARNING_WINDOW_SECONDS'>, logger: Logger): SearchLearning {
  const on = config.SEARCH_LEARNING === 'on';
  let pending = new Map<string, string>();
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> = Promise.resolve();

  const flush = (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (pending.size === 0) return writing;
    const batch = pending;
    pending = new Map();
    const rows = [...batch].map(([userId, q]) => ({ caller: usageCallerKey(userId), terms: usageTermsOf(q) })).filter((r) => r.terms.length > 0);
    writing = writing.then(() => rememberSearches(db, rows)).catch((err) => logger.warn({ err }, 'search learning: could not keep the searches'));
    return writing;
  };

  return {
    search(userId, q) {
      if (!on || !userId) return;
      pending.delete(userId);
      pending.set(userId, q);
      timer ??= setTimeout(() => void flush(), FLUSH_MS);
    },
    async use(userId, toolId) {
      if (!on || !userId) return;
      await flush();
      try {
        await creditSearch(db, usageCallerKey(userId), toolId, config.SEARCH_LEARNING_WINDOW_SECONDS);
      } catch (err) {
        logger.warn({ err }, 'search learning: could not record the use');
      }
    },
    flush,
    async stop() {
      await flush();
    },
  };
}
