/**
 * How a collection's tools look to an MCP client: unique, stable names (the tool's name; on a clash, prefixed with
 * its package), their JSON Schemas as `inputSchema`, and the env a call gets from `X-Tool-Env-<NAME>` headers.
 * Everything here is a pure function of the tool set and the request, so that names never depend on order or time.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ToolRow } from '../core/repos/tools.js';

/** MCP tool names: 1–128 characters of letters, digits, `_`, `-` and `.`. */
const MAX_NAME = 128;
const clean = (s: string) => s.replace(/[^A-Za-z0-9_.-]/g, '_');
const basename = (packageName: string) => packageName.slice(packageName.lastIndexOf('/') + 1);

/** Ever more specific names; the last one holds the tool id, so it cannot clash. */
const LEVELS: ((t: ToolRow) => string)[] = [
  (t) => clean(t.name).slice(0, MAX_NAME),
  (t) => `${clean(basename(t.package_name))}__${clean(t.name)}`.slice(0, MAX_NAME),
  (t) => `${clean(t.package_name.replace(/^@/, ''))}__${clean(t.name)}`.slice(0, MAX_NAME),
  (t) => `${clean(t.name).slice(0, 90)}__${t.id.replace(/-/g, '')}`,
];

/**
 * Name → tool. A tool keeps its plain name unless another tool of the set has the same one; then every tool of the
 * clash gets the next level (`<package-basename>__<tool>`, then the full package, then the id), until none clash.
 */
export function mcpToolNames(tools: ToolRow[]): Map<string, ToolRow> {
  const level = new Map(tools.map((t) => [t.id, 0]));
  for (;;) {
    const byName = new Map<string, ToolRow[]>();
    for (const t of tools) {
      const name = LEVELS[level.get(t.id)!](t);
      byName.set(name, [...(byName.get(name) ?? []), t]);
    }
    const clashing = [...byName.values()].filter((group) => group.length > 1).flat();
    const bumpable = clashing.filter((t) => level.get(t.id)! < LEVELS.length - 1);
    if (bumpable.length === 0) {
      return new Map([...byName.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([name, group]) => [name, group[0]]));
    }
    for (const t of bumpable) level.set(t.id, level.get(t.id)! + 1);
  }
}

/** The tool's JSON Schema as MCP wants it (an object schema at the top). */
function inputSchemaOf(t: ToolRow): Tool['inputSchema'] {
  const schema = t.input_schema ?? {};
  if (schema.type === 'object') return schema as Tool['inputSchema'];
  return { ...schema, type: 'object' };
}

export function mcpTool(name: string, t: ToolRow): Tool {
  return {
    name,
    title: `${t.package_name}/${t.name}`,
    description: t.description,
    inputSchema: inputSchemaOf(t),
  };
}

/** Turns a header suffix (`WEBHOOK_SECRET`, `webhook-secret`) into an env var name (`WEBHOOK_SECRET`). */
const envKey = (s: string) => s.toUpperCase().replace(/-/g, '_');
const ENV_HEADER = 'x-tool-env-';

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
  for (const spec of t.package_env) {
    const value = given.get(envKey(spec.name));
    if (value !== undefined) env[spec.name] = value;
  }
  return env;
}

/** The header a client sends for an env var. */
export function envHeaderName(name: string): string {
  return `X-Tool-Env-${name}`;
}
