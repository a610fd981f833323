/** What worker tasks need; built by worker/main.ts (or a test, or the CLI). */
import type { Knex } from 'knex';
import type { BootedConfig } from '../core/infra/config.js';
import type { Logger } from '../core/infra/logger.js';
import type { SandboxRunner } from '../sandbox/types.js';
import type { LlmProvider } from '../core/llm/provider.js';
import type { Metrics } from '../core/infra/metrics.js';
import type { CancelWatch } from './cancel-watch.js';

export interface WorkerDeps {
  config: BootedConfig;
  db: Knex;
  logger: Logger;
  sandbox: SandboxRunner;
  llm: LlmProvider;
  /** The worker process's Prometheus registry (core/infra/metrics.ts); absent in the CLI. */
  metrics?: Metrics;
  /** Cancels of running executions (worker/cancel-watch.ts); absent in the CLI, whose executions cannot be cancelled. */
  cancels?: CancelWatch;
}
