/**
 * Health of a tool: its module loads, its export is well-formed, and its declared health example passes.
 * BROKEN after a failed import check or 3 consecutive failed periodic checks; HEALTHY after any passing check.
 * An MCP server is checked once per package (checkMcpServer): started once, its tools listed, and every tool's check
 * recorded from that one listing; a tool it no longer lists is BROKEN at once, and a listing that differs from the
 * last one recorded (at import or at the previous check) flags every tool of the package (`toolsChanged`).
 */
import type { Db } from '../core/infra/db.js';
import { scrubHostPaths } from '../core/text/host-paths.js';
import { matchesExpectation, type HealthExample } from '../core/packages/manifest.js';
import { findToolByRef, listPackageTools, refreshQualityScore, type ToolRow } from '../core/repos/tools.js';
import { flagToolsChanged, recordHealthCheck, saveMcpListing } from '../core/repos/health-checks.js';
import { findPackage } from '../core/repos/packages.js';
import { definitionChanges, listingChanges, mcpListingOf, placeholderEnv, type McpListing, type ToolsChanged } from '../core/packages/mcp-server.js';
import type { DescribeOutcome, PackageRef, SandboxRunner } from '../sandbox/types.js';
import type { WorkerDeps } from './deps.js';

export const BROKEN_AFTER_FAILURES = 3;
const CHECK_TIMEOUT_MS = 20_000;

export function packageRefOf(t: ToolRow): PackageRef {
  return {
    name: t.package_name,
    version: t.package_version,
    dir: t.package_install_path,
    integrity: t.package_integrity,
    ...(t.package_mcp ? { mcp: t.package_mcp } : {}),
  };
}

/** Runs the tool's health example (if any) and says what failed, or null when it passed. */
export async function runHealthExample(
  sandbox: SandboxRunner,
  pkg: PackageRef,
  exportName: string,
  example: HealthExample | null,
  network = false,
  signal?: AbortSignal,
): Promise<string | null> {
  if (!example) return null;
  const r = await sandbox.execute({ pkg, exportName, params: example.params, env: {}, timeoutMs: CHECK_TIMEOUT_MS, network, signal });
  switch (r.kind) {
    case 'ok':
      return example.expect === undefined || matchesExpectation(r.output, example.expect)
        ? null
        : `health example output ${JSON.stringify(r.output).slice(0, 200)} does not match the expected ${JSON.stringify(example.expect).slice(0, 200)}`;
    case 'tool_error':
      return `health example threw: ${r.message}`;
    case 'timeout':
      return 'health example timed out';
    case 'oom':
      return 'health example ran out of memory';
    case 'output_too_large':
      return 'health example output exceeds 1 MiB';
    case 'sandbox_error':
      return `sandbox error: ${r.message}`;
  }
}

/** The load/describe part of a check, from a describe outcome. */
export function describeFailure(d: DescribeOutcome, exportName: string): string | null {
  if (d.kind === 'load_error') return `module failed to load: ${d.message}`;
  if (d.kind === 'timeout') return 'loading the module timed out';
  if (d.kind === 'sandbox_error') return `sandbox error: ${d.message}`;
  if (d.missing.includes(exportName)) return `export '${exportName}' is missing or is not a tool`;
  return null;
}

/** `atImport`: one failure makes the tool BROKEN (at import, or a tool its MCP server no longer lists). */
export async function recordHealth(db: Db, toolId: string, r: { error: string | null; durationMs: number; atImport: boolean }): Promise<void> {
  await db.transaction(async (trx) => {
    // The error is public (the tool's healthError): host paths and stack frames go before it is stored.
    const error = r.error === null ? null : scrubHostPaths(r.error, (await findToolByRef(trx, toolId))?.package_install_path);
    await recordHealthCheck(trx, toolId, { error, durationMs: r.durationMs, brokenAfter: r.atImport ? 1 : BROKEN_AFTER_FAILURES });
    await refreshQualityScore(trx, toolId);
  });
}

/**
 * A periodic (or on-demand) check of one tool; a tool of an MCP server checks its whole server. `signal` (the job's:
 * the worker is stopping) ends the check in the sandbox, and a check cut short records nothing: it says nothing of
 * the tool.
 */
export async function checkTool(deps: WorkerDeps, toolId: string, signal?: AbortSignal): Promise<void> {
  const tool = await findToolByRef(deps.db, toolId);
  if (!tool) return;
  if (tool.package_mcp) return checkMcpServer(deps, tool.package_id, signal);
  const started = performance.now();
  const pkg = packageRefOf(tool);
  // Placeholders for the declared variables, as at import, never a real value: a factory or class that insists on
  // its key while loading (discovery.ts).
  const env = placeholderEnv(tool.package_env);
  const d = await deps.sandbox.describe(pkg, { timeoutMs: CHECK_TIMEOUT_MS, exportNames: [tool.export_name], env, signal });
  const error =
    describeFailure(d, tool.export_name) ??
    (await runHealthExample(deps.sandbox, pkg, tool.export_name, tool.health_example as HealthExample | null, tool.permissions?.network === true, signal));
  if (signal?.aborted) return;
  await recordHealth(deps.db, tool.id, { error, durationMs: performance.now() - started, atImport: false });
}

/**
 * One check of an MCP server: it is started once (with placeholders for its declared variables, as at import) and
 * lists its tools. A tool it lists with the definition it was imported with passes; one it no longer lists is BROKEN
 * at once; one whose definition differs fails its check (naming what changed). A listing that differs from the last
 * one recorded flags every tool of the package with what changed (kept until the package is imported again), and
 * becomes the one the next check compares with.
 */
export async function checkMcpServer(deps: WorkerDeps, packageId: string, signal?: AbortSignal): Promise<void> {
  const [pkg, tools] = await Promise.all([findPackage(deps.db, packageId), listPackageTools(deps.db, packageId)]);
  if (!pkg || tools.length === 0 || !tools[0].package_mcp) return;
  const started = performance.now();
  // A server imported with `network` lists its tools with egress, as at import.
  const network = tools[0].permissions?.network === true;
  const d = await deps.sandbox.describe(packageRefOf(tools[0]), { timeoutMs: CHECK_TIMEOUT_MS, env: placeholderEnv(tools[0].package_env), network, signal });
  const durationMs = performance.now() - started;
  if (signal?.aborted) return;
  if (d.kind !== 'ok') {
    const error = describeFailure(d, '');
    for (const tool of tools) await recordHealth(deps.db, tool.id, { error, durationMs, atImport: false });
    return;
  }
  const now = mcpListingOf(d.tools);
  // Packages imported before listings were recorded compare with their tools as imported.
  const before =
    (pkg.mcp_listing as McpListing | null | undefined) ??
    mcpListingOf(
      tools
        .filter((t) => !(t.health_status === 'BROKEN' && t.health_error?.startsWith('not declared by version')))
        .map((t) => ({ exportName: t.export_name, description: t.description, inputSchema: t.input_schema, outputSchema: t.output_schema })),
    );
  const changes = listingChanges(before, now);
  await deps.db.transaction(async (trx) => {
    await saveMcpListing(trx, packageId, now);
    if (changes) await flagToolsChanged(trx, packageId, { detectedAt: new Date().toISOString(), version: pkg.version, ...changes } satisfies ToolsChanged);
  });
  for (const tool of tools) {
    const listed = now[tool.export_name];
    const error = listed
      ? mcpDefinitionChange(tool, listed)
      : `the MCP server no longer lists the tool '${tool.name}' (version ${pkg.version}); re-import the package if it was removed`;
    await recordHealth(deps.db, tool.id, { error, durationMs, atImport: !listed });
  }
}

/**
 * A tool whose definition (description, input or output schema) is not what the same version listed at import is
 * flagged (the check fails, naming what changed): its calls are still checked against the imported schema.
 */
function mcpDefinitionChange(tool: ToolRow, listed: McpListing[string]): string | null {
  const changed = definitionChanges({ description: tool.description, inputSchema: tool.input_schema, outputSchema: tool.output_schema }, listed);
  return changed.length === 0
    ? null
    : `the MCP server's tools/list changed for version ${tool.package_version} since it was imported (${changed.join(', ')}); re-import the package to take the new definition`;
}
