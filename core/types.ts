/**
 * The glossary of Toolshed. Each word below means one thing everywhere in the code base.
 *
 * - package:    an npm package (or a local folder) that exports one or more tools and declares them in its
 *               package.json (`toolshed` field, or TPMJS's `tpmjs` field).
 * - tool:       one exported function of a package, with a description, a JSON Schema for its input and an execute().
 * - execution:  one call of one tool with params (and optional env), run in a sandbox by a worker job.
 * - sandbox:    the isolated place (gVisor, or a child process on machines without it) where an execution runs.
 * - job:        a Graphile Worker job row; the API enqueues, the worker runs. Payloads carry ids.
 * - collection: a user's named list of tools, served as an MCP endpoint.
 * - scenario:   a prompt that an agent runs against a collection's tools, judged by an evaluator.
 * - run:        one evaluated attempt at a scenario (a scenario run); a batch is a set of runs queued together.
 * - import:     the act of reading a package into the registry (install, describe its tools, health check).
 */

export const CATEGORIES = [
  'web-scraping',
  'data-processing',
  'file-operations',
  'communication',
  'database',
  'api-integration',
  'image-processing',
  'text-analysis',
  'automation',
  'ai-ml',
  'security',
  'monitoring',
] as const;
export type Category = (typeof CATEGORIES)[number];

export const TIERS = ['free', 'pro', 'enterprise'] as const;
export type Tier = (typeof TIERS)[number];

export const HEALTH_STATUSES = ['HEALTHY', 'BROKEN', 'UNKNOWN'] as const;
export type HealthStatus = (typeof HEALTH_STATUSES)[number];

export const EXECUTION_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'timed_out'] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

/** A required or optional environment variable that a package's tools read. */
export interface EnvVarSpec {
  name: string;
  description?: string;
  required: boolean;
  /** The value a caller who sets none gets (TPMJS `env[].default`); never a secret. */
  default?: string;
  /** MCP servers: the value is a secret (an API key), from the import's `env` or server.json. */
  secret?: boolean;
  /**
   * MCP servers: the value is a file's content (a credentials JSON); each call's sandbox holds it in a private file
   * (mode 0600, on the sandbox's own tmpfs) and the variable names that file's path (sandbox/guest/mcp-pipe.cjs).
   */
  file?: boolean;
  /** A file's stand-in content, given only while the server is started to be described (import, health checks). */
  placeholder?: string;
}

/** The authenticated caller of a request, when a key was given. */
export interface Caller {
  userId: string;
  username: string;
  name: string | null;
  tier: Tier;
  /** The API key used; null for a browser session (sessions are not keys). */
  keyId: string | null;
}

/** What a user's work counts against (executions' `caller`, rate limits): `user:<id>` (anonymous callers: `ip:<bucket>`). */
export const userCaller = (userId: string) => `user:${userId}`;
