/**
 * The 2026-07-28 era of the MCP endpoint: no `initialize` and no sessions; every request carries its protocol version
 * and client capabilities in `params._meta`, and its method (and tool name) in the `Mcp-Method` / `Mcp-Name` headers;
 * `server/discover` says what the server is; every result has a `resultType`; lists carry `ttlMs` / `cacheScope`.
 * The wire format is the official SDK's (`@modelcontextprotocol/server` 2.x: `createMcpHandler` over a fresh low-level
 * `Server` per request, its own validation ladder for the envelope and headers); the tools are the same as the 2025
 * era's (api/mcp/tools.ts, call.ts, modes.ts). Which era a request is, is the SDK's own classification
 * (`isLegacyRequest`: the `_meta` envelope claim or a modern `MCP-Protocol-Version` header), so that the two can
 * never disagree; 2025-era requests stay on the 1.x SDK's path in routes.ts, which keeps its behaviour byte for byte.
 */
import type { Context } from 'koa';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  createMcpHandler,
  inputResponse,
  isInputRequiredResult,
  isLegacyRequest,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/server';
import { lazySchemaValidator } from '../../core/infra/mcp-schema-validator.js';
import type { AppDeps } from '../deps.js';
import { collectionTools } from '../../core/collections/collections.js';
import type { CollectionRow } from '../../core/repos/collections.js';
import type { ToolRow } from '../../core/repos/tools.js';
import { versionOf } from '../registry/server-document.js';
import { mcpTool, mcpToolNames } from './tools.js';
import { callCollectionTool, type CallContext } from './call.js';
import { callMetaTool, metaTools, type McpMode } from './modes.js';
import { ENV_INPUT_KEY, takesUrlElicitation2026, type EnvElicitation } from './env-elicit.js';
import { originOf } from '../oauth/provider.js';
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
import { progressSink, progressTokenOf } from './progress.js';
import { z } from 'zod';
import { asksForTasks2026, callOrTask2026, mcpRequestKey, TASKS_EXTENSION, tasks2026Handlers } from './tasks.js';

/**
 * How long a client may reuse a collection's `tools/list` (and `server/discover`) result, in milliseconds. Short: a
 * change to the collection shows within it. Shared caches only for public collections (a private one's list is the
 * owner's).
 */
export const TOOLS_LIST_TTL_MS = 60_000;

/** The HTTP request as the web-standard `Request` the SDK reads (the body is Koa's parsed one, given beside it). */
function webRequest(ctx: Context, signal?: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(ctx.req.headers)) {
    if (value === undefined || name === 'content-length' || name === 'transfer-encoding' || name === 'connection') continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  // Without a signal it is only classified (from the parsed body given beside it): no body to serialize.
  return new Request(ctx.href, { method: ctx.method, headers, ...(signal ? { body: JSON.stringify(ctx.request.body ?? null), signal } : {}) });
}

/**
 * Whether the request is a 2026-07-28 one (a `_meta` protocol-version claim in the body, or a modern
 * `MCP-Protocol-Version` header): the SDK's own routing predicate.
 */
export async function isModernMcpRequest(ctx: Context): Promise<boolean> {
  if (ctx.method !== 'POST' || ctx.request.body === undefined) return false;
  return !(await isLegacyRequest(webRequest(ctx), ctx.request.body));
}

/** One collection as a 2026-era server: the same tools and calls as the 2025 era's. */
async function modernCollectionServer(
  deps: AppDeps,
  c: CollectionRow,
  call: Omit<CallContext, 'signal'>,
  mode: McpMode,
  origin: string,
  method: unknown,
): Promise<Server> {
  const cache = { ttlMs: TOOLS_LIST_TTL_MS, cacheScope: c.is_public ? ('public' as const) : ('private' as const) };
  let named: Promise<Map<string, ToolRow>> | undefined;
  const tools = () => (named ??= collectionTools(deps, c).then(mcpToolNames));
  // Its servers' resources, prompts and icons (api/mcp/offer.ts): read by the requests that answer from them.
  const offer = needsOffer(method) ? await collectionOffer(deps, (await tools()).values()) : undefined;
  const server = new Server(
    { name: `toolshed:${c.owner_username}/${c.uid}`, title: c.name, version: versionOf(c.revision) },
    {
      capabilities: {
        tools: { listChanged: false },
        ...(offer ? offerCapabilities(offer) : {}),
        // The tasks extension (api/mcp/tasks.ts), served in `all` mode only.
        ...(mode === 'all' ? { extensions: { [TASKS_EXTENSION]: {} } } : {}),
      },
      ...(c.description ? { instructions: c.description } : {}),
      jsonSchemaValidator: lazySchemaValidator,
      cacheHints: { 'tools/list': cache, 'server/discover': cache },
    },
  );
  if (mode === 'all') {
    const tasks = tasks2026Handlers({ call, tools });
    const byId = { params: z.looseObject({ taskId: z.string(), requestState: z.string().optional() }) };
    server.setRequestHandler(
      'tasks/get' as never,
      byId as never,
      (async (p: { taskId: string }) => {
        const task = await tasks.get(p.taskId);
        if (!task) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Task not found: ${p.taskId}`);
        return task;
      }) as never,
    );
    server.setRequestHandler('tasks/cancel' as never, byId as never, (async (p: { taskId: string }) => tasks.cancel(p.taskId)) as never);
  }
  const listed = async (): Promise<Tool[]> =>
    (mode === 'search' ? metaTools(await tools()) : [...(await tools())].map(([name, t]) => withIcons(mcpTool(name, t), t, offer))) as Tool[];
  if (offer?.hasResources) {
    server.setRequestHandler('resources/list', async () => listResources(offer) as never);
    server.setRequestHandler('resources/templates/list', async () => listResourceTemplates(offer) as never);
    server.setRequestHandler(
      'resources/read',
      async (req, extra) => (await readResource({ ...call, signal: extra.mcpReq.signal }, await tools(), offer, req.params.uri)) as never,
    );
  }
  if (offer?.hasPrompts) {
    server.setRequestHandler('prompts/list', async () => listPrompts(offer) as never);
    server.setRequestHandler(
      'prompts/get',
      async (req, extra) => (await getPrompt({ ...call, signal: extra.mcpReq.signal }, await tools(), offer, req.params.name, req.params.arguments)) as never,
    );
  }
  server.setRequestHandler('tools/list', async (req) => {
    // The whole list is one page: no cursor was ever given, so any cursor is not one of ours.
    if (req.params?.cursor !== undefined)
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid params: cursor: tools/list has one page; this cursor was not given by it');
    return { tools: await listed() };
  });
  server.setRequestHandler('tools/call', async (req, extra) => {
    const { name, arguments: args } = req.params;
    // A client that declares URL elicitation in this request's `_meta` is asked for missing env with `input_required`
    // (api/mcp/env-elicit.ts); its retry carries our `requestState` and its answer back.
    const capabilities = (extra.mcpReq.envelope as Record<string, unknown> | undefined)?.['io.modelcontextprotocol/clientCapabilities'];
    const answer = inputResponse(extra.mcpReq.inputResponses, ENV_INPUT_KEY);
    const elicit: EnvElicitation | undefined = takesUrlElicitation2026(capabilities)
      ? {
          era: '2026-07-28',
          origin,
          collection: c,
          requestState: extra.mcpReq.requestState<string>(),
          answer: answer.kind === 'elicit' ? answer.action : undefined,
        }
      : undefined;
    const context = {
      ...call,
      signal: extra.mcpReq.signal,
      elicit,
      progress: progressSink(progressTokenOf(extra.mcpReq._meta), extra.mcpReq.notify as (n: never) => Promise<void>),
      mcpRequest: mcpRequestKey(call, c.id, extra.mcpReq.id),
      cancelOnDisconnect: true,
    };
    // A client that declared the tasks extension gets a task for a call still running after TASK_AFTER_MS (api/mcp/tasks.ts).
    const answered =
      mode === 'all' && asksForTasks2026(capabilities)
        ? await callOrTask2026(context, await tools(), name, args)
        : ((await (mode === 'search' ? callMetaTool : callCollectionTool)(context, await tools(), name, args)) as CallToolResult);
    if ('resultType' in answered && answered.resultType === 'task') return answered as never;
    const result = answered as CallToolResult;
    if (isInputRequiredResult(result)) return result;
    const declared = (await listed()).find((t) => t.name === name)?.outputSchema;
    return server.projectCallToolResult(result, declared);
  });
  return server;
}

/**
 * Serves one 2026-07-28 request: the SDK answers it (its envelope/header ladder, `server/discover`, our handlers) as a
 * web `Response`, written to the Node response as is (the headers other middleware set, CORS or rate limits, stay).
 * A client that goes away aborts the exchange, as the 2026 HTTP transport has it (there is no session to cancel in).
 */
export async function serveModernMcpRequest(ctx: Context, deps: AppDeps, c: CollectionRow, call: Omit<CallContext, 'signal'>, mode: McpMode): Promise<void> {
  const gone = new AbortController();
  ctx.res.on('close', () => {
    if (!ctx.res.writableFinished) gone.abort();
  });
  const handler = createMcpHandler(
    () => modernCollectionServer(deps, c, call, mode, originOf(ctx, deps), (ctx.request.body as { method?: unknown } | undefined)?.method),
    {
      legacy: 'reject',
      onerror: (err) => deps.logger.debug({ err, reqId: ctx.state.requestId }, 'mcp 2026-07-28 request refused or failed'),
    },
  );
  try {
    await writeResponse(ctx, deps, await handler.fetch(webRequest(ctx, gone.signal), { parsedBody: ctx.request.body }), gone.signal);
  } finally {
    await handler.close();
  }
}

async function writeResponse(ctx: Context, deps: AppDeps, res: Response, gone: AbortSignal): Promise<void> {
  ctx.respond = false;
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => (headers[k] = v));
  ctx.res.writeHead(res.status, headers);
  if (!res.body) {
    ctx.res.end();
    return;
  }
  try {
    await pipeline(Readable.fromWeb(res.body as import('node:stream/web').ReadableStream), ctx.res);
  } catch (err) {
    if (!gone.aborted) deps.logger.error({ err, reqId: ctx.state.requestId }, 'mcp 2026-07-28 response failed');
  }
}
