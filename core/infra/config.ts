/**
 * Configuration: parsed once from the process environment into a frozen, typed object that is passed down.
 * No other module reads process.env.
 */
import { z } from 'zod';
import path from 'node:path';

/** A comma-separated list: items trimmed, empty ones dropped; unset is []. */
const commaList = () =>
  z
    .string()
    .optional()
    .transform((v) =>
      (v ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    );

const intFrom = (def: number) => z.coerce.number().int().nonnegative().default(def);
/** Defaults of MAX_PACKAGE_FILES and MAX_PACKAGE_INSTALLED_MB (the installer's own, when it is given none). */
export const DEFAULT_MAX_PACKAGE_FILES = 50_000;
export const DEFAULT_MAX_PACKAGE_INSTALLED_MB = 1024;

/** LLM_PRICES: USD per million tokens, per model id (`{ "gpt-4o-mini": { "inputPerMTok": 0.15, "outputPerMTok": 0.6 } }`). */
const pricesSchema = z.record(z.string().min(1), z.object({ inputPerMTok: z.number().nonnegative(), outputPerMTok: z.number().nonnegative() }).strict());
export type LlmPrices = z.infer<typeof pricesSchema>;

const schema = z.object({
  PORT: intFrom(3000),
  HOST: z.string().default('0.0.0.0'),
  DATABASE_URL: z.string().optional(),
  DATA_DIR: z.string().default('.data'),
  ADMIN_TOKEN: z.string().min(16).optional(),
  SECRETS_KEY: z.string().optional(),
  MEILI_HOST: z.string().url().optional(),
  MEILI_API_KEY: z.string().optional(),
  /**
   * `use` (the default): the embedded engine ranks queries of four words or more (or led by an agent's retrieval
   * instruction) with a sentence encoder too (Universal Sentence Encoder lite, in a worker thread); `none`: words only.
   */
  SEARCH_ENCODER: z.enum(['none', 'use']).default('use'),
  /**
   * `llm`: a search query of four words or more is first rewritten into keywords by the LLM at LLM_BASE_URL (which
   * must be set); `off` (the default): never. A rewrite that fails or takes longer than the timeout is skipped.
   */
  SEARCH_QUERY_REWRITE: z.enum(['off', 'llm']).default('off'),
  SEARCH_QUERY_REWRITE_TIMEOUT_MS: z.coerce.number().int().min(100).max(30_000).default(1500),
  /**
   * `on` (the default): an identified caller's search followed within SEARCH_LEARNING_WINDOW_SECONDS by a run of a
   * tool (or adding it to a collection, or an MCP call) is kept as a vote for that tool on the search's terms, and
   * votes of SEARCH_LEARNING_MIN_CALLERS distinct callers or more lift the tool in ranking (docs/search.md,
   * "Learning from use"). `off`: nothing is recorded and past votes are not used.
   */
  SEARCH_LEARNING: z.enum(['on', 'off']).default('on'),
  SEARCH_LEARNING_WINDOW_SECONDS: z.coerce.number().int().min(10).max(3600).default(600),
  SEARCH_LEARNING_MIN_CALLERS: z.coerce.number().int().min(2).max(1000).default(3),
  /** Votes weigh half after this many days, and are deleted after four half-lives. */
  SEARCH_LEARNING_HALF_LIFE_DAYS: z.coerce.number().int().min(1).max(365).default(30),
  /** The least time between two refreshes of a process's in-memory table after new votes (NOTIFY-driven). */
  SEARCH_LEARNING_REFRESH_MS: z.coerce.number().int().min(50).max(3_600_000).default(10_000),
  LLM_BASE_URL: z.string().url().optional(),
  LLM_API_KEY: z.string().optional(),
  LLM_MODEL: z.string().default('gpt-4o-mini'),
  LLM_EMBEDDING_MODEL: z.string().default('text-embedding-3-small'),
  /** Prices per model (JSON, see pricesSchema): a scenario batch shows its cost at them. Unset: batches show tokens only. */
  LLM_PRICES: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (!v?.trim()) return undefined;
      try {
        return JSON.parse(v) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be JSON: { "<model>": { "inputPerMTok": n, "outputPerMTok": n } }' });
        return z.NEVER;
      }
    })
    .pipe(pricesSchema.optional()),
  SANDBOX: z.enum(['gvisor', 'process']).default('gvisor'),
  SANDBOX_NETWORK: z.enum(['none', 'egress']).default('none'),
  /** Egress mode: the subnet carved into one /30 per sandbox, and the resolvers sandboxes may query. */
  SANDBOX_EGRESS_SUBNET: z.cidrv4().default('10.213.0.0/16'),
  SANDBOX_DNS: commaList().pipe(z.array(z.ipv4())),
  SANDBOX_POOL_SIZE: intFrom(2),
  SANDBOX_REUSE: z.enum(['off', 'caller-package']).default('off'),
  /**
   * Tool calls of scenario runs: `caller-package` (default) has a user's runs share sandboxes per package (reuse mode:
   * a fresh V8 context, env and empty /tmp and home per call; never across users); `off` boots one per call.
   */
  SCENARIO_SANDBOX_REUSE: z.enum(['off', 'caller-package']).default('caller-package'),
  /** MCP servers kept started and initialised ahead of their calls, over all packages (sandbox/mcp-warm.ts); 0 = off. */
  SANDBOX_MCP_WARM: intFrom(2),
  /**
   * How long an MCP server being imported has to start and list its tools, per attempt (an import tries in the guest's
   * process, then as a child `node`). Lower only to make tests of silent servers quick.
   */
  MCP_DESCRIBE_TIMEOUT_MS: z.coerce.number().int().min(1000).max(600_000).default(30_000),
  WORKER_CONCURRENCY: intFrom(4),
  EXECUTION_TIMEOUT_MS: intFrom(30_000),
  EXECUTION_WAIT_MS: intFrom(60_000),
  SCENARIO_DAILY_QUOTA: intFrom(50),
  SCENARIO_DAILY_QUOTA_PRO: intFrom(500),
  RATE_LIMIT_FREE_MINUTE: intFrom(60),
  RATE_LIMIT_FREE_DAY: intFrom(1000),
  RATE_LIMIT_PRO_MINUTE: intFrom(300),
  RATE_LIMIT_PRO_DAY: intFrom(10000),
  /** 0 means unlimited (the default for enterprise). */
  RATE_LIMIT_ENTERPRISE_MINUTE: intFrom(0),
  RATE_LIMIT_ENTERPRISE_DAY: intFrom(0),
  /**
   * The web app's own reads (GET/HEAD signed in by the session cookie, never by a key): a budget per user apart from
   * the tier's API budget, sized for a person clicking fast, so browsing never meets the API clients' limit. 0: none.
   */
  RATE_LIMIT_SESSION_READ_MINUTE: intFrom(600),
  RATE_LIMIT_SESSION_READ_DAY: intFrom(20000),
  PACKAGE_CACHE_DIR: z.string().optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** `auto`: readable lines on a terminal, JSON lines otherwise (files, pipes, tests, CI). */
  LOG_FORMAT: z.enum(['auto', 'json', 'pretty']).default('auto'),
  /**
   * How many reverse proxies in front of the API append to X-Forwarded-For: the client address is the entry that
   * many hops from the right. `false`/0 ignores the header; `true` means 1.
   */
  /**
   * Origins (`https://app.example`, comma-separated) whose browser pages may call the MCP endpoints, besides
   * PUBLIC_URL's own (the service's pages): they get CORS answers; a request with any other `Origin` header is a 403 (none by default; requests without `Origin`, as
   * non-browser clients send them, are served).
   */
  MCP_ALLOWED_ORIGINS: commaList().pipe(z.array(z.url().transform((u) => new URL(u).origin))),
  /**
   * Hostnames (comma-separated) whose OAuth client ID metadata documents may be fetched although they resolve to a
   * private or loopback address: an intranet client's document (none by default; every other host must be public).
   * Still https only, and the certificate must verify (an internal CA: NODE_EXTRA_CA_CERTS).
   */
  OAUTH_CLIENT_METADATA_HOSTS: commaList().pipe(z.array(z.string().transform((h) => h.toLowerCase()))),
  TRUST_PROXY: z
    .string()
    .default('false')
    .transform((v) => (v === 'true' ? 1 : v === 'false' ? 0 : Number(v)))
    .pipe(z.number().int().min(0).max(10)),
  /**
   * A job is dead when no live worker process has leased it for this long; processes renew their leases every
   * quarter of it and reap every three quarters. Lower only to make fault tests quick.
   */
  WORKER_LEASE_SECONDS: z.coerce.number().int().min(4).max(600).default(20),
  /** Keys one user may hold unrevoked at once. */
  MAX_KEYS_PER_USER: intFrom(20),
  /** Package imports a user may request per 24 hours (POST /api/packages). */
  PUBLISH_DAILY_QUOTA: intFrom(20),
  /**
   * How often (minutes; fractions allowed) the worker asks the npm registry for new versions of every `npm:` package
   * and imports them (default every 6 hours, the first at the worker's start); 0 never.
   */
  NPM_POLL_INTERVAL_MINUTES: z.coerce
    .number()
    .nonnegative()
    .max(7 * 24 * 60)
    .default(360),
  /**
   * npm's downloads API (its `/downloads/point/last-week/<name>`), asked daily for the weekly download count shown on a
   * package's page; empty: never asked, the page says so.
   */
  NPM_DOWNLOADS_URL: z.union([z.literal(''), z.string().url()]).default('https://api.npmjs.org'),
  /** An npmrc file for npm's user configuration (registry address, cache), instead of npm's own (~/.npmrc). */
  NPM_USERCONFIG: z.string().optional(),
  /** An npm package's own tarball, and its files unpacked, at most (its dependencies are not counted). */
  MAX_PACKAGE_TARBALL_MB: intFrom(64),
  MAX_PACKAGE_UNPACKED_MB: intFrom(150),
  /**
   * A package as installed, its dependencies included: files (and directories, links) at most, and megabytes at most.
   * Over them (or a tarball that inflates a thousandfold and more, a decompression bomb): a 400 naming the limit.
   */
  MAX_PACKAGE_FILES: intFrom(DEFAULT_MAX_PACKAGE_FILES),
  MAX_PACKAGE_INSTALLED_MB: intFrom(DEFAULT_MAX_PACKAGE_INSTALLED_MB),
  /** Executions (queued or running) one caller — a user, or an anonymous client address — may have at once. */
  MAX_ACTIVE_EXECUTIONS: intFrom(20),
  /** Collections one user may own; tools one collection may hold (the next create or add is a 409). */
  MAX_COLLECTIONS_PER_USER: intFrom(100),
  MAX_TOOLS_PER_COLLECTION: intFrom(200),
  /** Characters a tool's description may have; an import with a longer one is refused (400). */
  MAX_TOOL_DESCRIPTION_CHARS: intFrom(10_000),
  /** Open server-sent-event streams per caller and in total per API process. */
  SSE_MAX_STREAMS_PER_CALLER: intFrom(8),
  SSE_MAX_STREAMS: intFrom(1000),
  /**
   * Prometheus metrics (docs/observability.md). METRICS_TOKEN: `GET /metrics` requires `Authorization: Bearer <token>`.
   * METRICS_PORT: the API serves /metrics on this port (on HOST) instead of its public one; WORKER_METRICS_PORT: each
   * worker serves its own there. 0 = off. The API's public port serves /metrics only when METRICS_TOKEN is set and
   * METRICS_PORT is 0: metrics are off by default.
   */
  METRICS_TOKEN: z.string().min(16).optional(),
  METRICS_PORT: intFrom(0),
  WORKER_METRICS_PORT: intFrom(0),
  /** Models an agent may name (comma list); unset: only LLM_MODEL. */
  LLM_MODELS: commaList(),
  /** CPU share of one sandbox, in cores (OCI cpu quota/period). */
  SANDBOX_CPUS: z.coerce.number().positive().max(64).default(1),
  /**
   * Where gVisor's read-only rootfs (node, the guest and its startup snapshot) is built; unset: `DATA_DIR/sandbox`. It is
   * named by a hash of its inputs and built atomically, so workers on one machine may share one (the test runner does).
   */
  SANDBOX_ROOTFS_DIR: z.string().min(1).optional(),
  NODE_ENV: z.string().optional(),
  /**
   * Who may create an account in the web app: `open` (anyone), `invite` (a single-use invitation from the operator),
   * `closed` (nobody; accounts come from the admin endpoint or CLI). Unset: `closed` when NODE_ENV=production, else `open`.
   */
  SIGNUP: z.enum(['open', 'invite', 'closed']).optional(),
  /** Retention (core/repos/retention.ts): days an execution's params and result are kept once final (then 410 GONE). */
  RETENTION_RESULTS_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  /** Days a scenario run's transcript (its steps) is kept once final. */
  RETENTION_TRANSCRIPTS_DAYS: z.coerce.number().int().min(1).max(3650).default(90),
  /** Days raw trending events are kept (trending reads its rollups; at least the longest period, 30 days). */
  RETENTION_EVENTS_DAYS: z.coerce.number().int().min(31).max(3650).default(35),
  /** Browser sessions last this many days from sign-in. */
  SESSION_DAYS: z.coerce.number().int().min(1).max(365).default(30),
  /** Sign-in attempts per 15 minutes, per account and per client address. */
  LOGIN_ATTEMPTS_PER_ACCOUNT: intFrom(10),
  LOGIN_ATTEMPTS_PER_IP: intFrom(50),
  /** Where the built web app lives (`npm run build:web`). */
  WEB_DIR: z.string().default('dist/web'),
  /**
   * Traces (OpenTelemetry, core/infra/tracing.ts): the OTLP/HTTP collector's base URL (`http://collector:4318`; spans go to
   * `<it>/v1/traces` as JSON). Unset or empty: tracing is off and no SDK starts.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.preprocess((v) => (v === '' ? undefined : v), z.url({ protocol: /^https?$/ }).optional()),
  /** Headers for the collector (`key=value,key2=value2`, values URL-encoded), such as its auth token. Never logged. */
  OTEL_EXPORTER_OTLP_HEADERS: z
    .string()
    .optional()
    .transform((v) => otlpHeaders(v ?? '')),
  /** Optional OpenID Connect single sign-on: the issuer URL and this service's client credentials. */
  OIDC_ISSUER: z.string().url().optional(),
  OIDC_CLIENT_ID: z.string().optional(),
  OIDC_CLIENT_SECRET: z.string().optional(),
  OIDC_LABEL: z.string().default('single sign-on'),
  /** The service's public base URL (`https://tools.example.com`); unset: taken from each request. */
  PUBLIC_URL: z
    .url({ protocol: /^https?$/ })
    .optional()
    .transform((v) => v?.replace(/\/+$/, '')),
  /**
   * The DNS name that owns this registry's MCP server names (served reversed: `com.example.tools/<user>.<slug>`);
   * unset: the host of PUBLIC_URL, else `toolshed.local`.
   */
  REGISTRY_NAMESPACE: z
    .string()
    .regex(/^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$/i, 'must be a DNS name like tools.example.com')
    .optional(),
});

/** OTEL_EXPORTER_OTLP_HEADERS as the OpenTelemetry spec writes it: comma-separated `key=value`, values URL-encoded. */
function otlpHeaders(v: string): Record<string, string> {
  const pairs = v
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p.includes('='))
    .map((p) => [p.slice(0, p.indexOf('=')).trim(), safeDecode(p.slice(p.indexOf('=') + 1).trim())] as const);
  return Object.fromEntries(pairs.filter(([k]) => k));
}

function safeDecode(v: string): string {
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
}

export type RawConfig = z.infer<typeof schema>;

/** Every environment variable the service reads (the README's configuration table lists each one). */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(schema.shape);

export interface Config extends Omit<RawConfig, 'DATA_DIR' | 'PACKAGE_CACHE_DIR' | 'SIGNUP' | 'REGISTRY_NAMESPACE'> {
  DATA_DIR: string;
  PACKAGE_CACHE_DIR: string;
  SIGNUP: 'open' | 'invite' | 'closed';
  REGISTRY_NAMESPACE: string;
}

/** Parses an environment (process.env by default at the call site) into a frozen Config. */
/**
 * The configuration of a booted process: ADMIN_TOKEN and SECRETS_KEY are set (from the environment, or generated
 * into DATA_DIR by core/infra/bootstrap.ts). The API and the worker take only this, so no code reads an optional secret.
 */
export type BootedConfig = Readonly<Config & { ADMIN_TOKEN: string; SECRETS_KEY: string }>;

/** `config` as a booted process's, when both secrets are set (tests and benches that set them); throws otherwise. */
export function bootedConfig(config: Readonly<Config>): BootedConfig {
  if (!config.ADMIN_TOKEN || !config.SECRETS_KEY) throw new Error('ADMIN_TOKEN and SECRETS_KEY must be set (bootProcess generates them)');
  return config as BootedConfig;
}

export function loadConfig(env: Record<string, string | undefined>, overrides: Partial<Config> = {}): Readonly<Config> {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  if (parsed.data.SEARCH_QUERY_REWRITE === 'llm' && !parsed.data.LLM_BASE_URL) {
    throw new Error('Invalid configuration:\n  SEARCH_QUERY_REWRITE: llm needs a language model: set LLM_BASE_URL');
  }
  const dataDir = path.resolve(parsed.data.DATA_DIR);
  const config: Config = {
    ...parsed.data,
    DATA_DIR: dataDir,
    PACKAGE_CACHE_DIR: path.resolve(parsed.data.PACKAGE_CACHE_DIR ?? path.join(dataDir, 'packages')),
    SIGNUP: parsed.data.SIGNUP ?? (parsed.data.NODE_ENV === 'production' ? 'closed' : 'open'),
    WEB_DIR: path.resolve(parsed.data.WEB_DIR),
    REGISTRY_NAMESPACE: (
      parsed.data.REGISTRY_NAMESPACE ?? (parsed.data.PUBLIC_URL ? new URL(parsed.data.PUBLIC_URL).hostname : 'toolshed.local')
    ).toLowerCase(),
    ...overrides,
  };
  return Object.freeze(config);
}
