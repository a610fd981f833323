/**
 * MCP servers published on npm: what makes a package one, how it is started, and what an import may say about it.
 *
 * A package is an MCP server when the import says so (`kind: "mcp"`, `args` or `serverJson`), when its package.json
 * has an `mcpName` (the MCP Registry's mark), or when it has a `bin` and depends on an MCP server library
 * (MCP_LIBRARIES) or its bin's text names the SDK or `tools/list` (binSpeaksMcp), or when it has no bin, is named as an
 * MCP server (`nile-mcp-server`) and depends on such a library. A package with a `toolshed` or `tpmjs` field is imported by that field unless the import says
 * `kind: "mcp"`. The server is started as `node <bin> <args>`: `bin` is the package's bin entry named like the package
 * (or its only one, or the first naming `mcp`, or the first), falling back to `main` for a server without a bin.
 *
 * Category, when the import gives none, is inferred by a fixed rule (CATEGORY_RULES): the first category whose
 * pattern matches the package's name, description or keywords; `api-integration` when none does. It never fails.
 */
import path from 'node:path';
import { z } from 'zod';
import { CATEGORIES, type Category, type EnvVarSpec } from '../types.js';
import type { ErrorDetail } from '../infra/errors.js';
import { ARG_VARIABLE, toolkitShape, undeclaredArgumentVariables } from './toolkit.js';
import { PLACEHOLDER_URL, PLACEHOLDER_VALUE } from './env-names.js';

/** Libraries an MCP server is built with: a package with a bin that depends on one of them is taken for a server. */
export const MCP_LIBRARIES = [
  '@modelcontextprotocol/sdk',
  '@modelcontextprotocol/server',
  'fastmcp',
  'mcp-framework',
  'tmcp',
  '@tmcp/transport-stdio',
  'mcp-use',
  '@mastra/mcp',
];

/** Placeholders of declared variables while the server is described (never while it runs): env-names.ts. */
export { PLACEHOLDER_URL, PLACEHOLDER_VALUE };

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
// A bare name is a required variable that is not a secret. One object schema for both forms, so that a 400 names the
// field that is wrong (a union says only "Invalid input").
const envVar = z
  .preprocess(
    (v) => (typeof v === 'string' ? { name: v } : v),
    z
      .object({
        name: z.string().regex(ENV_NAME, 'must be an environment variable name'),
        required: z.boolean().default(true),
        secret: z.boolean().default(false),
        description: z.string().max(1000).optional(),
        /** A setting's value for callers who give none (DATA_DIR=/tmp/data); never a secret's (a key is the caller's). */
        default: z.string().max(4096).optional(),
        /** The value is a file's content: each call gets it as a private file, the variable set to its path. */
        file: z.boolean().optional(),
        /** A file's stand-in content while the server is described (a credentials JSON of the right shape). */
        placeholder: z.string().max(8192).optional(),
      })
      .strict()
      .refine((v) => !(v.secret && v.default !== undefined), { message: "a secret has no default: its value is the caller's", path: ['default'] })
      .refine((v) => !(v.file && v.default !== undefined), { message: "a file has no default: its content is the caller's", path: ['default'] })
      .refine((v) => v.file === true || v.placeholder === undefined, { message: 'only a file (file: true) has a placeholder', path: ['placeholder'] })
      .transform(({ file, ...v }) => (file ? { ...v, file: true as const } : v)),
  )
  .meta({ description: 'A variable: this object, or its name alone (required, not a secret)' });

/** The MCP Registry's server.json, as far as an import reads it (camelCase, and the older snake_case names). */
const serverArgument = z.looseObject({
  type: z.string().optional(),
  name: z.string().max(200).optional(),
  value: z.string().max(1000).optional(),
  default: z.string().max(1000).optional(),
  valueHint: z.string().max(200).optional(),
  value_hint: z.string().max(200).optional(),
  isRequired: z.boolean().optional(),
  is_required: z.boolean().optional(),
  isSecret: z.boolean().optional(),
  is_secret: z.boolean().optional(),
});
const serverEnv = z.looseObject({
  name: z.string().regex(ENV_NAME, 'must be an environment variable name'),
  description: z.string().max(1000).optional(),
  isRequired: z.boolean().optional(),
  is_required: z.boolean().optional(),
  isSecret: z.boolean().optional(),
  is_secret: z.boolean().optional(),
  default: z.string().max(1000).optional(),
});
const serverPackage = z.looseObject({
  registryType: z.string().optional(),
  registry_type: z.string().optional(),
  registry_name: z.string().optional(),
  identifier: z.string().optional(),
  name: z.string().optional(),
  version: z.string().max(100).optional(),
  transport: z.looseObject({ type: z.string() }).optional(),
  packageArguments: z.array(serverArgument).max(50).optional(),
  package_arguments: z.array(serverArgument).max(50).optional(),
  environmentVariables: z.array(serverEnv).max(50).optional(),
  environment_variables: z.array(serverEnv).max(50).optional(),
});
export const serverJsonSchema = z.looseObject({
  name: z.string().max(200).optional(),
  description: z.string().max(2000).optional(),
  version: z.string().max(100).optional(),
  packages: z.array(serverPackage).max(20).optional(),
});

/** What an import request may say beyond its source (POST /api/admin/packages). */
export const importOptionsShape = {
  kind: z.enum(['tools', 'mcp']).optional(),
  category: z.enum(CATEGORIES, { message: `must be one of: ${CATEGORIES.join(', ')}` }).optional(),
  env: z.array(envVar).max(50).optional(),
  args: z.array(z.string().max(1000)).max(50).optional(),
  network: z.boolean().optional(),
  serverJson: serverJsonSchema.optional(),
  // A package of JS tools made with arguments, from a subpath (core/packages/toolkit.ts).
  ...toolkitShape,
};
export const importOptionsSchema = z.object(importOptionsShape);
export type ImportOptions = z.infer<typeof importOptionsSchema>;

export interface McpEnvVar extends EnvVarSpec {
  secret?: boolean;
  /** A default from server.json: used as the placeholder while describing. */
  default?: string;
}

/** Everything needed to start and describe one server. */
export interface McpServerPlan {
  bin: string;
  args: string[];
  env: McpEnvVar[];
  network: boolean;
  category: Category;
}

/** The npm package of a server.json (the first npm, stdio one). */
export function serverJsonPackage(json: z.infer<typeof serverJsonSchema>): { name: string; version?: string } | { error: string } {
  const pkg = (json.packages ?? []).find((p) => (p.registryType ?? p.registry_type ?? p.registry_name) === 'npm');
  if (!pkg) return { error: 'serverJson.packages has no npm package' };
  if (pkg.transport && pkg.transport.type !== 'stdio') return { error: `serverJson's npm package uses the ${pkg.transport.type} transport; only stdio is run` };
  const name = pkg.identifier ?? pkg.name;
  if (!name) return { error: "serverJson's npm package has no identifier" };
  return { name, version: pkg.version };
}

/**
 * A declared variable named in an argument (`["--token", "${MONDAY_TOKEN}"]`): each start of the server has the
 * caller's value there (the sandbox's guest puts it in, guest/mcp-pipe.cjs), a placeholder while it is described.
 */
export { ARG_VARIABLE };

/** Variables one server may declare, its env and those its arguments name together (each `${NAME}` declares one). */
const MAX_DECLARED = 100;

/** The variable a server.json argument the caller must give is read from: its value hint or name (`--api-key` → API_KEY). */
const variableOf = (a: { name?: string; valueHint?: string; value_hint?: string }) =>
  (a.valueHint ?? a.value_hint ?? a.name ?? 'ARG')
    .replace(/^-+/, '')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^(\d)/, '_$1')
    .toUpperCase() || 'ARG';

/**
 * The arguments and variables a server.json's npm package declares. An argument without a value or default that is
 * secret or required is the caller's to give: it becomes `${VARIABLE}`, a variable declared for it.
 */
function fromServerJson(json: z.infer<typeof serverJsonSchema>): { args: string[]; env: McpEnvVar[] } {
  const pkg = (json.packages ?? []).find((p) => (p.registryType ?? p.registry_type ?? p.registry_name) === 'npm');
  const args: string[] = [];
  const fromArgs: McpEnvVar[] = [];
  for (const a of pkg?.packageArguments ?? pkg?.package_arguments ?? []) {
    const secret = a.isSecret ?? a.is_secret ?? false;
    const required = a.isRequired ?? a.is_required ?? false;
    let value = a.value ?? a.default;
    if (value === undefined && (secret || required)) {
      const name = variableOf(a);
      fromArgs.push({ name, required, secret });
      value = `\${${name}}`;
    } else value ??= a.valueHint ?? a.value_hint;
    if (a.type === 'named') {
      if (a.name) args.push(a.name);
      if (value !== undefined) args.push(value);
    } else if (value !== undefined) args.push(value);
  }
  const declared = (pkg?.environmentVariables ?? pkg?.environment_variables ?? []).map((v) => ({
    name: v.name,
    required: v.isRequired ?? v.is_required ?? false,
    secret: v.isSecret ?? v.is_secret ?? false,
    ...(v.description ? { description: v.description } : {}),
    ...(v.default !== undefined ? { default: v.default } : {}),
  }));
  const names = new Set(declared.map((v) => v.name));
  return { args, env: [...declared, ...fromArgs.filter((v) => !names.has(v.name))] };
}

const deps = (pkg: Record<string, unknown>): string[] =>
  ['dependencies', 'peerDependencies', 'optionalDependencies'].flatMap((f) => {
    const d = pkg[f];
    return d && typeof d === 'object' && !Array.isArray(d) ? Object.keys(d) : [];
  });

/**
 * Whether a bin's text is an MCP server's: it imports the official SDK (`@modelcontextprotocol/sdk`, or the split
 * `@modelcontextprotocol/server` behind a wrapper library, as `@supabase/mcp-server-postgrest`), or, bundled (its
 * dependencies inlined and none listed), it carries the protocol's `tools/list` method name.
 */
export const binSpeaksMcp = (text: string): boolean => /@modelcontextprotocol\/(sdk|server)\b|["'`]tools\/list["'`]/.test(text);

/**
 * Whether this package is to be imported as an MCP server. `binText`: the text of its bin (serverEntry), read by the
 * caller, for a server whose MCP library is not among its dependencies (bundled, or behind a wrapper library).
 */
export function isMcpServer(pkg: Record<string, unknown>, opts: ImportOptions, binText?: string): boolean {
  if (opts.kind) return opts.kind === 'mcp';
  if (opts.serverJson || opts.args) return true;
  if (pkg.toolshed !== undefined || pkg.tpmjs !== undefined) return false;
  if (typeof pkg.mcpName === 'string') return true;
  const builtWith = deps(pkg).some((d) => MCP_LIBRARIES.includes(d));
  if (pkg.bin === undefined) return builtWith && namedAsServer(pkg);
  return builtWith || (binText !== undefined && binSpeaksMcp(binText)) || (namedAsServer(pkg) && saysMcp(pkg));
}

/**
 * Whether its keywords or description say MCP: with a bin and a server's name, a server written in another language
 * whose bin starts a binary it ships (@digitalocean/mcp: a Go program for each platform, no MCP library in JS).
 */
const saysMcp = (pkg: Record<string, unknown>) =>
  (Array.isArray(pkg.keywords) && pkg.keywords.some((k) => typeof k === 'string' && /^(mcp|model[- ]context[- ]protocol)$/i.test(k))) ||
  (typeof pkg.description === 'string' && /\b(MCP|Model Context Protocol)\b/.test(pkg.description));

/** A package named as an MCP server (`nile-mcp-server`, `mcp-server-x`, `@scope/mcp`): one started from `main` when it has no bin. */
const namedAsServer = (pkg: Record<string, unknown>) => typeof pkg.name === 'string' && /(^|[-/_.@])mcp([-_.]|$)/i.test(pkg.name);

/** The bin file the server is started with, relative to the package dir; null when there is none. */
export function serverEntry(pkg: Record<string, unknown>): string | null {
  const name = typeof pkg.name === 'string' ? pkg.name : '';
  const base = name.slice(name.lastIndexOf('/') + 1);
  let file: unknown;
  if (typeof pkg.bin === 'string') file = pkg.bin;
  else if (pkg.bin && typeof pkg.bin === 'object') {
    const bins = Object.entries(pkg.bin as Record<string, unknown>).filter(([, v]) => typeof v === 'string');
    file = (bins.find(([k]) => k === base) ?? (bins.length === 1 ? bins[0] : undefined) ?? bins.find(([k]) => /mcp/i.test(k)) ?? bins[0])?.[1];
  }
  if (file === undefined && (typeof pkg.mcpName === 'string' || (pkg.bin === undefined && namedAsServer(pkg))))
    file = typeof pkg.main === 'string' ? pkg.main : (dotExport(pkg.exports) ?? 'index.js');
  if (typeof file !== 'string' || file === '') return null;
  const rel = path.posix.normalize(file.replace(/\\/g, '/')).replace(/^\.\//, '');
  if (rel.startsWith('../') || rel === '..' || path.posix.isAbsolute(rel)) return null;
  return rel;
}

/** The file of a package.json's `exports` "." (or of `exports` itself when it names no subpaths), for node. */
function dotExport(exp: unknown): string | undefined {
  if (typeof exp === 'string') return exp;
  if (Array.isArray(exp)) return exp.map(dotExport).find((f) => f !== undefined);
  if (!exp || typeof exp !== 'object') return undefined;
  const o = exp as Record<string, unknown>;
  if (Object.keys(o).some((k) => k.startsWith('.'))) return dotExport(o['.']);
  for (const condition of ['node', 'import', 'default', 'require']) {
    const f = dotExport(o[condition]);
    if (f !== undefined) return f;
  }
  return undefined;
}

/** Category rule: the first that matches the package's name, description and keywords. */
export const CATEGORY_RULES: [Category, RegExp][] = [
  ['database', /\b(sql|postgres\w*|mysql|mongo\w*|redis|sqlite|database|supabase|neo4j|clickhouse|bigquery|prisma)\b/i],
  ['web-scraping', /(scrap|crawl|browser|playwright|puppeteer|chrome|firecrawl|tavily|web[- ]search|fetch)/i],
  ['file-operations', /(file ?system|filesystem|\bfiles?\b|director(y|ies)|\bfs\b|drive|storage)/i],
  ['communication', /(slack|e-?mail|gmail|discord|telegram|\bsms\b|whatsapp|teams|notification)/i],
  ['monitoring', /(monitor|observab|metrics|sentry|grafana|datadog|prometheus|\blogs?\b)/i],
  ['security', /(securit|vulnerab|pentest|\bcve\b|malware)/i],
  ['image-processing', /(image|photo|figma|screenshot|video|svg)/i],
  ['ai-ml', /(\bllm\b|openai|anthropic|embedding|\bai\b|memory|knowledge graph|reasoning|thinking|context7|docs?\b)/i],
  ['text-analysis', /(\btext\b|nlp|translat|summar|sentiment)/i],
  ['data-processing', /(\bjson\b|\bcsv\b|excel|spreadsheet|transform|convert|\bdata\b)/i],
  ['automation', /(automat|workflow|devtools|github|gitlab|\bgit\b|shell|terminal|command|notion|jira|linear)/i],
];

export function inferCategory(pkg: Record<string, unknown>): Category {
  const keywords = Array.isArray(pkg.keywords) ? pkg.keywords.filter((k) => typeof k === 'string').join(' ') : '';
  const text = [pkg.name, pkg.description, keywords].filter((s) => typeof s === 'string').join(' ');
  return CATEGORY_RULES.find(([, re]) => re.test(text))?.[0] ?? 'api-integration';
}

/** How to start and describe the server, or what is wrong. */
export function planMcpServer(pkg: Record<string, unknown>, opts: ImportOptions): { plan: McpServerPlan } | { errors: ErrorDetail[] } {
  const bin = serverEntry(pkg);
  if (!bin) return { errors: [{ path: 'package.json.bin', message: 'an MCP server needs a bin (the file started with node) inside the package' }] };
  const fromJson = opts.serverJson ? fromServerJson(opts.serverJson) : { args: [], env: [] };
  const args = opts.args ?? fromJson.args;
  const given: McpEnvVar[] = opts.env ?? fromJson.env;
  // The variables the arguments name that are not declared: required and secret (a value on a command line).
  const env = [...given, ...undeclaredArgumentVariables(args, given, 'named in an argument of the server')];
  if (env.length > MAX_DECLARED) {
    return { errors: [{ path: 'args', message: `the arguments and env declare ${env.length} variables; at most ${MAX_DECLARED}` }] };
  }
  return {
    plan: {
      bin,
      args,
      env,
      network: opts.network ?? false,
      category: opts.category ?? inferCategory(pkg),
    },
  };
}

/** Placeholder values of the declared variables, for describing. */
export function placeholderEnv(env: McpEnvVar[] | EnvVarSpec[] | null | undefined): Record<string, string> {
  return Object.fromEntries((env ?? []).map((v) => [v.name, v.default ?? v.placeholder ?? PLACEHOLDER_VALUE]));
}

/** An MCP server's tools/list as recorded for its health checks: each tool's definition by name. */
export type McpListing = Record<string, { description: string; inputSchema: unknown; outputSchema: unknown }>;

/** What changed in a server's tools/list within one version (tools.tools_changed, `toolsChanged` on a tool). */
export interface ToolsChanged {
  detectedAt: string;
  version: string;
  added: string[];
  removed: string[];
  changed: { tool: string; fields: string[] }[];
}

export function mcpListingOf(tools: { exportName: string; description?: string; inputSchema: unknown; outputSchema?: unknown }[]): McpListing {
  return Object.fromEntries(
    tools.map((t) => [t.exportName, { description: t.description ?? '', inputSchema: t.inputSchema ?? null, outputSchema: t.outputSchema ?? null }]),
  );
}

/** JSON with object keys sorted (Postgres jsonb reorders keys), for comparing definitions. */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v ?? null);
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
    .join(',')}}`;
}

/** Which fields of a tool's definition differ between two listings. */
export function definitionChanges(before: McpListing[string], now: McpListing[string]): string[] {
  return [
    (before.description ?? '') !== (now.description ?? '') && 'description',
    canonicalJson(before.inputSchema) !== canonicalJson(now.inputSchema) && 'input schema',
    canonicalJson(before.outputSchema ?? null) !== canonicalJson(now.outputSchema ?? null) && 'output schema',
  ].filter((x): x is string => typeof x === 'string');
}

/** The tools added, removed and changed from one listing to the next; null when they list the same tools. */
export function listingChanges(before: McpListing, now: McpListing): Omit<ToolsChanged, 'detectedAt' | 'version'> | null {
  const added = Object.keys(now)
    .filter((n) => !(n in before))
    .sort();
  const removed = Object.keys(before)
    .filter((n) => !(n in now))
    .sort();
  const changed = Object.keys(now)
    .filter((n) => n in before)
    .sort()
    .flatMap((tool) => {
      const fields = definitionChanges(before[tool], now[tool]);
      return fields.length > 0 ? [{ tool, fields }] : [];
    });
  return added.length + removed.length + changed.length === 0 ? null : { added, removed, changed };
}
