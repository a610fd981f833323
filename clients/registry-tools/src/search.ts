/**
 * `registrySearchTool`: the registry's ranked search (`GET /api/tools/search`), reduced to what an agent needs to
 * pick a tool and call it with `registryExecuteTool`.
 */
import { tool, type FlexibleSchema, type Tool } from 'ai';
import { z } from 'zod';
import type { RegistryConfig } from './config.js';
import { describeDetails, isObject, readShapeA, RegistryToolError } from './errors.js';
import { requestJson } from './http.js';

export const CATEGORIES = [
  'web-scraping',
  'data-processing',
  'file-operations',
  'communication',
  'database',
  'api-integration',
  'image-processing',
  'text-analysis',
  'automation',
  'ai-ml',
  'security',
  'monitoring',
] as const;

export type Category = (typeof CATEGORIES)[number];

export interface RegistrySearchInput {
  query: string;
  category?: Category;
  /** 1–20, default 5. */
  limit?: number;
}

export interface RegistryToolSummary {
  /** `<package>::<tool>`: what `registryExecuteTool` takes. */
  toolId: string;
  name: string;
  package: string;
  description: string;
  category: string;
  /** Names of the env vars the tool needs; pass their values in `registryExecuteTool`'s `env`. */
  requiredEnvVars: string[];
  healthStatus: string;
  qualityScore: number;
}

export interface RegistrySearchOutput {
  query: string;
  /** How many tools are returned here (at most `limit`). */
  matchCount: number;
  tools: RegistryToolSummary[];
}

const searchInputSchema = z.object({
  query: z.string().trim().min(1).max(2000).describe('What the tool should do: a few keywords (e.g. "convert csv to json") or the task itself'),
  category: z.enum(CATEGORIES).optional().describe('Only tools of this category'),
  limit: z.number().int().min(1).max(20).default(5).describe('How many tools to return (1-20, default 5)'),
});

export function createSearchTool(getConfig: () => RegistryConfig): Tool<RegistrySearchInput, RegistrySearchOutput> {
  return tool({
    description:
      'Search the Toolshed registry for tools that can do a task. Returns tools with a toolId to run with ' +
      'registryExecuteTool, the env vars each one requires, its health and a quality score.',
    // Typed as what callers may pass (limit optional); the schema fills the default before execute runs.
    inputSchema: searchInputSchema as unknown as FlexibleSchema<RegistrySearchInput>,
    execute: (input, options) => search(getConfig(), input, options?.abortSignal),
  });
}

async function search(config: RegistryConfig, raw: RegistrySearchInput, signal?: AbortSignal): Promise<RegistrySearchOutput> {
  const input = parseInput(raw);
  const qs = new URLSearchParams({ q: input.query, limit: String(input.limit) });
  if (input.category) qs.set('category', input.category);
  const url = `${config.apiUrl}/api/tools/search?${qs}`;
  const action = 'Searching the registry';
  const res = await requestJson(config, { method: 'GET', url, signal, action, scrub: (t) => t });
  if (res.status !== 200 || !isObject(res.body) || res.body.success !== true) {
    const e = readShapeA(res.body);
    const message = e.message ?? 'unexpected response';
    throw new RegistryToolError(`${action} failed: HTTP ${res.status} ${e.code ?? 'ERROR'}: ${message}${describeDetails(message, e.details)}`, {
      status: res.status,
      code: e.code ?? 'BAD_RESPONSE',
      details: e.details,
    });
  }
  const results = isObject(res.body.results) ? res.body.results : {};
  const tools = Array.isArray(results.tools) ? results.tools.filter(isObject).map(toSummary) : [];
  return { query: input.query, matchCount: tools.length, tools };
}

function parseInput(raw: RegistrySearchInput): z.infer<typeof searchInputSchema> {
  // The AI SDK validates before calling execute; code that calls execute directly gets the same checks and defaults.
  const parsed = searchInputSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('; ');
  throw new RegistryToolError(`Invalid registrySearchTool input: ${problems}`, { code: 'VALIDATION_ERROR' });
}

function toSummary(t: Record<string, unknown>): RegistryToolSummary {
  const pkg = isObject(t.package) ? t.package : {};
  const packageName = String(pkg.npmPackageName ?? '');
  const name = String(t.name ?? '');
  // `package.env` is the names of the required variables; servers before that sent `[{ name, required }]`.
  const env: unknown[] = Array.isArray(pkg.env) ? pkg.env : [];
  const requiredEnvVars = env.flatMap((v) => (typeof v === 'string' ? [v] : isObject(v) && v.required === true ? [String(v.name)] : []));
  return {
    toolId: `${packageName}::${name}`,
    name,
    package: packageName,
    description: String(t.description ?? ''),
    category: String(pkg.category ?? ''),
    requiredEnvVars,
    healthStatus: String(t.healthStatus ?? 'UNKNOWN'),
    qualityScore: typeof t.qualityScore === 'number' ? t.qualityScore : 0,
  };
}
