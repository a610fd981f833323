/**
 * A tool's required env asked for the MCP way (issue 44 item 3), instead of the `X-Tool-Env-*` headers most clients
 * cannot send: the call is remembered as a pending request (mcp_env_requests: collection, tool, params, caller, ten
 * minutes, single use — never values) whose token makes a page of ours, `/env/<token>`, where the signed-in caller
 * enters the values for that one call. Submitting them (api/operations/mcp-env.ts) queues the execution with the env
 * sealed into its job, as a REST call's `env` is; the client's retry then gets that execution's result.
 *
 * - 2025-11-25 clients that declared `elicitation: { url: {} }` get the `URLElicitationRequiredError` (-32042) the spec
 *   defines for this, and retry the same call once the user is done. Not the server→client `elicitation/create`
 *   request: our Streamable HTTP endpoint is stateless (a fresh server per POST, JSON responses), so the client's
 *   answer to a request would arrive in another POST, at a server that never sent it. A stateless server does not see
 *   the capabilities `initialize` declared either: such a client is told apart by the `Mcp-Session-Id` minted at its
 *   initialize (`withUrlElicitation`), which it echoes on every request; nothing is kept on our side.
 * - 2026-07-28 clients that declare it in their request's `_meta` get the `input_required` result pointing at the same
 *   page, with the token as `requestState`; their retry carries it back.
 * Anonymous calls (public collections without credentials) are not asked: the page's user would become the caller of a
 * call someone else chose, with their own secret. They, and clients that cannot take it, get the error naming the headers.
 */
import crypto from 'node:crypto';
import { UrlElicitationRequiredError } from '@modelcontextprotocol/sdk/types.js';
import { canonicalJson } from '../../core/packages/mcp-server.js';
import { insertEnvRequest, takeAnsweredEnvRequest, findEnvRequest } from '../../core/repos/mcp-env-requests.js';
import type { CollectionRow } from '../../core/repos/collections.js';
import type { ToolRow } from '../../core/repos/tools.js';
import type { Caller } from '../../core/types.js';
import type { AppDeps } from '../deps.js';

/** How long the page accepts the values of one call. */
export const ENV_REQUEST_TTL_MS = 10 * 60_000;
/** The key of our one embedded request in a 2026-07-28 `input_required` result. */
export const ENV_INPUT_KEY = 'toolshed/env';
/** Ends the session id minted for a 2025-11-25 client that declared URL elicitation. */
const URL_ELICITATION_MARK = '.url-elicitation';

/** Whether and how the client of this request can be asked for env. */
export type EnvElicitation =
  | { era: '2025-11-25'; origin: string; collection: CollectionRow }
  | { era: '2026-07-28'; origin: string; collection: CollectionRow; requestState?: string; answer?: 'accept' | 'decline' | 'cancel' };

/** What asking gives: the execution the caller's answer started, or the protocol's question (2026: a result). */
export type EnvAsked = { executionId: string } | { inputRequired: EnvInputRequired };
export interface EnvInputRequired {
  resultType: 'input_required';
  inputRequests: Record<string, { method: 'elicitation/create'; params: { mode: 'url'; message: string; url: string } }>;
  requestState: string;
}

/** The session id to answer a 2025-era `initialize` with, when its client declared URL elicitation (else none). */
export function withUrlElicitation(body: unknown): string | undefined {
  const msg = body as { method?: unknown; params?: { protocolVersion?: unknown; capabilities?: { elicitation?: { url?: unknown } } } };
  if (msg?.method !== 'initialize' || msg.params?.protocolVersion !== '2025-11-25') return undefined;
  const url = msg.params.capabilities?.elicitation?.url;
  return url !== null && typeof url === 'object' ? `${crypto.randomUUID()}${URL_ELICITATION_MARK}` : undefined;
}

/** Whether a 2025-era request comes from a client that declared URL elicitation at 2025-11-25. */
export function takesUrlElicitation2025(headers: Record<string, string | string[] | undefined>): boolean {
  const session = headers['mcp-session-id'];
  return headers['mcp-protocol-version'] === '2025-11-25' && typeof session === 'string' && session.endsWith(URL_ELICITATION_MARK);
}

/** Whether a 2026-07-28 request's client capabilities (its `_meta` envelope) include URL elicitation. */
export function takesUrlElicitation2026(capabilities: unknown): boolean {
  const url = (capabilities as { elicitation?: { url?: unknown } } | undefined)?.elicitation?.url;
  return url !== null && typeof url === 'object';
}

/** The required variables the page asks for: every one without a default (values sent as headers do not carry over). */
export const requiredEnvNames = (envOf: { name: string; required: boolean; default?: string }[]) =>
  envOf.filter((v) => v.required && v.default === undefined).map((v) => v.name);

const paramsHash = (params: unknown) => crypto.createHash('sha256').update(canonicalJson(params)).digest('hex');
const pageUrl = (origin: string, token: string) => `${origin}/env/${token}`;

function message(tool: ToolRow, mcpName: string, c: CollectionRow, names: string[], headers: string[]): string {
  return (
    `The tool '${mcpName}' (${tool.package_name}) of collection ${c.owner_username}/${c.uid} needs env ${names.join(', ')}: ` +
    `open the page to enter ${names.length === 1 ? 'it' : 'them'} for this one call (signed in as the caller), then retry. ` +
    `Or send ${headers.length === 1 ? 'the header' : 'the headers'} ${headers.join(', ')} with the request.`
  );
}

/**
 * A call missing required env, from a caller whose client can be asked: the execution its answer started (the retry),
 * or the question. 2025-11-25: the question is thrown, as the -32042 error.
 */
export async function askForEnv(
  deps: AppDeps,
  how: EnvElicitation,
  call: { caller: Caller; client: string; tool: ToolRow; mcpName: string; params: unknown; names: string[]; headers: string[] },
): Promise<EnvAsked> {
  const c = how.collection;
  const hash = paramsHash(call.params);
  const same = (r: { user_id: string; collection_id: string; tool_id: string; params_hash: string }) =>
    r.user_id === call.caller.userId && r.collection_id === c.id && r.tool_id === call.tool.id && r.params_hash === hash;
  if (how.era === '2025-11-25') {
    const answered = await takeAnsweredEnvRequest(deps.db, { userId: call.caller.userId, collectionId: c.id, toolId: call.tool.id, paramsHash: hash });
    if (answered) return answered;
  } else if (how.requestState) {
    const pending = await findEnvRequest(deps.db, how.requestState);
    // Only a state of ours, for this very call of this caller, is read back; anything else is a new question.
    if (pending && same(pending) && !pending.consumed_at && pending.expires_at > new Date()) {
      const answered = await takeAnsweredEnvRequest(deps.db, { token: how.requestState });
      if (answered) return answered;
      if (!pending.submitted_at || !pending.execution_id) {
        if (how.answer === 'decline' || how.answer === 'cancel') throw new EnvDeclined();
        return {
          inputRequired: question(
            pageUrl(how.origin, how.requestState),
            message(call.tool, call.mcpName, c, pending.env_names, call.headers),
            how.requestState,
          ),
        };
      }
    }
  }
  const { token } = await insertEnvRequest(deps.db, {
    collectionId: c.id,
    toolId: call.tool.id,
    toolName: call.mcpName,
    params: call.params,
    paramsHash: hash,
    envNames: call.names,
    userId: call.caller.userId,
    apiKeyId: call.caller.keyId,
    client: call.client,
    ttlMs: ENV_REQUEST_TTL_MS,
  });
  const url = pageUrl(how.origin, token);
  const text = message(call.tool, call.mcpName, c, call.names, call.headers);
  if (how.era === '2025-11-25') throw new UrlElicitationRequiredError([{ mode: 'url', elicitationId: crypto.randomUUID(), url, message: text }], text);
  return { inputRequired: question(url, text, token) };
}

function question(url: string, text: string, token: string): EnvInputRequired {
  return {
    resultType: 'input_required',
    inputRequests: { [ENV_INPUT_KEY]: { method: 'elicitation/create', params: { mode: 'url', message: text, url } } },
    requestState: token,
  };
}

/** The user declined (or cancelled) entering the values: the call gets the error naming the headers. */
export class EnvDeclined extends Error {}
