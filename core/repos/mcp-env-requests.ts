/**
 * mcp_env_requests: a tool call that lacked required env, asked for the MCP way (api/mcp/env-elicit.ts) — pending until
 * the caller answers it on the web page (api/operations/mcp-env.ts), then holding the execution that answer started
 * until the client's retry takes it, once. Never the values (they are sealed into that execution's job only); the
 * token of the page's URL is kept as its SHA-256.
 */
import crypto from 'node:crypto';
import type { Db } from '../infra/db.js';

export interface McpEnvRequestRow {
  id: string;
  collection_id: string;
  tool_id: string;
  tool_name: string;
  params: unknown;
  params_hash: string;
  env_names: string[];
  user_id: string;
  api_key_id: string | null;
  client: string;
  expires_at: Date;
  submitted_at: Date | null;
  execution_id: string | null;
  consumed_at: Date | null;
}

export const envRequestId = (token: string) => `sha256:${crypto.createHash('sha256').update(token).digest('hex')}`;

export interface NewEnvRequest {
  collectionId: string;
  toolId: string;
  toolName: string;
  params: unknown;
  paramsHash: string;
  envNames: string[];
  userId: string;
  apiKeyId: string | null;
  client: string;
  ttlMs: number;
}

/** Stores a pending request; returns its token (the only place it exists as is). Requests a day past expiry go. */
export async function insertEnvRequest(db: Db, r: NewEnvRequest): Promise<{ token: string; expiresAt: Date }> {
  const token = crypto.randomBytes(32).toString('base64url');
  await db('mcp_env_requests').where('expires_at', '<', db.raw("now() - interval '1 day'")).delete();
  const [row] = await db('mcp_env_requests')
    .insert({
      id: envRequestId(token),
      collection_id: r.collectionId,
      tool_id: r.toolId,
      tool_name: r.toolName,
      params: JSON.stringify(r.params ?? {}),
      params_hash: r.paramsHash,
      env_names: r.envNames,
      user_id: r.userId,
      api_key_id: r.apiKeyId,
      client: r.client,
      expires_at: db.raw('now() + make_interval(secs => ?)', [r.ttlMs / 1000]),
    })
    .returning(['expires_at']);
  return { token, expiresAt: row.expires_at };
}

export async function findEnvRequest(db: Db, token: string): Promise<McpEnvRequestRow | undefined> {
  return db('mcp_env_requests')
    .where({ id: envRequestId(token) })
    .first();
}

/** Marks a live, unanswered request answered; false when it is not (expired, answered already: single use). */
export async function claimEnvRequest(db: Db, token: string): Promise<boolean> {
  const n = await db('mcp_env_requests')
    .where({ id: envRequestId(token) })
    .whereNull('submitted_at')
    .where('expires_at', '>', db.fn.now())
    .update({ submitted_at: db.fn.now() });
  return n === 1;
}

/** The answer could not start its execution (refused): the request may be answered again. */
export async function unclaimEnvRequest(db: Db, token: string): Promise<void> {
  await db('mcp_env_requests')
    .where({ id: envRequestId(token) })
    .whereNull('execution_id')
    .update({ submitted_at: null });
}

export async function setEnvRequestExecution(db: Db, token: string, executionId: string): Promise<void> {
  await db('mcp_env_requests')
    .where({ id: envRequestId(token) })
    .update({ execution_id: executionId });
}

/**
 * Takes, once, the execution the answer to a request started: by its token (2026-07-28's `requestState`), or — a
 * 2025-11-25 client retries the same call, carrying nothing of the elicitation — the newest answered request of the
 * same caller, collection, tool and params. Undefined when there is none (not answered yet, taken, long expired).
 */
export async function takeAnsweredEnvRequest(
  db: Db,
  by: { token: string } | { userId: string; collectionId: string; toolId: string; paramsHash: string },
): Promise<{ executionId: string } | undefined> {
  const match =
    'token' in by
      ? db('mcp_env_requests')
          .select('id')
          .where({ id: envRequestId(by.token) })
      : db('mcp_env_requests')
          .select('id')
          .where({ user_id: by.userId, collection_id: by.collectionId, tool_id: by.toolId, params_hash: by.paramsHash })
          .orderBy('submitted_at', 'desc')
          .limit(1);
  // An answer is taken within its request's lifetime and as long again after it (an old one is not a retry's).
  const [row] = await db('mcp_env_requests')
    .whereIn('id', match.whereNull('consumed_at').whereNotNull('execution_id').where('expires_at', '>', db.raw('now() - (expires_at - created_at)')))
    .whereNull('consumed_at')
    .whereNotNull('execution_id')
    .update({ consumed_at: db.fn.now() })
    .returning(['execution_id']);
  return row ? { executionId: row.execution_id } : undefined;
}
