/**
 * The MCP endpoint (`mcp.message`, declared in api/operations/mcp.ts): a collection served as an MCP server over
 * the official SDK's Streamable HTTP transport, stateless — a fresh server and transport per POST, so any API process can answer any request and a
 * change to the collection shows in the next `tools/list`. Auth, rate limits and body parsing are the API's own
 * middleware; the collection is looked up (one query) before the SDK sees the request, so that an unknown or private
 * collection is a plain 404 in shape A. The low-level `Server` is used because our tools come with raw JSON Schemas.
 */
import type { Context } from 'koa';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { lazySchemaValidator } from '../../core/infra/mcp-schema-validator.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import {
  collectionOffer,
  getPrompt,
  listPrompts,
  listResources,
  listResourceTemplates,
  needsOffer,
  offerCapabilities,
  readResource,
  withIcons,
} from './offer.js';
import { asksForProgress, progressSink, progressTokenOf } from './progress.js';
import { answerCancelledNotification, mcpRequestKey, serveTasks2025, servesTasks2025, TASKS_CAPABILITY_2025 } from './tasks.js';
import type { AppDeps } from '../deps.js';
import { callerOf } from '../middleware/auth.js';
import { callerIdentity } from '../middleware/identity.js';
import { assertEnvBounds } from '../../core/executions/env-bounds.js';
import { errors } from '../../core/infra/errors.js';
import { collectionTools, isOwner } from '../../core/collections/collections.js';
import { findCollectionOfUser, type CollectionRow } from '../../core/repos/collections.js';
import type { ToolRow } from '../../core/repos/tools.js';
import { ENV_HEADER, mcpTool, mcpToolNames } from './tools.js';
import { callCollectionTool, type CallContext } from './call.js';
import { callMetaTool, metaTools, MCP_MODES, type McpMode } from './modes.js';
import { versionOf } from '../registry/server-document.js';
import { isModernMcpRequest, serveModernMcpRequest } from './era-2026.js';
import { takesUrlElicitation2025, withUrlElicitation } from './env-elicit.js';
import { originOf } from '../oauth/provider.js';

/**
 * The collection, if the caller may use it: public ones are open, private ones need the owner's key or an OAuth token.
 * Without credentials, an unknown collection and a private one answer alike — 401 with the OAuth challenge
 * (api/oauth/provider.ts) — so that no name can be probed; only an authenticated caller who may not see it gets 404.
 */
async function loadMcpCollection(ctx: Context, deps: AppDeps): Promise<CollectionRow> {
  const { username, slug } = ctx.params as { username: string; slug: string };
  const c = await findCollectionOfUser(deps.db, username, slug);
  const caller = callerOf(ctx);
  if (!c || (!c.is_public && !isOwner(c, caller))) {
    ctx.state.authError = true;
    if (!caller && ctx.state.admin !== true) throw errors.unauthorized('This collection needs credentials: sign in with OAuth, or send an API key as Bearer');
    throw errors.notFound('Collection', `${username}/${slug}`);
  }
  return c;
}

/** `?mode=all|search` (api/mcp/modes.ts), else the collection's own setting. */
function modeOf(ctx: Context, c: CollectionRow): McpMode {
  const asked = ctx.query.mode;
  if (asked === undefined) return c.mcp_mode ?? 'all';
  if (typeof asked === 'string' && (MCP_MODES as readonly string[]).includes(asked)) return asked as McpMode;
  throw errors.validation(`'mode' must be one of: ${MCP_MODES.join(', ')}`, [{ path: 'mode', message: `must be one of: ${MCP_MODES.join(', ')}` }]);
}

async function createCollectionServer(
  deps: AppDeps,
  c: CollectionRow,
  call: Omit<CallContext, 'signal'>,
  mode: McpMode,
  method: unknown,
  tasks = false,
): Promise<Server> {
  // Read once per HTTP request, and only by requests that need the tools.
  let named: Promise<Map<string, ToolRow>> | undefined;
  const tools = () => (named ??= collectionTools(deps, c).then(mcpToolNames));
  // Its servers' resources, prompts and icons (api/mcp/offer.ts): read by the requests that answer from them.
  const offer = needsOffer(method) ? await collectionOffer(deps, (await tools()).values()) : undefined;
  // The server's version is the collection's (its revision, as in the registry API).
  const server = new Server(
    { name: `toolshed:${c.owner_username}/${c.uid}`, title: c.name, version: versionOf(c.revision) },
    {
      capabilities: { tools: { listChanged: false }, ...(offer ? offerCapabilities(offer) : {}), ...(tasks ? TASKS_CAPABILITY_2025 : {}) },
      ...(c.description ? { instructions: c.description } : {}),
      jsonSchemaValidator: lazySchemaValidator,
    },
  );
  // Icons are 2025-11-25's: served to clients of that version (and 2026-07-28's, era-2026.ts).
  const icons = offer && call.headers['mcp-protocol-version'] === '2025-11-25' ? offer : undefined;
  const listTools = async () => ({
    tools: mode === 'search' ? metaTools(await tools()) : [...(await tools())].map(([name, t]) => withIcons(mcpTool(name, t), t, icons)),
  });
  const callTool: Parameters<typeof server.setRequestHandler<typeof CallToolRequestSchema>>[1] = async (req, extra) =>
    (mode === 'search' ? callMetaTool : callCollectionTool)(
      {
        ...call,
        signal: extra.signal,
        progress: progressSink(progressTokenOf(req.params._meta), extra.sendNotification),
        mcpRequest: mcpRequestKey(call, c.id, extra.requestId),
      },
      await tools(),
      req.params.name,
      req.params.arguments,
    );
  server.setRequestHandler(ListToolsRequestSchema, listTools);
  server.setRequestHandler(CallToolRequestSchema, callTool);
  // 2025-11-25 tasks (api/mcp/tasks.ts): the same two handlers, a call with `task` answered with the execution as a task.
  if (tasks) serveTasks2025(server, { call, collection: c, tools, plainCall: callTool as never, plainList: listTools as never });
  if (offer?.hasResources) {
    server.setRequestHandler(ListResourcesRequestSchema, async () => listResources(offer));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => listResourceTemplates(offer));
    server.setRequestHandler(ReadResourceRequestSchema, async (req, extra) =>
      readResource({ ...call, signal: extra.signal }, await tools(), offer, req.params.uri),
    );
  }
  if (offer?.hasPrompts) {
    server.setRequestHandler(ListPromptsRequestSchema, async () => listPrompts(offer));
    server.setRequestHandler(GetPromptRequestSchema, async (req, extra) =>
      getPrompt({ ...call, signal: extra.signal }, await tools(), offer, req.params.name, req.params.arguments),
    );
  }
  return server;
}

/** What the SDK's stateless examples answer to GET (no server-initiated stream) and DELETE (no session). */
function methodNotAllowed(ctx: Context) {
  ctx.status = 405;
  ctx.set('Allow', 'POST');
  ctx.body = { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this endpoint is stateless; POST JSON-RPC messages' }, id: null };
}

/** `mcp.message`: one JSON-RPC message through a fresh server and transport; the transport writes the response. */
export async function serveMcpRequest(ctx: Context, deps: AppDeps): Promise<void> {
  // JSON-RPC batches are refused: one request is one rate-limit point and may queue at most one execution (a 1 MiB
  // array of tools/call would otherwise queue thousands). MCP 2025-06-18 dropped batching from the protocol.
  if (Array.isArray(ctx.request.body)) {
    ctx.status = 400;
    ctx.body = {
      jsonrpc: '2.0',
      error: { code: -32600, message: 'Invalid Request: JSON-RPC batches are not supported; send one message per request' },
      id: null,
    };
    return;
  }
  // The env headers are bounded as the REST body's `env` is (core/executions/env-bounds.ts): a clear 400 before anything runs.
  const envHeaders = Object.entries(ctx.req.headers).filter(([h, v]) => h.startsWith(ENV_HEADER) && v !== undefined);
  assertEnvBounds(
    envHeaders.map(([h, v]) => [h.slice(ENV_HEADER.length), Array.isArray(v) ? v.join(', ') : v!]),
    'X-Tool-Env-* headers',
  );
  const c = await loadMcpCollection(ctx, deps);
  // notifications/cancelled (either era) cancels the execution of the tools/call it names (api/mcp/tasks.ts).
  if (await answerCancelledNotification(ctx, deps, c, { client: callerIdentity(ctx), caller: callerOf(ctx) })) return;
  // A 2026-07-28 request (its `_meta` envelope or header) is served by the 2.x SDK (api/mcp/era-2026.ts).
  if (await isModernMcpRequest(ctx)) {
    return serveModernMcpRequest(ctx, deps, c, { deps, caller: callerOf(ctx), client: callerIdentity(ctx), headers: ctx.req.headers }, modeOf(ctx, c));
  }
  const tasks = servesTasks2025(ctx.req.headers, ctx.request.body, modeOf(ctx, c));
  const invalid = invalidParams(ctx.request.body) ?? cursorOrTask(ctx.request.body, tasks);
  if (invalid) {
    ctx.body = invalid;
    return;
  }
  // A 2025-11-25 client that declared URL elicitation is asked for missing env that way (api/mcp/env-elicit.ts).
  const elicit = takesUrlElicitation2025(ctx.req.headers) ? { era: '2025-11-25' as const, origin: originOf(ctx, deps), collection: c } : undefined;
  const server = await createCollectionServer(
    deps,
    c,
    { deps, caller: callerOf(ctx), client: callerIdentity(ctx), headers: ctx.req.headers, elicit },
    modeOf(ctx, c),
    (ctx.request.body as { method?: unknown } | undefined)?.method,
    tasks,
  );
  const session = withUrlElicitation(ctx.request.body);
  if (session) ctx.res.setHeader('Mcp-Session-Id', session);
  // A tools/call that asks for progress is answered as an SSE stream, its progress notifications before the result.
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !asksForProgress(ctx.request.body) });
  // Closing the server aborts the signal of a tools/call still waiting, when the client goes away.
  ctx.res.on('close', () => void server.close());
  await server.connect(transport);
  ctx.respond = false;
  try {
    await transport.handleRequest(ctx.req, ctx.res, ctx.request.body);
  } catch (err) {
    if (!ctx.res.headersSent) {
      ctx.respond = true;
      throw err;
    }
    deps.logger.error({ err, reqId: ctx.state.requestId }, 'mcp request failed after the response started');
  }
}

/**
 * `tools/list` is one page (a collection's tools fit): no cursor was ever given out, so any cursor is bogus, -32602 as
 * the specification says. A 2025-11-25 `task` on `tools/call` is served as a task where tasks are (`servesTasks`:
 * a 2025-11-25 client in `all` mode, api/mcp/tasks.ts); elsewhere it is dropped, and the call served as a plain one (the
 * SDK would answer it -32603).
 */
function cursorOrTask(body: unknown, servesTasks: boolean): object | undefined {
  const msg = body as { method?: unknown; id?: unknown; params?: Record<string, unknown> };
  if (!servesTasks && msg?.method === 'tools/call' && msg.params && typeof msg.params === 'object' && 'task' in msg.params) delete msg.params.task;
  if (msg?.method !== 'tools/list' || msg.id === undefined || msg.params?.cursor === undefined) return undefined;
  return {
    jsonrpc: '2.0',
    id: msg.id,
    error: { code: -32602, message: 'Invalid params: cursor: unknown cursor (tools/list is one page; list again without one)' },
  };
}

/** The requests our server handles, by method: their params are checked here, before the SDK sees them. */
const REQUESTS: Record<string, typeof CallToolRequestSchema | typeof ListToolsRequestSchema> = {
  'tools/call': CallToolRequestSchema,
  'tools/list': ListToolsRequestSchema,
};

/**
 * A request whose params do not fit its method (`tools/call` with `arguments: "x"`) is JSON-RPC's -32602 Invalid
 * params, naming the field; the SDK would answer it as -32603 Internal error with a dump of the validation error.
 */
function invalidParams(body: unknown): object | undefined {
  const msg = body as { method?: unknown; id?: unknown };
  const schema = typeof msg?.method === 'string' && Object.hasOwn(REQUESTS, msg.method) ? REQUESTS[msg.method] : undefined;
  if (!schema || msg.id === undefined) return undefined;
  const parsed = schema.safeParse(body);
  if (parsed.success) return undefined;
  const issue = parsed.error.issues[0];
  const where = issue.path.join('.') || 'params';
  return { jsonrpc: '2.0', id: msg.id, error: { code: -32602, message: `Invalid params: ${where}: ${issue.message}` } };
}

/** `mcp.stream` (GET) and `mcp.endSession` (DELETE): 404 for a collection the caller may not use, else 405. */
export async function refuseMcpMethod(ctx: Context, deps: AppDeps): Promise<void> {
  await loadMcpCollection(ctx, deps);
  methodNotAllowed(ctx);
}
