/**
 * The `web` process: HTTP API. Opens the database pool, the LISTEN connection, the search index and the port.
 */
import { setMaxListeners } from 'node:events';
import http from 'node:http';
import { createApp } from './app.js';
import { answerClientError, MAX_HEADER_BYTES } from './client-errors.js';
import type { AppDeps } from './deps.js';
import { createRateLimiter } from './middleware/rate-limit.js';
import type { BootedConfig } from '../core/infra/config.js';
import { createDb } from '../core/infra/db.js';
import type { Logger } from '../core/infra/logger.js';
import { createNotifier } from '../core/infra/notify.js';
import { createSearchEngine } from '../core/search/index.js';
import type { EncodedSearchEngine } from '../core/search/encoded.js';
import { sentenceVectorStore } from '../core/repos/sentence-vectors.js';
import { withQueryRewrite } from '../core/search/query-rewrite.js';
import { startSearchSync, type SearchSync } from '../core/search/sync.js';
import { startUsageSync, type UsageSync } from '../core/search/usage-sync.js';
import { createSearchLearning } from '../core/search/learning.js';
import { bootProcess, closeOnSignals } from '../core/infra/bootstrap.js';
import { startTracing } from '../core/infra/tracing.js';
import { createCallerCache } from '../core/auth/caller-cache.js';
import { createToolCache } from '../core/tools/tool-cache.js';
import { createLlmProvider } from '../core/llm/index.js';
import { createMetrics } from '../core/infra/metrics.js';
import { startMetricsServer, type MetricsServer } from '../core/infra/metrics-server.js';
import { oldestTransactionSeconds, queueStates } from '../core/repos/operations.js';
import { streamStats } from './streams/sse.js';

export interface ApiHandle {
  server: http.Server;
  deps: AppDeps;
  searchSync: SearchSync;
  /** Learning from use: refresh() rebuilds the in-memory table now (tests). */
  searchUsage: UsageSync;
  url: string;
  close(): Promise<void>;
}

/** Builds the API's dependencies on a database URL (tests use this too, with port 0). */
/** How long a graceful shutdown lets requests in flight finish before it cuts their connections. */
const SHUTDOWN_GRACE_MS = 5_000;

export async function startApi(config: BootedConfig, databaseUrl: string, logger: Logger, port = config.PORT): Promise<ApiHandle> {
  const db = createDb(databaseUrl, { max: 20 });
  const notifier = createNotifier(databaseUrl, logger);
  const llm = createLlmProvider(config);
  const searchUsage = await startUsageSync(db, notifier, config, logger);
  const indexed = createSearchEngine(config, searchUsage, sentenceVectorStore(db));
  const search =
    config.SEARCH_QUERY_REWRITE === 'llm' ? withQueryRewrite(indexed, llm, logger, { timeoutMs: config.SEARCH_QUERY_REWRITE_TIMEOUT_MS }) : indexed;
  const searchSync = await startSearchSync(db, notifier, indexed, logger);
  const rateLimiter = createRateLimiter(config, databaseUrl);
  const callers = await createCallerCache(db, notifier);
  const tools = await createToolCache(db, notifier);
  const stopping = new AbortController();
  // Every request waiting for an execution (REST ?wait, MCP calls) listens on this one signal until it answers, and
  // removes its listener then: more than 10 at once is the load, not a leak (it printed MaxListenersExceededWarning).
  setMaxListeners(0, stopping.signal);
  const metrics = createMetrics({
    sseStreamsOpen: () => streamStats(config).streams,
    queue: async () => (await queueStates(db)).map((q) => ({ ...q, oldestWaitingSeconds: q.oldestWaitingSeconds ?? 0 })),
    oldestTransaction: () => oldestTransactionSeconds(db),
    searchEncoder: () => (indexed as Partial<EncodedSearchEngine>).encoderStats?.(),
  });
  const learning = createSearchLearning(db, config, logger);
  const deps: AppDeps = { config, db, logger, notifier, search, searchUsage, learning, rateLimiter, callers, tools, llm, metrics, shutdown: stopping.signal };
  const app = createApp(deps);
  const server = http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, app.callback());
  server.on('clientError', answerClientError);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(port, port === 0 ? '127.0.0.1' : config.HOST, resolve));
  const addr = server.address() as { port: number };
  // METRICS_PORT: /metrics on a port of its own (a private network), not on the public one.
  const metricsServer: MetricsServer | undefined =
    config.METRICS_PORT > 0 ? await startMetricsServer(metrics, { port: config.METRICS_PORT, host: config.HOST, token: config.METRICS_TOKEN }) : undefined;
  return {
    server,
    deps,
    searchSync,
    searchUsage,
    url: `http://127.0.0.1:${addr.port}`,
    async close() {
      // Graceful: take no new connection, answer the requests in flight (a waiting execute answers at once with its
      // execution id: the shutdown signal ends its wait), close connections as they fall idle; whatever is still
      // open after the grace period (a stream) is cut, and its client resumes elsewhere with Last-Event-ID.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      stopping.abort();
      const deadline = Date.now() + SHUTDOWN_GRACE_MS;
      let done = false;
      void closed.then(() => (done = true));
      while (!done && Date.now() < deadline) {
        server.closeIdleConnections();
        await new Promise((r) => setTimeout(r, 50));
      }
      server.closeAllConnections();
      await closed;
      await metricsServer?.close();
      searchSync.stop();
      searchUsage.stop();
      await learning.stop();
      callers.stop();
      tools.stop();
      await Promise.allSettled([notifier.close(), rateLimiter.close(), search.close()]);
      await db.destroy();
    },
  };
}

async function main() {
  const { config, logger, database } = await bootProcess(process.env);
  const tracing = await startTracing(config, 'toolshed-api');
  const api = await startApi(config, database.url, logger);
  logger.info({ url: api.url.replace('127.0.0.1', config.HOST), tracing: tracing.on }, 'API listening');
  closeOnSignals(logger, database, () => api.close(), tracing.close);
}

if (import.meta.url === `file://${process.argv[1]}`) void main();
