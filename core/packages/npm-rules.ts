/**
 * What a package may declare before we install it: a name by npm's own rules (validate-npm-package-name), a semantic
 * version, and dependencies that npm resolves from the registry only (npm-package-arg, npm's own spec parser). The
 * name and version become a cache directory name; a git, URL, file or directory dependency would make the worker host
 * fetch from, or link, wherever the package author chose.
 */
import npa from 'npm-package-arg';
import validateName from 'validate-npm-package-name';
import type { ErrorDetail } from '../infra/errors.js';
import { sliceWhole } from '../text/text-cut.js';

export const SEMVER = /^\d+\.\d+\.\d+(?:[-+][\w.+-]*)?$/;
export const DEPENDENCY_FIELDS = ['dependencies', 'optionalDependencies', 'peerDependencies'] as const;
// `alias` (npm:other@range) is accepted when what it names is one of these.
const REGISTRY_SPECS = new Set(['version', 'range', 'tag']);

/** npm's rules for a name that can exist on the registry (old packages may have capitals, so those are allowed). */
export function npmNameProblems(name: string): string[] {
  const v = validateName(name);
  return v.validForOldPackages ? [] : v.errors;
}

/** Why this dependency spec is not a plain registry dependency, or null when it is. */
export function dependencyProblem(name: string, spec: unknown): string | null {
  if (typeof spec !== 'string') return 'must be a version range (a string)';
  let parsed: npa.Result;
  try {
    // `where` only matters for file specs, which are refused anyway; no file is read.
    parsed = npa.resolve(name, spec, '/nonexistent');
  } catch (err) {
    return `is not a registry dependency: ${(err as Error).message.split('\n')[0]}`;
  }
  const target = parsed.type === 'alias' ? (parsed as npa.AliasResult).subSpec : parsed;
  if (REGISTRY_SPECS.has(target.type)) return null;
  const shown = spec.length > 100 ? `${sliceWhole(spec, 100)}…` : spec;
  return `'${shown}' is a ${target.type} dependency, not a registry version: only version ranges, tags and npm: aliases are installed`;
}

/** Everything wrong with a package.json's identity and dependencies, by path, before anything is installed. */
export function packageJsonProblems(pkg: Record<string, unknown>): ErrorDetail[] {
  const out: ErrorDetail[] = [];
  if (typeof pkg.name !== 'string' || pkg.name === '') out.push({ path: 'package.json.name', message: 'is required' });
  else for (const message of npmNameProblems(pkg.name)) out.push({ path: 'package.json.name', message });
  if (typeof pkg.version !== 'string' || !SEMVER.test(pkg.version)) out.push({ path: 'package.json.version', message: 'must be a semantic version' });
  for (const field of DEPENDENCY_FIELDS) {
    const deps = pkg[field];
    if (deps === undefined) continue;
    if (deps === null || typeof deps !== 'object' || Array.isArray(deps)) {
      out.push({ path: `package.json.${field}`, message: 'must be an object of package names to version ranges' });
      continue;
    }
    for (const [name, spec] of Object.entries(deps)) {
      const problem = dependencyProblem(name, spec);
      if (problem) out.push({ path: `package.json.${field}.${name}`, message: problem });
    }
  }
  return out;
}

/**
 * The package.json npm install is given: only the vetted dependency fields. Everything else a package.json can steer
 * npm with (overrides, workspaces, devDependencies, which npm resolves even when omitted) is left out.
 * Null when there is nothing to install.
 */
export function installManifest(pkg: Record<string, unknown>): Record<string, unknown> | null {
  const out: Record<string, unknown> = { name: 'toolshed-install', version: '0.0.0', private: true };
  let any = false;
  for (const field of DEPENDENCY_FIELDS) {
    const deps = pkg[field] as Record<string, string> | undefined;
    if (deps && Object.keys(deps).length > 0) {
      out[field] = deps;
      any = true;
    }
  }
  // Optional peers stay optional; only the one flag npm reads there is passed on.
  const meta = pkg.peerDependenciesMeta as Record<string, { optional?: unknown }> | undefined;
  if (meta && typeof meta === 'object') {
    out.peerDependenciesMeta = Object.fromEntries(Object.entries(meta).map(([k, v]) => [k, { optional: v?.optional === true }]));
  }
  return any ? out : null;
}
