/**
 * How a collection's tools are offered over MCP. `all` (the default): every tool in `tools/list`. `search` (on demand;
 * `?mode=search` on the endpoint, or the collection's `mcp_mode`): two meta-tools instead — `search_tools` (the
 * registry search's ranking over the collection's tools, core/search, best first, with their schemas) and `call_tool`
 * (runs one of them through the same queue and sandbox as a direct call) — so that a client pays for two definitions
 * up front and loads the ones it needs.
 */
import { ErrorCode, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { searchDocumentOf, type ToolRow } from '../../core/repos/tools.js';
import { rankDocuments } from '../../core/search/embedded.js';
import type { SearchEngine } from '../../core/search/engine.js';
import type { UsageSource } from '../../core/search/usage.js';
import { mcpTool } from './tools.js';
import { riskyLast } from '../../core/search/risky-last.js';
import { servedRisks } from '../../core/repos/tool-risks.js';
import { callCollectionTool, type CallContext } from './call.js';
import { isPlainObject } from '../../core/text/plain-object.js';

export const MCP_MODES = ['all', 'search'] as const;
export type McpMode = (typeof MCP_MODES)[number];

export const SEARCH_TOOL = 'search_tools';
export const CALL_TOOL = 'call_tool';
const DEFAULT_RESULTS = 5;
const MAX_RESULTS = 20;
const MAX_QUERY = 1000;

/**
 * The two meta-tools. call_tool's hints are the collection's tools' taken together, each only as far as they declare
 * it: read-only (idempotent) when every tool says so, not when one says not, else left out; destructive when one says
 * so, not when every tool says not, else left out; open-world when one has network.
 */
export function metaTools(named: Map<string, ToolRow>): Tool[] {
  const defs = [...named].map(([name, t]) => mcpTool(name, t).annotations ?? {});
  const every = (k: 'readOnlyHint' | 'idempotentHint') => (defs.every((d) => d[k] === true) ? true : defs.some((d) => d[k] === false) ? false : undefined);
  const some = (k: 'destructiveHint') => (defs.some((d) => d[k] === true) ? true : defs.every((d) => d[k] === false) ? false : undefined);
  const hints = { readOnlyHint: every('readOnlyHint'), destructiveHint: some('destructiveHint'), idempotentHint: every('idempotentHint') };
  const declared = Object.fromEntries(Object.entries(hints).filter(([, v]) => v !== undefined));
  return [
    {
      name: SEARCH_TOOL,
      title: 'Search the tools of this collection',
      description: `Finds tools of this collection (${named.size} in all) for a task, best match first, with the JSON Schema of their input. Call one with ${CALL_TOOL}.`,
      inputSchema: {
        type: 'object',
        properties: {
          query: { type: 'string', minLength: 1, maxLength: MAX_QUERY, description: 'What you want to do, in a few words' },
          limit: { type: 'integer', minimum: 1, maximum: MAX_RESULTS, default: DEFAULT_RESULTS, description: 'How many tools to return at most' },
        },
        required: ['query'],
        additionalProperties: false,
      },
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    {
      name: CALL_TOOL,
      title: 'Call a tool of this collection',
      description: `Runs one tool of this collection by the name ${SEARCH_TOOL} gave, with arguments that match its input schema.`,
      inputSchema: {
        type: 'object',
        properties: {
          name: { type: 'string', minLength: 1, description: `The tool's name, as ${SEARCH_TOOL} returned it` },
          arguments: { type: 'object', description: "The tool's input", additionalProperties: true },
        },
        required: ['name'],
        additionalProperties: false,
      },
      annotations: { ...declared, openWorldHint: defs.some((d) => d.openWorldHint === true) },
    },
  ];
}

/**
 * The collection's tools that match the query, best first: the registry's search engine (core/search, with the
 * sentence encoder for long queries when it is on) over just these tools, so that over the same tools the order is
 * `GET /api/tools/search`'s. BROKEN tools are left out, as there. With Meilisearch, the embedded ranking.
 */
export async function searchTools(named: Map<string, ToolRow>, query: string, limit: number, search: SearchEngine, usage?: UsageSource): Promise<Tool[]> {
  const nameOf = new Map([...named].map(([name, t]) => [t.id, name]));
  const docs = [...named.values()].map(searchDocumentOf);
  const ranked = search.rankAmong ? await search.rankAmong(docs, query) : rankDocuments(docs, query, undefined, usage);
  const rows = ranked.map((h) => named.get(nameOf.get(h.id)!)!);
  return riskyLast(rows, (t) => servedRisks(t).length > 0)
    .slice(0, limit)
    .map((t) => mcpTool(nameOf.get(t.id)!, t));
}

function invalid(message: string): never {
  throw new McpError(ErrorCode.InvalidParams, message);
}

/** A `tools/call` in search mode. */
export async function callMetaTool(
  c: CallContext,
  named: Map<string, ToolRow>,
  name: string,
  args: Record<string, unknown> | undefined,
): Promise<CallToolResult> {
  const a = args ?? {};
  // The input schemas advertised above are what is enforced (no other key, the query's length, the limit's range).
  const only = (tool: string, keys: string[]) => {
    const extra = Object.keys(a).find((k) => !keys.includes(k));
    if (extra !== undefined) invalid(`${tool}: unknown argument '${extra.slice(0, 100)}' (it takes ${keys.join(', ')})`);
  };
  if (name === SEARCH_TOOL) {
    only(SEARCH_TOOL, ['query', 'limit']);
    if (typeof a.query !== 'string' || a.query.trim() === '') invalid(`${SEARCH_TOOL}: 'query' must be a non-empty string`);
    if (a.query.length > MAX_QUERY) invalid(`${SEARCH_TOOL}: 'query' must be at most ${MAX_QUERY} characters`);
    const limit = a.limit === undefined ? DEFAULT_RESULTS : a.limit;
    if (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > MAX_RESULTS) {
      invalid(`${SEARCH_TOOL}: 'limit' must be an integer from 1 to ${MAX_RESULTS}`);
    }
    c.deps.learning.search(c.caller?.userId, a.query);
    const tools = await searchTools(named, a.query, limit as number, c.deps.search, c.deps.searchUsage);
    const structured = { tools };
    return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
  }
  if (name === CALL_TOOL) {
    only(CALL_TOOL, ['name', 'arguments']);
    if (typeof a.name !== 'string') invalid(`${CALL_TOOL}: 'name' must be the name of a tool that ${SEARCH_TOOL} returned`);
    if (a.arguments !== undefined && !isPlainObject(a.arguments)) invalid(`${CALL_TOOL}: 'arguments' must be an object`);
    if (!named.has(a.name)) invalid(`${CALL_TOOL}: Unknown tool '${a.name.slice(0, 200)}'; ${SEARCH_TOOL} gives the tools of this collection`);
    return callCollectionTool(c, named, a.name, a.arguments as Record<string, unknown> | undefined);
  }
  return invalid(`Unknown tool '${name}': in search mode the tools are ${SEARCH_TOOL} and ${CALL_TOOL}`);
}
