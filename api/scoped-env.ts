/**
 * `env` in a request body that may reach several packages (agent chat): `{ "NAME": "value" }` gives a value by name
 * alone (for the one package of the agent's tools that declares it), `{ "<package>": { "NAME": "value" } }` gives it
 * to that package only. Each part is checked with the same `envSchema` as execute's `env`. An unscoped name that
 * several packages declare, or a package none of the tools belongs to, is a 400 naming them (core/tools/tool-env.ts).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { z } from 'zod';
import { envSchema } from './operations/shared.js';
import { givenEnvFromHeaders } from './mcp/tools.js';
import { assertEnvBounds } from '../core/executions/env-bounds.js';
import { errors } from '../core/infra/errors.js';
import type { ToolRow } from '../core/repos/tools.js';
import { allEnvValues, ambiguityMessage, ambiguousEnv, declaringPackages, type GivenEnv } from '../core/tools/tool-env.js';

export const scopedEnvSchema = z
  .record(z.string(), z.union([z.string(), z.record(z.string(), z.string())]))
  .superRefine((env, ctx) => {
    const forward = (parsed: z.ZodSafeParseResult<unknown>, prefix: string[]) => {
      if (!parsed.success) for (const i of parsed.error.issues) ctx.addIssue({ ...i, code: 'custom', path: [...prefix, ...i.path] } as never);
    };
    forward(envSchema.safeParse(Object.fromEntries(Object.entries(env).filter(([, v]) => typeof v === 'string'))), []);
    for (const [pkg, vars] of Object.entries(env)) if (typeof vars !== 'string') forward(envSchema.safeParse(vars), [pkg]);
  })
  .meta({
    description:
      'Env values: `{ NAME: value }` for the one package of the tools that declares NAME, or `{ "<package>": { NAME: value } }` for that package only (required where several packages declare NAME)',
  });

export type ScopedEnvBody = z.infer<typeof scopedEnvSchema>;

/** The body's env as given per package, after refusing what cannot be placed among these tools. */
export function givenEnvOf(env: ScopedEnvBody | undefined, tools: ToolRow[]): GivenEnv {
  const given: GivenEnv = { unscoped: {}, scoped: {} };
  for (const [key, value] of Object.entries(env ?? {})) {
    if (typeof value === 'string') given.unscoped[key] = value;
    else given.scoped[key] = value;
  }
  const packages = new Set(tools.map((t) => t.package_name));
  const unknown = Object.keys(given.scoped).filter((p) => !packages.has(p));
  if (unknown.length > 0) {
    throw errors.validation(
      `env: no tool offered here is of package ${unknown.join(', ')}`,
      unknown.map((p) => ({ path: `body.env.${p}`, message: 'no tool offered here is of this package' })),
    );
  }
  const ambiguous = ambiguousEnv(given, declaringPackages(tools));
  if (ambiguous.length > 0) {
    throw errors.validation(
      `env: ${ambiguityMessage(ambiguous, (pkg, name) => `{ "${pkg}": { "${name}": … } }`)}`,
      ambiguous.map((a) => ({ path: `body.env.${a.name}`, message: `declared by several packages (${a.packages.join(', ')}); give it per package` })),
    );
  }
  return given;
}

/**
 * The env of a request that takes both forms (scenario runs and batches): the body's `env` as agent chat takes it and
 * the `X-Tool-Env-<NAME>` / `X-Tool-Env-<package>--<NAME>` headers as the MCP endpoint reads them (givenEnvFromHeaders);
 * a name given both ways takes the body's value. Refused as givenEnvOf refuses (a package none of the tools is of, an
 * unscoped name several packages declare), and bounded as one execution's env is.
 */
export function givenEnvOfRequest(env: ScopedEnvBody | undefined, headers: IncomingHttpHeaders, tools: ToolRow[]): GivenEnv {
  const fromHeaders = givenEnvFromHeaders(headers, tools);
  const merged: ScopedEnvBody = { ...fromHeaders.unscoped };
  for (const [pkg, vars] of Object.entries(fromHeaders.scoped)) merged[pkg] = { ...vars };
  for (const [key, value] of Object.entries(env ?? {})) {
    const before = merged[key];
    merged[key] = typeof value === 'object' && typeof before === 'object' ? { ...before, ...value } : value;
  }
  const given = givenEnvOf(merged, tools);
  assertEnvBounds(Object.entries(allEnvValues(given)), 'env');
  return given;
}
