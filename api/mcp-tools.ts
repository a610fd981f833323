/**
 * How a collection's tools look to an MCP client: unique, stable names (the tool's name; on a clash, prefixed with
 * its package), their JSON Schemas as `inputSchema`, and the env a call gets from `X-Tool-Env-<NAME>` headers.
 * Everything here is a pure function of the tool set and the request, so that names never depend on order or time.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ToolRow } from '../core/repos/tools.js';
import { uniqueToolNames } from '../core/tool-names.js';
import { countJsonTokens } from '../core/tokens.js';
import { toolEnv } from '../core/tool-env.js';

/** MCP tool names: 1–128 letters, digits, `_`, `-` and `.`; clashes resolved by the shared rules (core/tool-names.ts). */
export function mcpToolNames(tools: ToolRow[]): Map<string, ToolRow> {
  return uniqueToolNames(tools, (t) => ({ id: t.id, name: t.name, packageName: t.package_name }), { maxLength: 128, allowed: 'A-Za-z0-9_.-' });
}

/** The tool's JSON Schema as MCP wants it (an object schema at the top). */
function inputSchemaOf(t: ToolRow): Tool['inputSchema'] {
  const schema = t.input_schema ?? {};
  if (schema.type === 'object') return schema as Tool['inputSchema'];
  return { ...schema, type: 'object' };
}

/**
 * MCP tool annotations from the package's declared permissions. A tool that does not declare `network` runs in a
 * sandbox without any (api → worker → sandbox enforce it) and with a fresh tmp: it cannot change anything outside
 * itself, so it is read-only, not destructive, idempotent and closed-world — facts, not hints. A tool with network
 * gets what its package declares, else the protocol's cautious defaults (may write, may destroy, not idempotent).
 */
export function annotationsOf(t: Pick<ToolRow, 'permissions'>): NonNullable<Tool['annotations']> {
  const p = t.permissions ?? {};
  if (!p.network) return { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
  const readOnly = p.readOnly === true;
  return {
    readOnlyHint: readOnly,
    destructiveHint: readOnly ? false : (p.destructive ?? true),
    idempotentHint: p.idempotent ?? readOnly,
    openWorldHint: true,
  };
}

export function mcpTool(name: string, t: ToolRow): Tool {
  return {
    name,
    title: `${t.package_name}/${t.name}`,
    description: t.description,
    inputSchema: inputSchemaOf(t),
    ...(t.output_schema?.type === 'object' ? { outputSchema: t.output_schema as Tool['outputSchema'] } : {}),
    annotations: annotationsOf(t),
  };
}

/**
 * Counted once per row object: the tool cache hands out the same row until the tool changes (a change makes a new
 * row), so a hot detail route does not rebuild and re-tokenize the definition on every request.
 */
const tokenCountOfRow = new WeakMap<ToolRow, number>();

/** Tokens (core/tokens.ts) of one tool's MCP definition, under its own name. */
export function toolTokenCount(t: ToolRow): number {
  let n = tokenCountOfRow.get(t);
  if (n === undefined) tokenCountOfRow.set(t, (n = countJsonTokens(mcpTool(t.name, t))));
  return n;
}

/** Tokens of a collection's whole `tools/list` result. */
export function toolsListTokenCount(tools: ToolRow[]): number {
  return countJsonTokens({ tools: [...mcpToolNames(tools)].map(([name, t]) => mcpTool(name, t)) });
}

/** Turns a header suffix (`WEBHOOK_SECRET`, `webhook-secret`) into an env var name (`WEBHOOK_SECRET`). */
const envKey = (s: string) => s.toUpperCase().replace(/-/g, '_');
export const ENV_HEADER = 'x-tool-env-';

/**
 * The env of one call: for each env var that the tool's package declares, the value of its `X-Tool-Env-<NAME>`
 * header (header names are case-insensitive; `-` may stand for `_`, for proxies that drop underscores). Headers for
 * variables the package does not declare are not passed, so a tool never sees another package's secrets.
 */
export function envFromHeaders(t: ToolRow, headers: IncomingHttpHeaders): Record<string, string> {
  const given = new Map<string, string>();
  for (const [header, value] of Object.entries(headers)) {
    if (!header.startsWith(ENV_HEADER) || value === undefined) continue;
    given.set(envKey(header.slice(ENV_HEADER.length)), Array.isArray(value) ? value.join(', ') : value);
  }
  const env: Record<string, string> = {};
  for (const spec of toolEnv(t)) {
    const value = given.get(envKey(spec.name));
    if (value !== undefined) env[spec.name] = value;
  }
  return env;
}

/** The header a client sends for an env var. */
export function envHeaderName(name: string): string {
  return `X-Tool-Env-${name}`;
}
