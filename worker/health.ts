/**
 * Health of a tool: its module loads, its export is well-formed, and its declared health example passes.
 * BROKEN after a failed import check or 3 consecutive failed periodic checks; HEALTHY after any passing check.
 */
import type { Db } from '../core/db.js';
import { scrubHostPaths } from '../core/host-paths.js';
import { matchesExpectation, type HealthExample } from '../core/packages/manifest.js';
import { findToolByRef, refreshQualityScore, type ToolRow } from '../core/repos/tools.js';
import { recordHealthCheck } from '../core/repos/health-checks.js';
import { placeholderEnv } from '../core/packages/mcp-server.js';
import type { DescribeOutcome, PackageRef, SandboxRunner } from '../sandbox/types.js';
import type { WorkerDeps } from './deps.js';

export const BROKEN_AFTER_FAILURES = 3;
const CHECK_TIMEOUT_MS = 20_000;

export function packageRefOf(t: ToolRow): PackageRef {
  return { name: t.package_name, version: t.package_version, dir: t.package_install_path, ...(t.package_mcp ? { mcp: t.package_mcp } : {}) };
}

/** Runs the tool's health example (if any) and says what failed, or null when it passed. */
export async function runHealthExample(
  sandbox: SandboxRunner,
  pkg: PackageRef,
  exportName: string,
  example: HealthExample | null,
  network = false,
): Promise<string | null> {
  if (!example) return null;
  const r = await sandbox.execute({ pkg, exportName, params: example.params, env: {}, timeoutMs: CHECK_TIMEOUT_MS, network });
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

export async function recordHealth(db: Db, toolId: string, r: { error: string | null; durationMs: number; atImport: boolean }): Promise<void> {
  await db.transaction(async (trx) => {
    // The error is public (the tool's healthError): host paths and stack frames go before it is stored.
    const error = r.error === null ? null : scrubHostPaths(r.error, (await findToolByRef(trx, toolId))?.package_install_path);
    await recordHealthCheck(trx, toolId, { error, durationMs: r.durationMs, brokenAfter: r.atImport ? 1 : BROKEN_AFTER_FAILURES });
    await refreshQualityScore(trx, toolId);
  });
}

/** A periodic (or on-demand) check of one tool. */
export async function checkTool(deps: WorkerDeps, toolId: string): Promise<void> {
  const tool = await findToolByRef(deps.db, toolId);
  if (!tool) return;
  const started = performance.now();
  const pkg = packageRefOf(tool);
  // Placeholders for the declared variables, as at import, never a real value: an MCP server that needs its key to
  // start, or a factory or class that insists on its key while loading (discovery.ts).
  const env = placeholderEnv(tool.package_env);
  const d = await deps.sandbox.describe(pkg, { timeoutMs: CHECK_TIMEOUT_MS, exportNames: [tool.export_name], env });
  const error =
    describeFailure(d, tool.export_name) ??
    (pkg.mcp && d.kind === 'ok' ? mcpDefinitionChange(tool, d.tools) : null) ??
    (await runHealthExample(deps.sandbox, pkg, tool.export_name, tool.health_example as HealthExample | null, tool.permissions?.network === true));
  await recordHealth(deps.db, tool.id, { error, durationMs: performance.now() - started, atImport: false });
}

/** JSON with object keys sorted (Postgres jsonb reorders keys), for comparing definitions. */
function canonical(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v ?? null);
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
    .join(',')}}`;
}

/**
 * An MCP server lists its tools at every check: a tool whose definition (description, input or output schema) is not
 * what the same version listed at import is flagged (the check fails, naming what changed).
 */
function mcpDefinitionChange(
  tool: ToolRow,
  listed: { exportName: string; description: string; inputSchema: unknown; outputSchema?: unknown }[],
): string | null {
  const now = listed.find((t) => t.exportName === tool.export_name);
  if (!now) return null;
  const changed = [
    now.description !== tool.description && 'description',
    canonical(now.inputSchema) !== canonical(tool.input_schema) && 'input schema',
    canonical(now.outputSchema ?? null) !== canonical(tool.output_schema) && 'output schema',
  ].filter(Boolean);
  return changed.length === 0
    ? null
    : `the MCP server's tools/list changed for version ${tool.package_version} since it was imported (${changed.join(', ')}); re-import the package to take the new definition`;
}
