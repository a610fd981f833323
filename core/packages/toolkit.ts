/**
 * Toolkits: packages whose AI SDK tools are made by a function or class that takes its configuration as arguments
 * rather than from the environment (`new PayPalAgentToolkit({ clientId, clientSecret, configuration }).getTools()`,
 * `supermemoryTools(apiKey)`), and may sit in a subpath export (`@paypal/agent-toolkit/ai-sdk`). The import says how:
 * `entry`, the subpath, and `options`, the arguments (JSON), where a string may name a variable as `${NAME}`. Each such
 * variable is declared (required, secret): every call passes its own value, which the sandbox's guest puts in when it
 * makes the toolkit for that call (guest/discover.cjs); while the package is described, a placeholder.
 */
import { z } from 'zod';
import type { EnvVarSpec } from '../types.js';

/**
 * A variable named in an argument: `${NAME}` (an MCP server's `args`, core/packages/mcp-server.ts; a toolkit's
 * `options`; the guest's copies in guest/mcp-pipe.cjs and guest/discover.cjs).
 */
export const ARG_VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** What the guest is told (sandbox/types.ts DescribeOptions.toolkit). */
export interface Toolkit {
  entry?: string;
  args?: unknown[];
}

const MAX_OPTIONS_BYTES = 4096;
const MAX_DEPTH = 8;
/** Each is required of every caller: a handful is what a toolkit needs (PayPal's two), 4 KiB could name ~600. */
const MAX_VARIABLES = 20;

const depthOf = (v: unknown): number =>
  v !== null && typeof v === 'object' ? 1 + Math.max(0, ...Object.values(v as Record<string, unknown>).map(depthOf)) : 0;

/** The import request's fields (core/packages/mcp-server.ts importOptionsShape). */
export const toolkitShape = {
  entry: z
    .string()
    .max(200)
    .regex(/^\.\/[\w@.+-]+(?:\/[\w@.+-]+)*$/, 'must be a subpath the package exports, such as "./ai-sdk"')
    .refine((s) => !s.split('/').includes('..'), 'must not climb out of the package')
    .optional(),
  // Any JSON (the body is JSON): z.json()'s recursive schema has no OpenAPI form here.
  options: z
    .array(z.unknown())
    .min(1)
    .max(5)
    .refine((a) => Buffer.byteLength(JSON.stringify(a)) <= MAX_OPTIONS_BYTES, `must be at most ${MAX_OPTIONS_BYTES} bytes of JSON`)
    .refine((a) => depthOf(a) <= MAX_DEPTH, `must nest at most ${MAX_DEPTH} levels`)
    .refine((a) => variablesIn(a).length <= MAX_VARIABLES, `may name at most ${MAX_VARIABLES} variables`)
    .optional(),
};

/** The variables `${NAME}` in the strings of a JSON value (an argument, a list of them), in order, once each. */
export function variablesIn(value: unknown): string[] {
  const names = new Set<string>();
  const visit = (v: unknown): void => {
    if (typeof v === 'string') for (const m of v.matchAll(ARG_VARIABLE)) names.add(m[1]!);
    else if (v !== null && typeof v === 'object') Object.values(v as Record<string, unknown>).forEach(visit);
  };
  visit(value);
  return [...names];
}

/**
 * The variables that arguments name and `declared` does not, declared: required and secret (each call puts its own
 * value there). An MCP server's `args` and a toolkit's `options` alike.
 */
export function undeclaredArgumentVariables(args: unknown, declared: { name: string }[], description: string): EnvVarSpec[] {
  const known = new Set(declared.map((v) => v.name));
  return variablesIn(args)
    .filter((name) => !known.has(name))
    .map((name) => ({ name, required: true, secret: true, description }));
}

/** The toolkit the guest is given, and the variables its options name that the env does not declare yet. */
export function planToolkit(o: { entry?: string; options?: unknown[] }, declared: EnvVarSpec[]): { toolkit?: Toolkit; env: EnvVarSpec[] } {
  if (o.entry === undefined && o.options === undefined) return { env: [] };
  const env = undeclaredArgumentVariables(o.options, declared, 'named in the options the package is made with');
  return { toolkit: { ...(o.entry ? { entry: o.entry } : {}), ...(o.options ? { args: o.options } : {}) }, env };
}
