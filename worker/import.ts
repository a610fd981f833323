/**
 * Imports a package: install into the cache, read its manifest, describe its tools in a sandbox (module loads,
 * exports, JSON Schemas), record package and tools, then health-check each tool. Shared by the import job and the CLI.
 * A tool description over MAX_TOOL_DESCRIPTION_CHARS refuses the whole import (400, nothing recorded): every list,
 * search answer and MCP `tools/list` carries descriptions, so one huge one would weigh on every reader.
 */
import { parseManifest, type Manifest, type ManifestDefaults } from '../core/packages/manifest.js';
import { applyDiscovery, placeholderEnv } from '../core/packages/discovery.js';
import { variablesNamed } from './env-named.js';
import { planToolkit } from '../core/packages/toolkit.js';
import type { VersionTool } from '../core/repos/package-versions.js';
import type { ImportStartup } from '../core/repos/package-imports.js';
import { checkBeforeDescribing, recordImport } from './record-version.js';
import { declareSettings } from '../core/repos/package-versions.js';
import { parseSource } from '../core/packages/source.js';
import { importOptionsSchema, isMcpServer } from '../core/packages/mcp-server.js';
import { binText, importMcpServer } from './import/mcp.js';
import { refreshQualityScore } from '../core/repos/tools.js';
import type { ErrorDetail } from '../core/infra/errors.js';
import { scrubHostPaths } from '../core/text/host-paths.js';
import { installPackage, InstallError } from '../sandbox/packages.js';
import type { DescribedTool, PackageRef } from '../sandbox/types.js';
import type { WorkerDeps } from './deps.js';
import { describeFailure, recordHealth, runHealthExample, runSmokeCall } from './health.js';

const DESCRIBE_TIMEOUT_MS = 30_000;
/** Discovery loads the whole module and examines every export (factories get 5 s each): a larger bound. */
const DISCOVER_TIMEOUT_MS = 60_000;

/** `startup`: an MCP server's start-up, as worker/import/mcp-startup.ts ran it (kept on the import's row). */
export type ImportResult = (
  | { ok: true; packageId: string; toolIds: string[] }
  | { ok: false; error: { code: 'VALIDATION_ERROR' | 'FORBIDDEN' | 'CONFLICT' | 'INTERNAL'; message: string; details?: ErrorDetail[] } }
) & { startup?: ImportStartup };

/**
 * `options`: what the request said beyond its source (core/packages/mcp-server.ts ImportOptions): `category` and `env`
 * for a package that does not say them, the rest for an MCP server. `publishedBy`: the user who published it.
 */
export async function importPackage(
  deps: WorkerDeps,
  req: { source: string; official: boolean; options?: Record<string, unknown>; publishedBy?: string | null },
): Promise<ImportResult> {
  const options = importOptionsSchema.safeParse(req.options ?? {});
  if (!options.success)
    return invalid(
      'Invalid import options',
      options.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    );
  const source = parseSource(req.source);
  if ('error' in source) return invalid(source.error, [{ path: 'source', message: source.error }]);
  let installed;
  try {
    installed = await installPackage(deps.config.PACKAGE_CACHE_DIR, source, {
      userconfig: deps.config.NPM_USERCONFIG,
      maxTarballBytes: deps.config.MAX_PACKAGE_TARBALL_MB * 1024 * 1024,
      maxUnpackedBytes: deps.config.MAX_PACKAGE_UNPACKED_MB * 1024 * 1024,
      maxFiles: deps.config.MAX_PACKAGE_FILES,
      maxInstalledBytes: deps.config.MAX_PACKAGE_INSTALLED_MB * 1024 * 1024,
    });
  } catch (err) {
    if (err instanceof InstallError && err.userError) return invalid(err.message, err.details ?? [{ path: 'source', message: err.message }]);
    deps.logger.error({ err: (err as Error).message, source: req.source }, 'package install failed');
    return { ok: false, error: { code: 'INTERNAL', message: (err as Error).message } };
  }
  // A version recorded already is not imported again (from other bytes it is refused), nor a name another user owns.
  const known = await checkBeforeDescribing(deps.db, installed, req);
  if (known) {
    // Settings the request declares that the recorded version lacks (DATA_DIR) are added to it: they are the
    // importer's configuration, not the package's bytes (which never change), and were silently dropped before.
    if (known.ok && options.data.env?.length) await declareSettings(deps.db, known.packageId, String(installed.packageJson.version), options.data.env);
    return known;
  }
  // MCP servers have an import of their own (worker/import/mcp.ts).
  // The bin's text (read once: the MCP import reads it too) makes a server whose MCP library is not among its dependencies.
  const bin = await binText(installed);
  const mcp = isMcpServer(installed.packageJson, options.data, bin);
  // A toolkit made with arguments (core/packages/toolkit.ts): the field a refusal names, when the request has one.
  const madeWith = options.data.entry !== undefined ? 'entry' : options.data.options !== undefined ? 'options' : undefined;
  const notMadeWith = (why: string) => invalid(`\`entry\` and \`options\` ${why}`, [{ path: madeWith!, message: why }]);
  if (mcp && madeWith) return notMadeWith('applies to packages of JS tools; this is an MCP server (its command line is `args`)');
  if (mcp) return importMcpServer(deps, { ...req, options: options.data }, installed, bin);
  const defaults: ManifestDefaults = {
    category: options.data.category,
    env: options.data.env?.map((v) => ({
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
  const made = planToolkit(options.data, m.env);
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
  const recorded = await recordImport(deps.db, {
    manifest: m,
    source: req.source,
    official: req.official,
    publishedBy: req.publishedBy ?? null,
    installed,
    importError: loadError,
    snapshot,
  });
  if (!recorded.ok) return recorded;
  const { packageId, toolIds, latest } = recorded;
  // An older version's tools are not the tools rows' (those describe the latest): their health stays the latest's.
  if (!latest) return { ok: true, packageId, toolIds };

  // Health at import: load + describe (above), then each declared example; a discovered tool, which has none, is called
  // once (health.ts runSmokeCall: only an error in disguise fails it). A failure here makes the tool BROKEN.
  for (const [i, t] of m.tools.entries()) {
    const started = performance.now();
    const error =
      loadError ??
      (!described.has(t.exportName)
        ? `export '${t.exportName}' is missing or is not a tool`
        : t.healthExample || !m.discover
          ? await runHealthExample(deps.sandbox, pkgRef, t.exportName, t.healthExample ?? null, t.permissions?.network === true)
          : await runSmokeCall(deps.sandbox, pkgRef, t.exportName, described.get(t.exportName)?.inputSchema));
    await recordHealth(deps.db, toolIds[i], { error, durationMs: performance.now() - started, atImport: true });
    await refreshQualityScore(deps.db, toolIds[i]);
  }
  return { ok: true, packageId, toolIds };
}

/** A TPMJS legacy single-tool package exports `default`; its tool is named after the package. */
function toolName(exportName: string, m: Manifest): string {
  const discovered = m.tools.find((t) => t.exportName === exportName)?.name;
  if (discovered) return discovered;
  return exportName === 'default' ? m.name.split('/').pop()! : exportName;
}

function invalid(message: string, details: ErrorDetail[]): ImportResult {
  return { ok: false, error: { code: 'VALIDATION_ERROR', message, details } };
}
