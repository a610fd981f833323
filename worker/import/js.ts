/**
 * Imports a package of JS tools (a manifest's list, a TPMJS package, or tools discovered among its exports): reads its
 * manifest, describes its tools in a sandbox (module loads, exports, JSON Schemas), then records the version with
 * record.ts, whose health check at import runs each tool's declared example (or, for a discovered tool, one call).
 * A tool description over MAX_TOOL_DESCRIPTION_CHARS refuses the whole import (400, nothing recorded): every list,
 * search answer and MCP `tools/list` carries descriptions, so one huge one would weigh on every reader.
 */
import { parseManifest, type Manifest, type ManifestDefaults } from '../../core/packages/manifest.js';
import { applyDiscovery, placeholderEnv } from '../../core/packages/discovery.js';
import type { ImportOptions } from '../../core/packages/mcp-server.js';
import { planToolkit } from '../../core/packages/toolkit.js';
import type { VersionTool } from '../../core/repos/package-versions.js';
import { scrubHostPaths } from '../../core/text/host-paths.js';
import type { InstalledPackage } from '../../sandbox/packages.js';
import type { DescribedTool, PackageRef } from '../../sandbox/types.js';
import type { WorkerDeps } from '../deps.js';
import { variablesNamed } from '../env-named.js';
import { describeFailure, runHealthExample, runSmokeCall } from '../health.js';
import { recordVersion } from './record.js';
import { invalid, type ImportResult } from './result.js';

const DESCRIBE_TIMEOUT_MS = 30_000;
/** Discovery loads the whole module and examines every export (factories get 5 s each): a larger bound. */
const DISCOVER_TIMEOUT_MS = 60_000;

/** `madeWith`: the request's field (`entry` or `options`) that makes a toolkit with arguments, when it has one. */
export async function importJsPackage(
  deps: WorkerDeps,
  req: { source: string; official: boolean; options: ImportOptions; publishedBy?: string | null },
  installed: InstalledPackage,
  madeWith: 'entry' | 'options' | undefined,
): Promise<ImportResult> {
  const notMadeWith = (why: string) => invalid(`\`entry\` and \`options\` ${why}`, [{ path: madeWith!, message: why }]);
  // A file variable is written into the sandbox by the MCP server's launch (sandbox/guest/mcp-pipe.cjs) only; a JS
  // tool would get the content where it expects a path.
  const fileAt = req.options.env?.findIndex((v) => 'file' in v && v.file) ?? -1;
  if (fileAt !== -1) {
    const why = 'a file variable (file: true) is for MCP servers; this package is imported as JS tools';
    return invalid(`env: ${why}`, [{ path: `env.${fileAt}.file`, message: why }]);
  }
  const defaults: ManifestDefaults = {
    category: req.options.category,
    env: req.options.env?.map((v) => ({
      name: v.name,
      required: v.required,
      ...(v.secret ? { secret: true } : {}),
      ...('description' in v && v.description ? { description: v.description } : {}),
      ...('default' in v && v.default !== undefined ? { default: v.default } : {}),
    })),
  };
  const parsed = parseManifest(installed.packageJson, defaults);
  if ('errors' in parsed) return invalid(`Invalid package manifest: ${parsed.errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, parsed.errors);
  let m = parsed.manifest;
  if (madeWith && !m.discover) return notMadeWith('applies to packages whose tools are discovered; this one lists its tools');
  // The variables a toolkit's options name are declared.
  const made = planToolkit(req.options, m.env);
  m = { ...m, env: [...m.env, ...made.env] };
  const pkgRef: PackageRef = { name: m.name, version: m.version, dir: installed.dir };
  const d = await deps.sandbox.describe(pkgRef, {
    timeoutMs: m.discover ? DISCOVER_TIMEOUT_MS : DESCRIBE_TIMEOUT_MS,
    exportNames: m.tools.map((t) => t.exportName),
    discover: m.discover === true,
    env: placeholderEnv(m.env),
    ...(made.toolkit ? { toolkit: made.toolkit } : {}),
  });
  if (m.discover) {
    // Nothing is recorded for a package whose tools cannot be found: the import fails with the reason.
    if (d.kind !== 'ok') {
      const why = describeFailure(d, '') ?? 'describing failed';
      return invalid(`Cannot discover the package's tools: ${why}`, [{ path: 'source', message: why }]);
    }
    const found = applyDiscovery(m, d, await variablesNamed(installed.dir, [...m.env.map((v) => v.name), ...(d.envRead ?? [])]));
    if ('error' in found) return invalid(`The package ${found.error}`, [{ path: 'package.json', message: found.error }]);
    m = found.manifest;
  }
  const loadError = d.kind === 'ok' ? null : describeFailure(d, '');
  const described = new Map<string, DescribedTool>(d.kind === 'ok' ? d.tools.map((t) => [t.exportName, t]) : []);
  const descriptionOf = (t: Manifest['tools'][number]) => described.get(t.exportName)?.description || t.description || '';
  const max = deps.config.MAX_TOOL_DESCRIPTION_CHARS;
  const tooLong = m.tools.filter((t) => descriptionOf(t).length > max);
  if (tooLong.length > 0) {
    return invalid(
      `A tool's description may have at most ${max} characters: ${tooLong.map((t) => `${t.exportName} has ${descriptionOf(t).length}`).join(', ')}`,
      tooLong.map((t) => ({ path: `tools.${t.exportName}.description`, message: `has ${descriptionOf(t).length} characters; at most ${max}` })),
    );
  }

  const broken = (t: Manifest['tools'][number]) => {
    const why = loadError ?? (described.has(t.exportName) ? null : `export '${t.exportName}' is missing or is not a tool`);
    return why === null ? null : scrubHostPaths(why, installed.dir);
  };
  const snapshot: VersionTool[] = m.tools.map((t) => {
    const f = described.get(t.exportName);
    return {
      name: toolName(t.exportName, m),
      exportName: t.exportName,
      description: descriptionOf(t),
      inputSchema: f?.inputSchema ?? { type: 'object' },
      outputSchema: f?.outputSchema ?? null,
      permissions: t.permissions ?? null,
      healthExample: t.healthExample ?? null,
      broken: broken(t),
    };
  });
  // Health at import: load + describe (above), then each declared example; a discovered tool, which has none, is called
  // once (health.ts runSmokeCall: only an error in disguise fails it). A failure here makes the tool BROKEN.
  const checkAtImport = async (i: number) => {
    const t = m.tools[i]!;
    const started = performance.now();
    const error =
      loadError ??
      (!described.has(t.exportName)
        ? `export '${t.exportName}' is missing or is not a tool`
        : t.healthExample || !m.discover
          ? await runHealthExample(deps.sandbox, pkgRef, t.exportName, t.healthExample ?? null, t.permissions?.network === true)
          : await runSmokeCall(deps.sandbox, pkgRef, t.exportName, described.get(t.exportName)?.inputSchema));
    return { error, durationMs: performance.now() - started };
  };
  const recorded = await recordVersion(
    deps.db,
    { manifest: m, source: req.source, official: req.official, publishedBy: req.publishedBy ?? null, installed, importError: loadError, snapshot },
    checkAtImport,
  );
  return recorded.ok ? { ok: true, packageId: recorded.packageId, toolIds: recorded.toolIds } : recorded;
}

/** A TPMJS legacy single-tool package exports `default`; its tool is named after the package. */
function toolName(exportName: string, m: Manifest): string {
  const discovered = m.tools.find((t) => t.exportName === exportName)?.name;
  if (discovered) return discovered;
  return exportName === 'default' ? m.name.split('/').pop()! : exportName;
}
