/** What worker tasks need; built by worker/main.ts (or a test, or the CLI). */
import type { Knex } from 'knex';
import type { BootedConfig, Config } from '../core/config.js';
import type { Logger } from '../core/logger.js';
import type { SandboxRunner } from '../sandbox/types.js';
import type { LlmProvider } from '../core/llm/provider.js';
import type { Metrics } from '../core/metrics.js';

export interface WorkerDeps {
  config: BootedConfig;
  db: Knex;
  logger: Logger;
  sandbox: SandboxRunner;
  llm: LlmProvider;
  /** The worker process's Prometheus registry (core/metrics.ts); absent in the CLI. */
  metrics?: Metrics;
}
