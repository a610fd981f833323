/** What the API needs from the outside world; built by api/server.ts (or a test) and passed to createApp. */
import type { Knex } from 'knex';
import type { BootedConfig } from '../core/infra/config.js';
import type { Logger } from '../core/infra/logger.js';
import type { Notifier } from '../core/infra/notify.js';
import type { SearchEngine } from '../core/search/engine.js';
import type { UsageSource } from '../core/search/usage.js';
import type { SearchLearning } from '../core/search/learning.js';
import type { RateLimiter } from './middleware/rate-limit.js';
import type { CallerCache } from '../core/auth/caller-cache.js';
import type { ToolCache } from '../core/tools/tool-cache.js';
import type { LlmProvider } from '../core/llm/provider.js';
import type { Metrics } from '../core/infra/metrics.js';

export interface AppDeps {
  config: BootedConfig;
  db: Knex;
  logger: Logger;
  notifier: Notifier;
  search: SearchEngine;
  /** Learning from use: the in-memory table of past searches and the tools run after them (core/search/usage-sync.ts). */
  searchUsage: UsageSource;
  /** Records identified callers' searches and the tools they then use (core/search/learning.ts). */
  learning: SearchLearning;
  rateLimiter: RateLimiter;
  callers: CallerCache;
  tools: ToolCache;
  llm: LlmProvider;
  /** This process's Prometheus registry (core/infra/metrics.ts). */
  metrics: Metrics;
  /**
   * Aborted when the process begins a graceful shutdown: a request waiting for an execution answers at once with what
   * it has (the execution id, to poll) instead of being cut off with no answer.
   */
  shutdown: AbortSignal;
}
