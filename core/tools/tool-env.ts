/**
 * The env a tool gets: its package's declared env vars, narrowed to the tool's declared `secrets` when it declares
 * them (toolshed.tools[].permissions.secrets). One rule for the API's checks, the MCP headers and the registry.
 *
 * Values are scoped per package: a caller gives a value either for one named package, or unscoped (by variable name
 * only). An unscoped value reaches a tool only when its package is the one package of the tool set (the collection,
 * the agent's collections) that declares the name; where several declare it, it reaches none of them and the caller
 * must name the package. So a value meant for one package's tool never reaches another package that happens to
 * declare the same name.
 */
import type { ToolRow } from '../repos/tools.js';
import type { EnvVarSpec } from '../types.js';

export function toolEnv(t: Pick<ToolRow, 'package_env' | 'permissions'>): EnvVarSpec[] {
  const secrets = t.permissions?.secrets;
  const all = t.package_env ?? [];
  return secrets ? all.filter((v) => secrets.includes(v.name)) : all;
}

/** The env a call runs with: a declared default (TPMJS env[].default) stands in for a variable the caller does not set. */
export function withDeclaredDefaults(t: Pick<ToolRow, 'package_env' | 'permissions'>, env: Record<string, string>): Record<string, string> {
  const defaults = Object.fromEntries(toolEnv(t).flatMap((v) => (v.default !== undefined ? [[v.name, v.default]] : [])));
  return { ...defaults, ...env };
}

/**
 * The values of a call's env that are redacted from what it answers and what is stored: every value but a setting's
 * declared default. A setting is a variable declared with a default (DATA_DIR=/tmp/data; a secret can have none,
 * core/packages/mcp-server.ts): its default is the publisher's configuration, shown on the package, not a caller's
 * env. A value the caller passes, for a setting too, is env and never stored (SPEC), so it stays redacted. Env
 * values of either kind are never logged.
 */
export function secretValues(declared: EnvVarSpec[] | null | undefined, env: Record<string, string>): Record<string, string> {
  const defaults = new Map((declared ?? []).filter((v) => v.default !== undefined && !v.secret).map((v) => [v.name, v.default]));
  return Object.fromEntries(Object.entries(env).filter(([name, value]) => defaults.get(name) !== value));
}

/** Env values as a caller gave them: unscoped (`NAME → value`) and scoped (`package → NAME → value`). */
export interface GivenEnv {
  unscoped: Record<string, string>;
  scoped: Record<string, Record<string, string>>;
}

type PackageEnv = Pick<ToolRow, 'package_name' | 'package_env'>;

/** For each variable name, the packages of the tool set that declare it (sorted, once each). */
export function declaringPackages(tools: Iterable<PackageEnv>): Map<string, string[]> {
  const byName = new Map<string, Set<string>>();
  for (const t of tools) {
    for (const v of t.package_env ?? []) {
      let set = byName.get(v.name);
      if (!set) byName.set(v.name, (set = new Set()));
      set.add(t.package_name);
    }
  }
  return new Map([...byName].map(([name, set]) => [name, [...set].sort()]));
}

/** A variable given unscoped that several packages of the tool set declare: it reaches none of them. */
export interface AmbiguousEnv {
  name: string;
  packages: string[];
}

/**
 * What one tool receives: for each variable it may read, the value scoped to its package, else the unscoped value
 * when no other package of the tool set declares the name. `ambiguous` lists the tool's variables that were given
 * only unscoped while several packages declare them.
 */
export function envForTool(
  tool: Pick<ToolRow, 'package_name' | 'package_env' | 'permissions'>,
  given: GivenEnv,
  declarers: Map<string, string[]>,
): { env: Record<string, string>; ambiguous: AmbiguousEnv[] } {
  const scoped = Object.hasOwn(given.scoped, tool.package_name) ? given.scoped[tool.package_name] : {};
  const env: Record<string, string> = {};
  const ambiguous: AmbiguousEnv[] = [];
  for (const { name } of toolEnv(tool)) {
    if (Object.hasOwn(scoped, name)) {
      env[name] = scoped[name];
      continue;
    }
    if (!Object.hasOwn(given.unscoped, name)) continue;
    const packages = declarers.get(name) ?? [tool.package_name];
    if (packages.length <= 1) env[name] = given.unscoped[name];
    else ambiguous.push({ name, packages });
  }
  return { env, ambiguous };
}

/** Unscoped variables that several packages of the tool set declare (to refuse a request before it starts). */
export function ambiguousEnv(given: GivenEnv, declarers: Map<string, string[]>): AmbiguousEnv[] {
  return Object.keys(given.unscoped)
    .filter((name) => (declarers.get(name)?.length ?? 0) > 1)
    .map((name) => ({ name, packages: declarers.get(name)! }));
}

/** Every value given, for redaction (keys do not matter there, values do). */
export function allEnvValues(given: GivenEnv): Record<string, string> {
  const all: Record<string, string> = { ...given.unscoped };
  for (const [pkg, vars] of Object.entries(given.scoped)) for (const [name, value] of Object.entries(vars)) all[`${pkg}:${name}`] = value;
  return all;
}

/** A message naming the packages that declare an ambiguous variable and how to scope it. */
export function ambiguityMessage(a: AmbiguousEnv[], scopedForm: (pkg: string, name: string) => string): string {
  return a
    .map(
      (x) =>
        `${x.name} is declared by several packages (${x.packages.join(', ')}), so an unscoped value reaches none of them; name the package: ${x.packages.map((p) => scopedForm(p, x.name)).join(' or ')}`,
    )
    .join('; ');
}
