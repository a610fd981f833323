/**
 * A collection as an MCP Registry `ServerResponse` (official registry OpenAPI, v0.1): the server's name, a remote of
 * type streamable-http at its MCP endpoint with the headers a client may need, the revision as its version, and
 * Toolshed's own facts (tools with schemas and annotations, env, health, rating, scenarios, token weight) under one
 * namespaced `_meta` key. An imported MCP server (a package with `manifest.mcp`) is a server of its own: named
 * `<rdns>.npm/<name>` (`<rdns>.npm.<scope>/<name>` for `@scope/name`), its package version as its version, and one
 * `packages[]` entry (npm, stdio, its arguments and environment variables). Pure: rows in, document out.
 */
import type { CollectionRow } from '../../core/repos/collections.js';
import type { PackageRow } from '../../core/repos/packages.js';
import type { ToolRow } from '../../core/repos/tools.js';
import type { ScenarioFigures } from '../../core/repos/registry.js';
import { countJsonTokens, TOKEN_ENCODING } from '../../core/text/tokens.js';
import { mcpTool, mcpToolNames, envHeaderFor } from '../mcp/tools.js';
import { declaringPackages, toolEnv } from '../../core/tools/tool-env.js';
import { cutAtWord } from '../../core/text/text-cut.js';
import { ARG_VARIABLE } from '../../core/packages/mcp-server.js';
import { variablesIn } from '../../core/packages/toolkit.js';

export const DESCRIPTION_MAX = 100;

/** `tools.example.com` → `com.example.tools`. */
export function reverseDns(host: string): string {
  return host.split('.').reverse().join('.');
}

export function serverName(namespace: string, c: Pick<CollectionRow, 'owner_username' | 'uid'>): string {
  return `${reverseDns(namespace)}/${c.owner_username}.${c.uid}`;
}

/** `<rdns>/<username>.<uid>` → its parts (usernames never contain a dot); undefined for another namespace. */
export function parseServerName(namespace: string, name: string): { username: string; uid: string } | undefined {
  const prefix = `${reverseDns(namespace)}/`;
  if (!name.startsWith(prefix)) return undefined;
  const rest = name.slice(prefix.length);
  const dot = rest.indexOf('.');
  if (dot <= 0 || dot === rest.length - 1) return undefined;
  return { username: rest.slice(0, dot), uid: rest.slice(dot + 1) };
}

/** The server version of a revision. Only the latest version of a collection is kept. */
export const versionOf = (revision: number) => `1.0.${revision}`;

export const metaKey = (namespace: string) => `${reverseDns(namespace)}/toolshed`;

/** At most 100 characters, cut at a word where possible; never empty. */
export function shortDescription(c: Pick<CollectionRow, 'name' | 'description'>, toolCount: number): string {
  const text = (c.description ?? '').replace(/\s+/g, ' ').trim() || `${c.name}: a Toolshed collection of ${toolCount} tool${toolCount === 1 ? '' : 's'}`;
  return cutAtWord(text, DESCRIPTION_MAX);
}

function healthOf(tools: ToolRow[]) {
  const count = (s: string) => tools.filter((t) => t.health_status === s).length;
  const healthy = count('HEALTHY');
  const broken = count('BROKEN');
  const status = tools.length > 0 && healthy === tools.length ? 'HEALTHY' : broken > 0 ? 'BROKEN' : 'UNKNOWN';
  return { status, healthy, broken, unknown: tools.length - healthy - broken };
}

function ratingOf(tools: ToolRow[]) {
  const sum = tools.reduce((a, t) => a + t.rating_sum, 0);
  const count = tools.reduce((a, t) => a + t.rating_count, 0);
  return { average: count === 0 ? null : Math.round((sum / count) * 100) / 100, count };
}

/**
 * Env vars of the collection's packages, once per header a client sends: `X-Tool-Env-<NAME>` where one package
 * declares the name, else one `X-Tool-Env-<package>--<NAME>` per package (core/tools/tool-env.ts), with the tools that
 * require it (`neededBy`). The header is required of a client only when every tool of the collection requires it: a
 * client without it can still use the others (issue 44 item 3).
 */
function envOf(tools: ToolRow[]) {
  const declarers = declaringPackages(tools);
  type Entry = { name: string; required: boolean; description: string | null; header: string; packages: string[]; neededBy: string[] };
  const byHeader = new Map<string, Entry>();
  for (const t of tools) {
    for (const v of toolEnv(t)) {
      const header = envHeaderFor(v.name, t.package_name, declarers);
      const seen = byHeader.get(header);
      byHeader.set(header, {
        name: v.name,
        required: (seen?.required ?? false) || v.required,
        description: seen?.description ?? v.description ?? null,
        header,
        packages: [...new Set([...(seen?.packages ?? []), t.package_name])].sort(),
        neededBy: [...(seen?.neededBy ?? []), ...(v.required ? [t.name] : [])],
      });
    }
  }
  return { declarers, env: [...byHeader.values()].sort((a, b) => a.name.localeCompare(b.name) || a.header.localeCompare(b.header)) };
}

/** The MCP tools of a collection as `tools/list` gives them, with each one's token weight and the listing's. */
export function toolDefinitions(tools: ToolRow[]) {
  const defs = [...mcpToolNames(tools)].map(([name, t]) => ({ row: t, def: mcpTool(name, t) }));
  const withTokens = defs.map(({ row, def }) => ({ row, def, tokenCount: countJsonTokens(def) }));
  return { tools: withTokens, tokenCount: countJsonTokens({ tools: defs.map((d) => d.def) }) };
}

type McpLaunch = { args: string[] };
type DeclaredEnv = { name: string; description?: string; required: boolean; secret?: boolean; default?: string }[];

/**
 * One argument as server.json has it: a variable it names (`${MONDAY_TOKEN}`, the caller's value) becomes the
 * registry's `{MONDAY_TOKEN}` placeholder, described under `variables`.
 */
function packageArgument(arg: string, env: DeclaredEnv) {
  const names = variablesIn(arg);
  if (names.length === 0) return { type: 'positional', value: arg };
  const variables = Object.fromEntries(
    names.map((n) => {
      const v = env.find((e) => e.name === n);
      return [n, { isRequired: v?.required ?? true, isSecret: v?.secret ?? true, ...(v?.description ? { description: v.description } : {}) }];
    }),
  );
  return { type: 'positional', value: arg.replace(ARG_VARIABLE, '{$1}'), variables };
}

/** An MCP server from npm as a registry `packages[]` entry: npm, stdio, its arguments and environment variables. */
export function npmPackageEntry(name: string, version: string, mcp: McpLaunch, env: DeclaredEnv | null) {
  return {
    registryType: 'npm',
    identifier: name,
    version,
    transport: { type: 'stdio' },
    ...(mcp.args.length > 0 ? { packageArguments: mcp.args.map((value) => packageArgument(value, env ?? [])) } : {}),
    environmentVariables: (env ?? []).map((v) => ({
      name: v.name,
      ...(v.description ? { description: v.description } : {}),
      isRequired: v.required,
      isSecret: v.secret ?? false,
      ...(v.default !== undefined ? { default: v.default } : {}),
    })),
  };
}

/**
 * The MCP servers from npm whose tools the collection holds, as the registry's `packages[]` (npm, stdio, their
 * arguments and environment variables): a client may run one itself instead of calling the remote.
 */
export function mcpPackages(tools: ToolRow[]): { packages?: Record<string, unknown>[] } {
  const byName = new Map<string, ToolRow>();
  for (const t of tools) if (t.package_mcp && !byName.has(t.package_name)) byName.set(t.package_name, t);
  if (byName.size === 0) return {};
  const packages = [...byName.values()]
    .sort((a, b) => a.package_name.localeCompare(b.package_name))
    .map((t) => npmPackageEntry(t.package_name, t.package_version, t.package_mcp!, t.package_env as DeclaredEnv));
  return { packages };
}

/** `<rdns>.npm` + `.scope/name` or `/name`: the registry name of an imported MCP server. */
export function packageServerName(namespace: string, packageName: string): string {
  const m = /^@([^/]+)\/(.+)$/.exec(packageName);
  return `${reverseDns(namespace)}.npm${m ? `.${m[1]}/${m[2]}` : `/${packageName}`}`;
}

/** A package server's name → its npm name and its key (the name after the namespace); undefined for any other name. */
export function parsePackageServerName(namespace: string, name: string): { packageName: string; key: string } | undefined {
  const prefix = `${reverseDns(namespace)}.npm`;
  if (!name.startsWith(prefix)) return undefined;
  const key = name.slice(prefix.length);
  const m = /^(?:\.([^/]+))?\/([^/]+)$/.exec(key);
  if (!m) return undefined;
  return { packageName: m[1] ? `@${m[1]}/${m[2]}` : m[2], key };
}

export interface ServerContext {
  namespace: string;
  baseUrl: string;
}

export function serverResponse(ctx: ServerContext, c: CollectionRow, tools: ToolRow[], scenarios: ScenarioFigures | undefined) {
  const defs = toolDefinitions(tools);
  const { env, declarers } = envOf(tools);
  const s = scenarios ?? { scenarios: 0, run: 0, passing: 0 };
  const headers = [
    {
      name: 'Authorization',
      description: c.is_public
        ? 'Optional: a Toolshed API key (Bearer) counts calls against your account instead of your address'
        : "Required: the collection is private; the owner's Toolshed API key",
      value: 'Bearer {toolshed_api_key}',
      isRequired: !c.is_public,
      isSecret: true,
      variables: { toolshed_api_key: { description: 'A Toolshed API key', isRequired: true, isSecret: true } },
    },
    ...env.map((v) => {
      const all = v.neededBy.length === tools.length;
      const needed = v.neededBy.length === 0 ? 'needed by no tool (optional)' : all ? 'needed by every tool' : `needed by ${v.neededBy.join(', ')} only`;
      return {
        name: v.header,
        description: `${v.description ?? `Environment variable ${v.name} for the tools of ${v.packages.join(', ')}`}; ${needed}; never stored`,
        isRequired: v.required && all,
        isSecret: true,
      };
    }),
  ];
  return {
    server: {
      $schema: 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json',
      name: serverName(ctx.namespace, c),
      title: c.name.slice(0, DESCRIPTION_MAX),
      description: shortDescription(c, tools.length),
      version: versionOf(c.revision),
      remotes: [{ type: 'streamable-http', url: `${ctx.baseUrl}/api/mcp/${c.owner_username}/${c.uid}/mcp`, headers }],
      ...mcpPackages(tools),
    },
    _meta: {
      [metaKey(ctx.namespace)]: {
        status: 'active',
        publishedAt: c.created_at.toISOString(),
        updatedAt: c.updated_at.toISOString(),
        isLatest: true,
        revision: c.revision,
        collection: { id: c.id, uid: c.uid, name: c.name, isPublic: c.is_public, owner: c.owner_username, likeCount: c.like_count },
        tokenEncoding: TOKEN_ENCODING,
        tokenCount: defs.tokenCount,
        toolCount: tools.length,
        requiredEnv: [...new Set(env.filter((v) => v.required).map((v) => v.name))],
        env,
        health: healthOf(tools),
        rating: ratingOf(tools),
        scenarios: { ...s, passRate: s.run === 0 ? null : Math.round((s.passing / s.run) * 1000) / 1000 },
        tools: defs.tools.map(({ row, def, tokenCount }) => ({
          ...def,
          toolId: `${row.package_name}::${row.name}`,
          package: { name: row.package_name, version: row.package_version },
          requiredEnv: toolEnv(row)
            .filter((v) => v.required)
            .map((v) => v.name),
          // Every variable the tool may read, optional ones too, with the header that gives it in this collection.
          env: toolEnv(row).map((v) => ({
            name: v.name,
            required: v.required,
            description: v.description ?? null,
            header: envHeaderFor(v.name, row.package_name, declarers),
          })),
          permissions: row.permissions,
          healthStatus: row.health_status,
          rating: { average: row.rating_count === 0 ? null : Math.round((row.rating_sum / row.rating_count) * 100) / 100, count: row.rating_count },
          tokenCount,
        })),
      },
    },
  };
}

/** An imported MCP server as a registry `ServerResponse` of its own. */
export function packageServerResponse(ctx: ServerContext, p: PackageRow, tools: ToolRow[]) {
  const mcp = p.manifest?.mcp as McpLaunch;
  const description = cutAtWord(
    (p.description ?? '').replace(/\s+/g, ' ').trim() || `${p.name}: an MCP server of ${tools.length} tool${tools.length === 1 ? '' : 's'}`,
    DESCRIPTION_MAX,
  );
  return {
    server: {
      $schema: 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json',
      name: packageServerName(ctx.namespace, p.name),
      title: p.name.slice(0, DESCRIPTION_MAX),
      description,
      version: p.version,
      packages: [npmPackageEntry(p.name, p.version, mcp, p.env as DeclaredEnv)],
    },
    _meta: {
      [metaKey(ctx.namespace)]: {
        status: 'active',
        publishedAt: p.created_at.toISOString(),
        updatedAt: p.updated_at.toISOString(),
        isLatest: true,
        package: { name: p.name, version: p.version, category: p.category, official: p.official, kind: 'mcp' },
        toolCount: tools.length,
        health: healthOf(tools),
        tools: tools.map((t) => ({
          name: t.name,
          toolId: `${p.name}::${t.name}`,
          description: t.description,
          inputSchema: t.input_schema,
          healthStatus: t.health_status,
        })),
      },
    },
  };
}
