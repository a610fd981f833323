/**
 * Prometheus metrics: the one place that names and declares every metric (docs/observability.md lists them). Each
 * process (API, worker) makes its own registry with createMetrics and exposes it on `GET /metrics`; figures that live
 * elsewhere (open SSE streams, the warm pool, the queue in Postgres) are read by callbacks at scrape time, so that
 * neither the sandbox nor the API's stream helper needs to know about metrics.
 *
 * Labels carry closed sets only (route templates, task names, outcome words, error codes): never an id, a path's
 * values, params, env, a key or a user name, so that cardinality stays bounded and nothing secret reaches a scrape.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { safeEqual } from './crypto.js';

/** The queue as Postgres has it: per task, jobs waiting to run, running now, and the age of the oldest waiting. */
export interface QueueRow {
  task: string;
  waiting: number;
  running: number;
  oldestWaitingSeconds: number;
}

/** Figures read when scraped; each is optional (a process reports what it has). */
export interface MetricSources {
  sseStreamsOpen?: () => number;
  queue?: () => Promise<QueueRow[]>;
  /** The age in seconds of the oldest open transaction in the database (0: none). */
  oldestTransaction?: () => Promise<number>;
  /** The sandbox's warm pool: sandboxes ready now, and acquisitions that found it empty since the process started. */
  warmPool?: () => { ready: number; misses: number } | undefined;
  /** The search's sentence encoder (core/search/encoded.ts), when the engine has one. */
  searchEncoder?: () =>
    | {
        ready: boolean;
        queriesEncoded: number;
        queryCacheHits: number;
        queriesWithoutEncoder: number;
        documentsEncoded: number;
        documentsLoaded: number;
        documentsWaiting: number;
      }
    | undefined;
}

export type JobOutcome = 'succeeded' | 'failed' | 'retried';

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const LONG_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];
const HTTP_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

export function createMetrics(sources: MetricSources = {}) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];

  const httpRequests = new Counter({
    name: 'toolshed_http_requests_total',
    help: 'HTTP requests answered, by operation (method and route template) and status',
    labelNames: ['operation', 'status'] as const,
    registers,
  });
  const httpDuration = new Histogram({
    name: 'toolshed_http_request_duration_seconds',
    help: 'Time to answer an HTTP request (to the end of the handler; a stream counts until it closes), by operation',
    labelNames: ['operation'] as const,
    buckets: DURATION_BUCKETS,
    registers,
  });
  const refusals = new Counter({
    name: 'toolshed_limit_refusals_total',
    help: 'Requests refused with 429 by a rate limit or quota, by error code (RATE_LIMITED, QUOTA_EXCEEDED, ...)',
    labelNames: ['code'] as const,
    registers,
  });
  const jobs = new Counter({
    name: 'toolshed_jobs_total',
    help: 'Job attempts ended, by task and outcome (succeeded; retried: failed with attempts left; failed: for good)',
    labelNames: ['task', 'outcome'] as const,
    registers,
  });
  const jobRun = new Histogram({
    name: 'toolshed_job_run_duration_seconds',
    help: 'Run time of one job attempt, by task',
    labelNames: ['task'] as const,
    buckets: LONG_BUCKETS,
    registers,
  });
  const jobWait = new Histogram({
    name: 'toolshed_job_wait_seconds',
    help: 'Time from when a job could run (its run_at) to when an attempt started, by task',
    labelNames: ['task'] as const,
    buckets: LONG_BUCKETS,
    registers,
  });
  const executions = new Counter({
    name: 'toolshed_executions_total',
    help: 'Executions a worker finished, by status (succeeded, failed, timed_out) and error code (none when succeeded)',
    labelNames: ['status', 'code'] as const,
    registers,
  });
  const reruns = new Counter({
    name: 'toolshed_jobs_rerun_total',
    help: "Jobs this worker's reaper freed to run again because the process running them stopped heart-beating (lost lease)",
    labelNames: ['task'] as const,
    registers,
  });
  const sandboxExecutions = new Counter({
    name: 'toolshed_sandbox_executions_total',
    help: 'Tool executions in a sandbox, by outcome (ok, tool_error, timeout, oom, output_too_large, sandbox_error)',
    labelNames: ['outcome'] as const,
    registers,
  });
  const sandboxBoot = new Histogram({
    name: 'toolshed_sandbox_boot_duration_seconds',
    help: 'Time from starting a sandbox to its guest being ready',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
    registers,
  });
  const imports = new Counter({
    name: 'toolshed_imports_total',
    help: 'Package imports ended, by outcome (succeeded, failed)',
    labelNames: ['outcome'] as const,
    registers,
  });
  const scenarioRuns = new Counter({
    name: 'toolshed_scenario_runs_total',
    help: 'Scenario runs ended, by verdict (pass, fail; error: the run itself failed)',
    labelNames: ['verdict'] as const,
    registers,
  });

  const { sseStreamsOpen, queue, warmPool, searchEncoder, oldestTransaction } = sources;
  if (sseStreamsOpen) {
    new Gauge({
      name: 'toolshed_sse_streams_open',
      help: 'Server-sent-event streams open in this API process',
      registers,
      collect() {
        this.set(sseStreamsOpen());
      },
    });
  }
  if (warmPool) {
    new Gauge({
      name: 'toolshed_sandbox_warm_pool_ready',
      help: 'Sandboxes booted and waiting in the warm pool',
      registers,
      collect() {
        this.set(warmPool()?.ready ?? 0);
      },
    });
    new Counter({
      name: 'toolshed_sandbox_warm_pool_misses_total',
      help: 'Sandboxes asked of the warm pool when it was empty (the execution waited for a boot)',
      registers,
      collect() {
        this.reset();
        this.inc(warmPool()?.misses ?? 0);
      },
    });
  }
  if (queue) registerQueueGauges(registers, queue);
  if (oldestTransaction) {
    new Gauge({
      name: 'toolshed_db_oldest_transaction_age_seconds',
      help: 'How long the oldest open transaction in the database has been open (read from pg_stat_activity; 0: none). While one stays open vacuum is held back and the queue slows',
      registers,
      async collect() {
        this.set(await oldestTransaction());
      },
    });
  }
  if (searchEncoder) {
    type EncoderFigure = Exclude<keyof NonNullable<ReturnType<typeof searchEncoder>>, 'ready'>;
    const counter = (name: string, help: string, figure: EncoderFigure) =>
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(searchEncoder()?.[figure] ?? 0);
        },
      });
    new Gauge({
      name: 'toolshed_search_encoder_ready',
      help: 'Whether the search sentence encoder is loaded (1), or still loading, failed or off (0)',
      registers,
      collect() {
        this.set(searchEncoder()?.ready ? 1 : 0);
      },
    });
    counter('toolshed_search_encoder_queries_encoded_total', 'Search queries the sentence encoder encoded (not from its cache)', 'queriesEncoded');
    counter('toolshed_search_encoder_query_cache_hits_total', "Search queries whose sentence vector came from the encoder's cache", 'queryCacheHits');
    counter(
      'toolshed_search_encoder_queries_without_total',
      'Search queries of 4+ words ranked by words alone because the sentence encoder was not loaded (or had failed)',
      'queriesWithoutEncoder',
    );
    counter('toolshed_search_encoder_documents_encoded_total', 'Tool sentence vectors computed by the encoder', 'documentsEncoded');
    counter('toolshed_search_encoder_documents_loaded_total', 'Tool sentence vectors read from Postgres instead of encoded', 'documentsLoaded');
    new Gauge({
      name: 'toolshed_search_encoder_documents_waiting',
      help: 'Tools still without a sentence vector (ranked by their words until they have one)',
      registers,
      collect() {
        this.set(searchEncoder()?.documentsWaiting ?? 0);
      },
    });
  }

  return {
    registry,
    contentType: registry.contentType,
    /** The text of a scrape. */
    scrape: () => registry.metrics(),
    /** One HTTP request answered; `route` is the router's template (undefined: no route matched: `other`). */
    httpRequest(method: string, route: string | undefined, status: number, seconds: number) {
      const operation = route ? `${HTTP_METHODS.has(method) ? method : 'OTHER'} ${route}` : 'other';
      httpRequests.inc({ operation, status: String(status) });
      httpDuration.observe({ operation }, seconds);
    },
    limitRefusal(code: string) {
      refusals.inc({ code: /^[A-Z_]{1,40}$/.test(code) ? code : 'OTHER' });
    },
    jobEnded(task: string, outcome: JobOutcome, runSeconds: number) {
      jobs.inc({ task, outcome });
      jobRun.observe({ task }, runSeconds);
    },
    jobStarted(task: string, waitSeconds: number) {
      jobWait.observe({ task }, Math.max(0, waitSeconds));
    },
    /** `code` is one of ours (a closed set, core/executions/execution-errors.ts), never a tool's text. */
    executionFinished(status: string, code: string | undefined) {
      executions.inc({ status, code: code && /^[A-Z_]{1,40}$/.test(code) ? code : code ? 'OTHER' : 'none' });
    },
    jobRerun(task: string) {
      reruns.inc({ task });
    },
    sandboxExecution(outcome: string) {
      sandboxExecutions.inc({ outcome });
    },
    sandboxBooted(seconds: number) {
      sandboxBoot.observe(seconds);
    },
    importEnded(outcome: 'succeeded' | 'failed') {
      imports.inc({ outcome });
    },
    scenarioRunEnded(verdict: 'pass' | 'fail' | 'error') {
      scenarioRuns.inc({ verdict });
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

function registerQueueGauges(registers: Registry[], queue: () => Promise<QueueRow[]>): void {
  // One query per scrape feeds the three gauges: the first to collect runs it, the others share its answer.
  let pending: Promise<QueueRow[]> | undefined;
  const rows = () => {
    pending ??= queue().finally(() => setImmediate(() => (pending = undefined)));
    return pending;
  };
  const gauge = (name: string, help: string, pick: (r: QueueRow) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['task'] as const,
      registers,
      async collect() {
        this.reset();
        for (const r of await rows()) this.set({ task: r.task }, pick(r));
      },
    });
  gauge('toolshed_jobs_waiting', 'Jobs due to run and not yet taken by a worker, by task (read from Postgres)', (r) => r.waiting);
  gauge('toolshed_jobs_running', 'Jobs taken by a worker now, by task (read from Postgres)', (r) => r.running);
  gauge(
    'toolshed_jobs_oldest_waiting_age_seconds',
    'How long the oldest waiting job has been due, by task (read from Postgres)',
    (r) => r.oldestWaitingSeconds,
  );
}

/** Whether a request may read the metrics: no token configured, or `Authorization: Bearer <token>` (constant time). */
export function metricsAuthorized(token: string | undefined, authorization: string | undefined): boolean {
  if (!token) return true;
  const m = /^Bearer (.+)$/.exec(authorization ?? '');
  return m ? safeEqual(m[1]!, token) : false;
}
