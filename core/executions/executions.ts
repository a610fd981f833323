/**
 * The API side of running a tool: everything is checked before anything is queued (tool health, required env,
 * params against the JSON Schema), then the execution row and its job are created in one transaction with the env
 * sealed (AES-256-GCM) in the job payload. Waiting is by LISTEN/NOTIFY.
 */
import { toolEnv, withDeclaredDefaults } from '../tools/tool-env.js';
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { withDbRetry } from '../infra/db.js';
import { assertEnvBounds } from './env-bounds.js';
import { errors } from '../infra/errors.js';
import { sealJson } from '../infra/crypto.js';
import { validateAgainstSchema } from '../tools/json-schema.js';
import type { Notifier } from '../infra/notify.js';
import { waitForFinal } from '../infra/wait-final.js';
import { jobTrace } from '../infra/tracing.js';
import { findExecution, insertExecutionWithJob, insertExecutionWithJobCapped, isFinalExecution, type ExecutionRow } from '../repos/executions.js';
import type { ToolRow } from '../repos/tools.js';
import type { Caller } from '../types.js';
import type { McpServerOp } from '../packages/mcp-offer.js';

/** How long an enqueue keeps trying through a database restart before the caller gets a 503. */
const ENQUEUE_RETRY_MS = 10_000;

export interface ExecutionRequest {
  tool: ToolRow;
  params: unknown;
  env: Record<string, string>;
  caller?: Caller;
  origin: 'api' | 'mcp' | 'agent' | 'scenario';
  /**
   * Who the call counts against (`user:<id>` or `ip:<bucket>`) with the most executions it may have queued or running;
   * over that, a 429. Unset for calls whose number is bounded elsewhere (an agent's or a scenario run's steps).
   */
  limit?: { client: string; maxActive: number };
  /**
   * An imported MCP server's request other than the tool's call (`resources/read`, `prompts/get`; params are its
   * params, not the tool's input), and whether the caller wants its progress (core/executions/progress.ts).
   */
  mcp?: { op?: McpServerOp; progress?: boolean };
  /** The digest of the MCP tools/call that queues it, for a notifications/cancelled naming that call (api/mcp/tasks.ts). */
  mcpRequest?: string;
}

/** Throws the contract's 422/400 when the call cannot run; returns nothing otherwise. */
export function checkExecutable(tool: ToolRow, params: unknown, env: Record<string, string>, skipParams = false): void {
  if (tool.health_status === 'BROKEN') {
    throw errors.toolUnavailable(`Tool '${tool.package_name}/${tool.name}' is BROKEN: ${tool.health_error ?? 'failed its health check'}`);
  }
  const missing = toolEnv(tool)
    .filter((v) => v.required && v.default === undefined && !(v.name in env))
    .map((v) => v.name);
  if (missing.length > 0) throw errors.toolUnavailable(`Missing required env: ${missing.join(', ')}`);
  const details = skipParams ? [] : validateAgainstSchema(tool.input_schema, params);
  if (details.length > 0) throw errors.validation(`Invalid params: ${details.map((d) => `${d.path} ${d.message}`).join('; ')}`, details);
}

export async function enqueueExecution(db: Knex, secretsKey: string, req: ExecutionRequest): Promise<ExecutionRow> {
  assertEnvBounds(Object.entries(req.env), 'env');
  // A resources/read or prompts/get is not the tool's input: only its health and env are checked.
  checkExecutable(req.tool, req.mcp?.op ? {} : req.params, req.env, req.mcp?.op !== undefined);
  const env = withDeclaredDefaults(req.tool, req.env);
  const sealedEnv = Object.keys(env).length ? sealJson(secretsKey, env) : undefined;
  // The id is chosen here, once, so that the enqueue can be repeated after a database blip: a try whose COMMIT
  // reached the server before the connection died has left its row, and the next try finds it instead of queueing
  // the call a second time.
  const id = crypto.randomUUID();
  const row = {
    id,
    toolId: req.tool.id,
    packageVersion: req.tool.package_version,
    userId: req.caller?.userId,
    apiKeyId: req.caller?.keyId,
    origin: req.origin,
    params: req.params,
    ...(req.mcpRequest ? { mcpRequest: req.mcpRequest } : {}),
  };
  const trace = jobTrace();
  const mcp = { ...(req.mcp?.op ? { op: req.mcp.op } : {}), ...(req.mcp?.progress ? { progress: true } : {}) };
  const payload = (executionId: string) => ({ executionId, ...(sealedEnv ? { sealedEnv } : {}), ...trace, ...mcp });
  const limit = req.limit;
  let retried = false;
  const inserted = await withDbRetry(async () => {
    // Only a retry can find its own row: the first try spends no read on it.
    const existing = retried ? await findExecution(db, id) : undefined;
    retried = true;
    if (existing) return existing;
    if (!limit) return insertExecutionWithJob(db, row, payload, 3);
    return insertExecutionWithJobCapped(db, { ...row, caller: limit.client }, payload, 3, limit.maxActive);
  }, ENQUEUE_RETRY_MS);
  if (!inserted) throw errors.tooManyActive(limit!.maxActive);
  return inserted;
}

/** The execution once final, or its current state when waitMs runs out. */
export async function waitForExecution(deps: { db: Knex; notifier: Notifier }, id: string, waitMs: number, signal?: AbortSignal): Promise<ExecutionRow> {
  return waitForFinal(deps.notifier, {
    match: (p) => p.includes(id) && /"(succeeded|failed|timed_out)"/.test(p),
    read: async () => (await findExecution(deps.db, id))!,
    isFinal: isFinalExecution,
    waitMs,
    signal,
  });
}

/** Redaction of env values (as is and in their common encodings) lives in redaction.ts; re-exported for its users. */
export { redactSecrets } from './redaction.js';
