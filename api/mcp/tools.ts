/**
 * How a collection's tools look to an MCP client: unique, stable names (the tool's name; on a clash, prefixed with
 * its package), their JSON Schemas as `inputSchema`, and the env a call gets from `X-Tool-Env-<NAME>` and `X-Tool-Env-<package>--<NAME>` headers.
 * Everything here is a pure function of the tool set and the request, so that names never depend on order or time.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ToolRow } from '../../core/repos/tools.js';
import { uniqueToolNames } from '../../core/tools/tool-names.js';
import { countJsonTokens } from '../../core/text/tokens.js';
import type { GivenEnv } from '../../core/tools/tool-env.js';
import { servedRisks } from '../../core/repos/tool-risks.js';

/** MCP tool names: 1–128 letters, digits, `_`, `-` and `.`; clashes resolved by the shared rules (core/tools/tool-names.ts). */
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
 * MCP tool annotations: only what the package or its MCP server declared (a manifest's permissions; a server's own
 * annotations, kept as permissions at import: worker/import/mcp.ts), each hint left out when nothing declares it;
 * `openWorldHint` is whether the tool has network. A tool flagged for hidden instructions (core/packages/poisoning.ts)
 * is never served with `readOnlyHint`: some clients run read-only tools without asking.
 */
export function annotationsOf(t: Pick<ToolRow, 'permissions'> & Partial<Pick<ToolRow, 'risks' | 'risks_cleared_at'>>): NonNullable<Tool['annotations']> {
  const p = t.permissions ?? {};
  const a: NonNullable<Tool['annotations']> = {};
  if (typeof p.readOnly === 'boolean' && servedRisks(t).length === 0) a.readOnlyHint = p.readOnly;
  if (typeof p.destructive === 'boolean') a.destructiveHint = p.destructive;
  if (typeof p.idempotent === 'boolean') a.idempotentHint = p.idempotent;
  a.openWorldHint = p.network === true;
  return a;
}

export function mcpTool(name: string, t: ToolRow): Tool {
  const risks = servedRisks(t);
  return {
    name,
    title: `${t.package_name}/${t.name}`,
    description: t.description,
    inputSchema: inputSchemaOf(t),
    ...(t.output_schema?.type === 'object' ? { outputSchema: t.output_schema as Tool['outputSchema'] } : {}),
    annotations: annotationsOf(t),
    ...(risks.length > 0 ? { _meta: { risks } } : {}),
  };
}

/**
 * Counted once per row object: the tool cache hands out the same row until the tool changes (a change makes a new
 * row), so a hot detail route does not rebuild and re-tokenize the definition on every request.
 */
const tokenCountOfRow = new WeakMap<ToolRow, number>();

/** Tokens (core/text/tokens.ts) of one tool's MCP definition, under its own name. */
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
/** Between the package and the variable in a scoped header: `X-Tool-Env-<package>--<NAME>`. */
const SCOPE_SEPARATOR = '--';
/** Header names are case-insensitive, and `-` may stand for `_` (for proxies that drop underscores). */
const headerForm = (s: string) => s.toLowerCase().replace(/_/g, '-');

/**
 * A package name as it appears in a header name: `@scope/name` → `scope.name` (`@` and `/` are not allowed in
 * header names; any other such character becomes `.` too).
 */
export function packageHeaderToken(packageName: string): string {
  return packageName.replace(/^@/, '').replace(/[^A-Za-z0-9!#$%&'*+.^_`|~-]/g, '.');
}

/**
 * The env values the request's headers give: `X-Tool-Env-<package>--<NAME>` is scoped to the package of the tool set
 * whose header token it names (and that declares NAME); any other `X-Tool-Env-<NAME>` is unscoped.
 */
export function givenEnvFromHeaders(headers: IncomingHttpHeaders, tools: Iterable<Pick<ToolRow, 'package_name' | 'package_env'>>): GivenEnv {
  const packages = new Map<string, { name: string; declares: Set<string> }>();
  for (const t of tools) {
    const token = headerForm(packageHeaderToken(t.package_name)) + SCOPE_SEPARATOR;
    const seen = packages.get(token) ?? { name: t.package_name, declares: new Set<string>() };
    for (const v of t.package_env ?? []) seen.declares.add(v.name);
    packages.set(token, seen);
  }
  const given: GivenEnv = { unscoped: {}, scoped: {} };
  for (const [header, raw] of Object.entries(headers)) {
    if (!header.startsWith(ENV_HEADER) || raw === undefined) continue;
    const value = Array.isArray(raw) ? raw.join(', ') : raw;
    const suffix = header.slice(ENV_HEADER.length);
    const form = headerForm(suffix);
    let scopedTo: string | undefined;
    for (const [token, p] of packages) {
      if (form.startsWith(token) && p.declares.has(envKey(suffix.slice(token.length)))) {
        scopedTo = p.name;
        (given.scoped[p.name] ??= {})[envKey(suffix.slice(token.length))] = value;
        break;
      }
    }
    if (!scopedTo) given.unscoped[envKey(suffix)] = value;
  }
  return given;
}

/** The header a client sends for an env var: unscoped, or scoped to one package when a package is given. */
export function envHeaderName(name: string, packageName?: string): string {
  return packageName === undefined ? `X-Tool-Env-${name}` : `X-Tool-Env-${packageHeaderToken(packageName)}${SCOPE_SEPARATOR}${name}`;
}

/** The header that gives `name` to `packageName`'s tools in this tool set: unscoped when only it declares the name. */
export function envHeaderFor(name: string, packageName: string, declarers: Map<string, string[]>): string {
  return (declarers.get(name)?.length ?? 0) > 1 ? envHeaderName(name, packageName) : envHeaderName(name);
}
