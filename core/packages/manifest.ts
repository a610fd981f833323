/**
 * Reads a package's declaration of its tools: our `toolshed` field, or TPMJS's `tpmjs` field (keyword `tpmjs` or
 * `tpmjs-tool`; current multi-tool and legacy single-tool forms, see tpmjs.ts). A package that lists no tools (no
 * field, a TPMJS field without `tools`, the keyword alone) is `discover`: its tools are found in the sandbox
 * (worker/import/js.ts, sandbox/guest/discover.cjs). Returns what is wrong, path by path, when it is invalid.
 */
import { z } from 'zod';
import { CATEGORIES, type Category, type EnvVarSpec } from '../types.js';
import type { ErrorDetail } from '../infra/errors.js';
import { npmNameProblems, SEMVER } from './npm-rules.js';
import { tpmjsCategory, tpmjsField } from './tpmjs.js';
import type { Discovery } from './discovery.js';

export interface HealthExample {
  params: Record<string, unknown>;
  /** A deep subset of the expected output. */
  expect?: unknown;
}

/**
 * What a tool declares it does (our `toolshed` field only). `network`: it needs egress — a tool without it never gets
 * any, whatever SANDBOX_NETWORK says; `secrets`: the only env vars (of the package's `env`) it is given; `readOnly`,
 * `destructive`, `idempotent`: hints for clients (MCP tool annotations).
 */
export interface ToolPermissions {
  readOnly?: boolean;
  destructive?: boolean;
  idempotent?: boolean;
  network?: boolean;
  secrets?: string[];
}

export interface ManifestTool {
  exportName: string;
  /** The tool's name when it is not its export name (a discovered tool: see discovery.ts). */
  name?: string;
  /** How a discovered tool was found (the import answer says it). */
  how?: string;
  description?: string;
  healthExample?: HealthExample;
  permissions?: ToolPermissions;
  /** MCP servers' tools (format `mcp`): their title and annotations as the server lists them. */
  title?: string;
  annotations?: Record<string, unknown>;
}

export interface Manifest {
  /** `none`: the package lists no tools (discovered); `mcp`: an MCP server (core/packages/mcp-server.ts), its tools are what the server lists. */
  format: 'toolshed' | 'tpmjs' | 'none' | 'mcp';
  /** The package lists no tools: they are discovered among its exports in the sandbox (and `tools` is empty). */
  discover?: boolean;
  name: string;
  version: string;
  description: string | null;
  category: Category;
  env: EnvVarSpec[];
  tools: ManifestTool[];
  /** Set when the tools were discovered: how each was found (the import answer shows it). */
  discovery?: Discovery;
  /** An MCP server: how it is started (read from `packages.manifest` when one of its tools runs). */
  /** inGuest: the server runs in the sandbox guest's own process (sandbox/guest/mcp-pipe.cjs); absent for older imports. */
  /** bundle: the one-file bundle of the bin the guest loads instead (sandbox/mcp-bundle.ts); absent when there is none. */
  mcp?: { bin: string; args: string[]; network: boolean; inGuest?: boolean; bundle?: string; files?: string[] };
}

const EXPORT_NAME = /^[A-Za-z_$][\w$]*$/;
const envVar = z.union([
  z
    .string()
    .regex(/^[A-Z_][A-Z0-9_]*$/, 'must be an UPPER_SNAKE_CASE name')
    .transform((name) => ({ name, required: true })),
  z.object({
    name: z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'must be an UPPER_SNAKE_CASE name'),
    description: z.string().optional(),
    required: z.boolean().default(true),
  }),
]);
const healthExample = z.object({ params: z.record(z.string(), z.unknown()), expect: z.unknown().optional() });
const permissions = z.strictObject({
  readOnly: z.boolean().optional(),
  destructive: z.boolean().optional(),
  idempotent: z.boolean().optional(),
  network: z.boolean().optional(),
  secrets: z.array(z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'must be an UPPER_SNAKE_CASE name')).optional(),
});
// A bare string is the short form of `{ exportName }`; one object schema, so that errors name the field at fault.
const tool = z.preprocess(
  (v) => (typeof v === 'string' ? { exportName: v } : v),
  z.object({
    exportName: z.string().regex(EXPORT_NAME, 'must be a JavaScript export name'),
    description: z.string().min(1).max(1000).optional(),
    healthExample: healthExample.optional(),
    permissions: permissions.optional(),
  }),
);
const category = z.enum(CATEGORIES, { message: `must be one of: ${CATEGORIES.join(', ')}` });

const toolshedField = z
  .object({
    category,
    env: z.array(envVar).default([]),
    tools: z.array(tool).min(1, 'must list at least one tool'),
  })
  .superRefine((field, ctx) => {
    const declared = new Set(field.env.map((v) => v.name));
    field.tools.forEach((t, i) => {
      const p = t.permissions;
      if (!p) return;
      const at = ['tools', i, 'permissions'];
      if (p.readOnly && p.destructive) ctx.addIssue({ code: 'custom', path: [...at, 'destructive'], message: 'a readOnly tool cannot be destructive' });
      p.secrets?.forEach((name, j) => {
        if (!declared.has(name)) ctx.addIssue({ code: 'custom', path: [...at, 'secrets', j], message: `'${name}' is not declared in the package's env` });
      });
    });
  });

const tpmjsLegacy = z.object({ category: tpmjsCategory, description: z.string().min(1), env: z.array(envVar).default([]) });

const packageJson = z.object({
  // npm's own rules: the name becomes a cache directory and part of tool URLs.
  name: z
    .string()
    .min(1, 'is required')
    .superRefine((name, ctx) => npmNameProblems(name).forEach((message) => ctx.addIssue({ code: 'custom', message }))),
  version: z.string().regex(SEMVER, 'must be a semantic version'),
  description: z.string().optional(),
  keywords: z.array(z.string()).optional(),
});

/** What an import request may say about a package that does not (see discovery.ts). */
export interface ManifestDefaults {
  category?: Category;
  env?: EnvVarSpec[];
}

export function parseManifest(pkg: unknown, defaults: ManifestDefaults = {}): { manifest: Manifest } | { errors: ErrorDetail[] } {
  const base = packageJson.safeParse(pkg);
  if (!base.success) return { errors: issues(base.error, 'package.json') };
  const raw = pkg as Record<string, unknown>;
  const common = { name: base.data.name, version: base.data.version, description: base.data.description ?? null };
  if (raw.toolshed !== undefined) {
    const parsed = toolshedField.safeParse(raw.toolshed);
    if (!parsed.success) return { errors: issues(parsed.error, 'package.json.toolshed') };
    return { manifest: { format: 'toolshed', discover: false, ...common, ...parsed.data, env: parsed.data.env } };
  }
  const isTpmjs = raw.tpmjs !== undefined || base.data.keywords?.some((k) => k === 'tpmjs' || k === 'tpmjs-tool');
  // No tool list anywhere: every tool is found among the exports; the request may name the category and env.
  const discovered = { discover: true, category: defaults.category ?? DISCOVERED_CATEGORY, env: defaults.env ?? [], tools: [] };
  if (!isTpmjs) return { manifest: { format: 'none', ...common, ...discovered } };
  if (raw.tpmjs === undefined) return { manifest: { format: 'tpmjs', ...common, ...discovered } };
  const legacy = tpmjsLegacy.safeParse(raw.tpmjs);
  if (legacy.success && (raw.tpmjs as Record<string, unknown>).tools === undefined) {
    return {
      manifest: {
        format: 'tpmjs',
        discover: false,
        ...common,
        category: legacy.data.category,
        env: legacy.data.env,
        tools: [{ exportName: 'default', description: legacy.data.description }],
      },
    };
  }
  const current = tpmjsField.safeParse(raw.tpmjs);
  if (!current.success) return { errors: issues(current.error, 'package.json.tpmjs') };
  const f = current.data;
  const env = mergeEnv(f.env, defaults.env);
  if (f.tools.length === 0) return { manifest: { format: 'tpmjs', ...common, ...discovered, category: f.category, env } };
  return { manifest: { format: 'tpmjs', discover: false, ...common, category: f.category, env, tools: f.tools } };
}

/** The category of a package that names none (the request may): most tool packages wrap an API. */
export const DISCOVERED_CATEGORY: Category = 'api-integration';

/** The package's env, plus what the request declares that the package does not. */
function mergeEnv(own: EnvVarSpec[], extra: EnvVarSpec[] | undefined): EnvVarSpec[] {
  const names = new Set(own.map((v) => v.name));
  return [...own, ...(extra ?? []).filter((v) => !names.has(v.name))];
}

function issues(err: z.ZodError, prefix: string): ErrorDetail[] {
  return err.issues.map((i) => ({ path: [prefix, ...i.path.map(String)].join('.'), message: i.message }));
}

/** True when `expected` is a deep subset of `actual` (objects by key, everything else by equality). */
export function matchesExpectation(actual: unknown, expected: unknown): boolean {
  if (expected === null || typeof expected !== 'object') return Object.is(actual, expected) || actual === expected;
  if (Array.isArray(expected)) {
    return Array.isArray(actual) && actual.length === expected.length && expected.every((e, i) => matchesExpectation(actual[i], e));
  }
  if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false;
  return Object.entries(expected).every(([k, v]) => matchesExpectation((actual as Record<string, unknown>)[k], v));
}
