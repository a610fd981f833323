/**
 * The import job's entry (and the CLI's): checks the request, installs the package into the cache, answers at once for
 * a version recorded already or a name another user owns (record.ts), then hands the package to the import of its
 * kind: an MCP server (mcp.ts) or a package of JS tools (js.ts: a manifest, a TPMJS package, discovered exports). Each
 * ends in record.ts recordVersion.
 */
import { importOptionsSchema, isMcpServer } from '../../core/packages/mcp-server.js';
import { parseSource } from '../../core/packages/source.js';
import { declareSettings } from '../../core/repos/package-versions.js';
import { installPackage, InstallError } from '../../sandbox/packages.js';
import type { WorkerDeps } from '../deps.js';
import { importJsPackage } from './js.js';
import { binText, importMcpServer } from './mcp.js';
import { checkBeforeDescribing } from './record.js';
import { invalid, type ImportResult } from './result.js';

export type { ImportResult } from './result.js';

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
  // The bin's text (read once: the MCP import reads it too) makes a server whose MCP library is not among its dependencies.
  const bin = await binText(installed);
  const mcp = isMcpServer(installed.packageJson, options.data, bin);
  // A toolkit made with arguments (core/packages/toolkit.ts): the field a refusal names, when the request has one.
  const madeWith = options.data.entry !== undefined ? 'entry' : options.data.options !== undefined ? 'options' : undefined;
  if (mcp && madeWith) {
    const why = 'applies to packages of JS tools; this is an MCP server (its command line is `args`)';
    return invalid(`\`entry\` and \`options\` ${why}`, [{ path: madeWith, message: why }]);
  }
  if (mcp) return importMcpServer(deps, { ...req, options: options.data }, installed, bin);
  return importJsPackage(deps, { ...req, options: options.data }, installed, madeWith);
}
