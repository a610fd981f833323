/**
 * What a collection serves besides tools (issue 44 items 4 and 5): the resources, resource templates and prompts of
 * the imported MCP servers whose tools it holds, as each version listed them at import (core/repos/mcp-offers.ts),
 * and their icons. `resources/list`, `resources/templates/list` and `prompts/list` answer from that record;
 * `resources/read` and `prompts/get` run on the server in the sandbox, as a tool call does (the same queue, job and
 * worker: core/executions, an execution of one of the collection's tools of that server with `op` set, not counted as
 * a call of the tool). The `resources` and `prompts` capabilities are advertised only when the collection has some.
 *
 * Names never collide: prompts are named by the rules tools are (core/tools/tool-names.ts: the prompt's own name, and
 * on a clash `<package-basename>__<name>`, …). A resource keeps its URI (the server's tools hand them out in resource
 * links); a read goes to the server that lists the URI, else to the one whose template matches it, else — when only one
 * server of the collection has resources — to that one. Two servers that list the same URI: the first in the
 * collection's order serves it.
 */
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { AppDeps } from '../deps.js';
import { AppError } from '../../core/infra/errors.js';
import { runTool } from '../../core/executions/tool-calls.js';
import { isFinalExecution, type ExecutionRow } from '../../core/repos/executions.js';
import type { ToolRow } from '../../core/repos/tools.js';
import { findMcpOffers, offerKey } from '../../core/repos/mcp-offers.js';
import { offersPrompts, offersResources, type McpIcon, type McpOffer, type McpPrompt, type McpServerOp } from '../../core/packages/mcp-offer.js';
import { uniqueToolNames } from '../../core/tools/tool-names.js';
import { declaringPackages, envForTool } from '../../core/tools/tool-env.js';
import { isPlainObject } from '../../core/text/plain-object.js';
import { givenEnvFromHeaders } from './tools.js';
import type { CallContext } from './call.js';

/** JSON-RPC error MCP uses for an unknown resource. */
const RESOURCE_NOT_FOUND = -32002;

/** One server of the collection: its offer and the tool of the collection a read or get runs under. */
interface Served {
  offer: McpOffer;
  tool: ToolRow;
}

export interface CollectionOffer {
  servers: Served[];
  prompts: Map<string, { prompt: McpPrompt; server: Served }>;
  hasResources: boolean;
  hasPrompts: boolean;
  /** A tool's icons: its own, else its server's. */
  iconsOf(t: ToolRow): McpIcon[] | undefined;
}

/** The methods that need the offer (the capabilities, or an answer from it). */
export function needsOffer(method: unknown): boolean {
  return (
    typeof method === 'string' && (method === 'initialize' || method === 'server/discover' || method === 'tools/list' || /^(resources|prompts)\//.test(method))
  );
}

/** The offers of the collection's MCP servers, in the collection's order (one read, cached: versions never change). */
export async function collectionOffer(deps: Pick<AppDeps, 'db'>, tools: Iterable<ToolRow>): Promise<CollectionOffer> {
  const mcp = [...tools].filter((t) => t.package_mcp);
  const offers = await findMcpOffers(
    deps.db,
    mcp.map((t) => ({ packageId: t.package_id, version: t.package_version })),
  );
  const servers = new Map<string, Served>();
  for (const t of mcp) {
    const k = offerKey(t.package_id, t.package_version);
    const offer = offers.get(k);
    // The first healthy tool of the server is the one its reads run under (a BROKEN one would be refused).
    if (offer && (!servers.has(k) || (servers.get(k)!.tool.health_status === 'BROKEN' && t.health_status !== 'BROKEN'))) servers.set(k, { offer, tool: t });
  }
  const list = [...servers.values()];
  const all = list.flatMap((s) => (s.offer.prompts ?? []).map((prompt) => ({ prompt, server: s })));
  const named = uniqueToolNames(
    all,
    (p) => ({ id: `${p.server.tool.package_id}${p.prompt.name}`, name: p.prompt.name, packageName: p.server.tool.package_name }),
    { maxLength: 128, allowed: 'A-Za-z0-9_.-' },
  );
  return {
    servers: list,
    prompts: named,
    hasResources: list.some((s) => offersResources(s.offer)),
    hasPrompts: list.some((s) => offersPrompts(s.offer)),
    iconsOf: (t) => {
      const o = offers.get(offerKey(t.package_id, t.package_version));
      return o?.toolIcons?.[t.export_name] ?? o?.icons;
    },
  };
}

/** The capabilities the offer adds. */
export function offerCapabilities(o: CollectionOffer): { resources?: { listChanged: false }; prompts?: { listChanged: false } } {
  return {
    ...(o.hasResources ? { resources: { listChanged: false } } : {}),
    ...(o.hasPrompts ? { prompts: { listChanged: false } } : {}),
  };
}

export function listResources(o: CollectionOffer) {
  const seen = new Set<string>();
  const resources = o.servers.flatMap((s) => (s.offer.resources ?? []).filter((r) => !seen.has(r.uri) && seen.add(r.uri)));
  return { resources };
}

export function listResourceTemplates(o: CollectionOffer) {
  const seen = new Set<string>();
  const resourceTemplates = o.servers.flatMap((s) => (s.offer.resourceTemplates ?? []).filter((r) => !seen.has(r.uriTemplate) && seen.add(r.uriTemplate)));
  return { resourceTemplates };
}

export function listPrompts(o: CollectionOffer) {
  return { prompts: [...o.prompts].map(([name, p]) => ({ ...p.prompt, name })) };
}

/** Whether a URI fits an RFC 6570 template (each expression as one or more characters, `/` only for `{+x}`, `{/x}`). */
function fitsTemplate(template: string, uri: string): boolean {
  let pattern = '';
  for (const part of template.split(/(\{[^}]*\})/)) {
    if (part.startsWith('{') && part.endsWith('}')) pattern += /^\{[+#/]/.test(part) ? '.+' : /^\{\?/.test(part) ? '(?:\\?.*)?' : '[^/?#]+';
    else pattern += part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${pattern}$`).test(uri);
}

/** The server a URI is read from (see the module's comment), or undefined. */
function serverOfUri(o: CollectionOffer, uri: string): Served | undefined {
  return (
    o.servers.find((s) => s.offer.resources?.some((r) => r.uri === uri)) ??
    o.servers.find((s) => s.offer.resourceTemplates?.some((t) => fitsTemplate(t.uriTemplate, uri))) ??
    (o.servers.filter((s) => offersResources(s.offer)).length === 1 ? o.servers.find((s) => offersResources(s.offer)) : undefined)
  );
}

/** Runs `op` on the server through the job path; the server's result, or the protocol error that says why not. */
async function runOnServer(
  c: CallContext,
  tools: Map<string, ToolRow>,
  s: Served,
  op: McpServerOp,
  params: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const declarers = declaringPackages(tools.values());
  const { env } = envForTool(s.tool, givenEnvFromHeaders(c.headers, tools.values()), declarers);
  let e: ExecutionRow;
  try {
    e = await runTool(
      c.deps,
      {
        tool: s.tool,
        params,
        env,
        caller: c.caller,
        origin: 'mcp',
        limit: { client: c.client, maxActive: c.deps.config.MAX_ACTIVE_EXECUTIONS },
        mcp: { op },
      },
      { signal: c.signal },
    );
  } catch (err) {
    if (err instanceof AppError && err.status < 500) throw new McpError(ErrorCode.InvalidRequest, err.message);
    c.deps.logger.error({ err, toolId: s.tool.id, op }, 'mcp server request failed');
    throw new McpError(ErrorCode.InternalError, 'Internal error');
  }
  if (!isFinalExecution(e)) throw new McpError(ErrorCode.InternalError, `The request did not finish in time; poll GET /api/executions/${e.id}`);
  if (e.status === 'succeeded' && isPlainObject(e.result)) return e.result;
  const error = e.error ?? { code: 'INTERNAL', message: 'The request failed' };
  if (error.code === 'TOOL_ERROR') {
    // The server's own refusal (an unknown URI or prompt, a missing argument): its message, with its JSON-RPC code.
    const code = /MCP error (-?\d+)/.exec(error.message)?.[1];
    throw new McpError(
      code ? Number(code) : op === 'resources/read' ? RESOURCE_NOT_FOUND : ErrorCode.InvalidParams,
      error.message.replace(/^MCP error -?\d+: /, ''),
    );
  }
  throw new McpError(ErrorCode.InternalError, `${error.code}: ${error.message}`);
}

export async function readResource(c: CallContext, tools: Map<string, ToolRow>, o: CollectionOffer, uri: unknown) {
  if (typeof uri !== 'string' || uri.length === 0 || uri.length > 2048)
    throw new McpError(ErrorCode.InvalidParams, 'Invalid params: uri: a resource URI (1–2048 characters)');
  const s = serverOfUri(o, uri);
  if (!s)
    throw new McpError(
      RESOURCE_NOT_FOUND,
      `Resource not found: ${uri.slice(0, 200)} (resources/list and resources/templates/list give those of this collection)`,
    );
  return runOnServer(c, tools, s, 'resources/read', { uri });
}

export async function getPrompt(c: CallContext, tools: Map<string, ToolRow>, o: CollectionOffer, name: unknown, args: unknown) {
  const p = typeof name === 'string' ? o.prompts.get(name) : undefined;
  if (!p) throw new McpError(ErrorCode.InvalidParams, `Unknown prompt '${String(name).slice(0, 200)}'; prompts/list gives the prompts of this collection`);
  if (args !== undefined && (!isPlainObject(args) || Object.values(args).some((v) => typeof v !== 'string'))) {
    throw new McpError(ErrorCode.InvalidParams, 'Invalid params: arguments: an object of strings');
  }
  const missing = (p.prompt.arguments ?? []).filter((a) => a.required && !(isPlainObject(args) && a.name in args)).map((a) => a.name);
  if (missing.length > 0) throw new McpError(ErrorCode.InvalidParams, `Invalid params: arguments: missing ${missing.join(', ')}`);
  return runOnServer(c, tools, p.server, 'prompts/get', { name: p.prompt.name, ...(args ? { arguments: args } : {}) });
}

/** A tool definition with its icons (its own, else its server's), when the client's version has icons. */
export function withIcons<T extends object>(def: T, t: ToolRow, o: CollectionOffer | undefined): T {
  const icons = o?.iconsOf(t);
  return icons ? { ...def, icons } : def;
}
