/**
 * The two moments learning from use records (docs/search.md, "Learning from use"): an identified caller's search,
 * and that caller's use of a tool soon after (a run over REST or MCP, or adding it to a collection). Anonymous callers
 * and SEARCH_LEARNING=off record nothing. A failure is logged and never fails the request.
 */
import type { Knex } from 'knex';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { creditSearch, rememberSearch, usageCallerKey } from '../repos/search-usage.js';
import { usageTermsOf } from './usage.js';

export interface LearningDeps {
  db: Knex;
  logger: Logger;
  config: Pick<Config, 'SEARCH_LEARNING' | 'SEARCH_LEARNING_WINDOW_SECONDS'>;
}

export async function recordSearch(deps: LearningDeps, userId: string | undefined, q: string): Promise<void> {
  if (!userId || deps.config.SEARCH_LEARNING !== 'on') return;
  try {
    await rememberSearch(deps.db, usageCallerKey(userId), usageTermsOf(q));
  } catch (err) {
    deps.logger.warn({ err }, 'search learning: could not keep the search');
  }
}

export async function recordUse(deps: LearningDeps, userId: string | undefined, toolId: string): Promise<void> {
  if (!userId || deps.config.SEARCH_LEARNING !== 'on') return;
  try {
    await creditSearch(deps.db, usageCallerKey(userId), toolId, deps.config.SEARCH_LEARNING_WINDOW_SECONDS);
  } catch (err) {
    deps.logger.warn({ err }, 'search learning: could not record the use');
  }
}
