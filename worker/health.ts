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
    case 'ok': {
      if (example.expect !== undefined && !matchesExpectation(r.output, example.expect))
        return `health example output ${JSON.stringify(r.output).slice(0, 200)} does not match the expected ${JSON.stringify(example.expect).slice(0, 200)}`;
      // An example with no expectation passes unless its answer is an error in disguise.
      const hidden = example.expect === undefined ? disguisedError(r.output) : null;
      return hidden === null ? null : `health example answered success with an error in its result: ${hidden}`;
    }
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

/**
 * An answer that is an error in disguise: the call succeeded, but what the tool answered is the text of a JavaScript
 * failure it caught itself (`sandbox.exec is not a function`, `Cannot read properties of undefined (reading 'x')`,
 * `foo is not defined`, a TypeError or ReferenceError). The rule: the answer is such a text, or an object (or one of its
 * `content` parts) whose `error`, `message`, `stderr` or `text` is. A failure of the world (no network, a refused key,
 * an HTTP status) is not one: a tool may well answer so while it is checked without its network or key.
 */
const JS_FAILURE =
  /\b(?:TypeError|ReferenceError|SyntaxError)\b|\bis not a (?:function|constructor)\b|\bis not defined\b|\bCannot (?:read|set) propert(?:y|ies) of (?:undefined|null)\b|\bCannot destructure property\b/;

export function disguisedError(output: unknown): string | null {
  const said = (v: unknown) => (typeof v === 'string' && JS_FAILURE.test(v) ? v.slice(0, 200) : null);
  const fields = (o: unknown): string | null => {
    if (o === null || typeof o !== 'object' || Array.isArray(o)) return null;
    const r = o as Record<string, unknown>;
    for (const k of ['error', 'message', 'stderr', 'text']) {
      const hit = said(r[k]) ?? fields(k === 'error' ? r[k] : null);
      if (hit) return hit;
    }
    return Array.isArray(r.content) ? (r.content.map(fields).find((x) => x !== null) ?? null) : null;
  };
  return said(output) ?? fields(output);
}

const SMOKE_TIMEOUT_MS = 10_000;

/**
 * An input that a JSON Schema accepts, made from its own words where it has them (const, enum, default, examples) and
 * plain values otherwise: every required property, nothing optional.
 */
export function sampleInput(schema: unknown, depth = 0): unknown {
  if (schema === null || typeof schema !== 'object' || depth > 6) return null;
  const s = schema as Record<string, any>;
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  if ('default' in s) return s.default;
  if (Array.isArray(s.examples) && s.examples.length > 0) return s.examples[0];
  const branches = s.anyOf ?? s.oneOf;
  if (Array.isArray(branches) && branches.length > 0) return sampleInput(branches.find((b) => b?.type !== 'null') ?? branches[0], depth + 1);
  if (Array.isArray(s.allOf) && s.allOf.length > 0) return sampleInput(s.allOf[0], depth + 1);
  const type = Array.isArray(s.type) ? s.type.find((t: unknown) => t !== 'null') : s.type;
  switch (type ?? (s.properties ? 'object' : undefined)) {
    case 'string': {
      if (s.format === 'uri' || s.format === 'url') return 'https://example.com/';
      if (s.format === 'email') return 'test@example.com';
      if (s.format === 'date-time') return '2026-01-01T00:00:00Z';
      if (s.format === 'date') return '2026-01-01';
      return 'test'.padEnd(typeof s.minLength === 'number' ? Math.min(s.minLength, 1000) : 4, 't');
    }
    case 'integer':
    case 'number':
      return typeof s.minimum === 'number' ? s.minimum : typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum + 1 : 1;
    case 'boolean':
      return false;
    case 'array':
      return typeof s.minItems === 'number' && s.minItems > 0 ? Array.from({ length: Math.min(s.minItems, 10) }, () => sampleInput(s.items, depth + 1)) : [];
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, unknown>;
      const required: string[] = Array.isArray(s.required) ? s.required.filter((k: unknown) => typeof k === 'string') : [];
      return Object.fromEntries(required.map((k) => [k, sampleInput(props[k] ?? {}, depth + 1)]));
    }
    default:
      return null;
  }
}

/**
 * At import, a tool found by discovery (it has no health example) is called once, without network and with
 * placeholders for its variables, with an input its schema accepts (sampleInput). Only an answer that is an error in
 * disguise (disguisedError) fails the check: a throw, a refusal of the input or a timeout says nothing of a tool
 * called with made-up input.
 */
export async function runSmokeCall(sandbox: SandboxRunner, pkg: PackageRef, exportName: string, inputSchema: unknown): Promise<string | null> {
  const r = await sandbox.execute({ pkg, exportName, params: sampleInput(inputSchema) ?? {}, env: {}, timeoutMs: SMOKE_TIMEOUT_MS, network: false });
  if (r.kind !== 'ok') return null;
  const hidden = disguisedError(r.output);
  return hidden === null ? null : `a call answered success with an error in its result: ${hidden}`;
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
