/**
 * Versions of a package as tools see them (issue 24): a tool row (which describes the latest version) seen at another
 * recorded version, and which version a collection's entry should follow when a new one arrives.
 */
import type { Db } from '../infra/db.js';
import { findPackageVersions, type PackageVersionRow, type VersionTool } from '../repos/package-versions.js';
import type { ToolRow } from '../repos/tools.js';
import type { ToolPermissions } from './manifest.js';
import { toolRisks } from './poisoning.js';
import { compareVersions, type SchemaChange } from './compatibility.js';

/**
 * The tool as version `v` declared it: its export, description, schemas, and the version's install path, env and
 * MCP launch; undefined when that version has no such tool. The latest version's health is the tool's own; an older
 * version is BROKEN only if it could not load at its import (it is not checked periodically).
 */
export function toolAtVersion(tool: ToolRow, v: PackageVersionRow): ToolRow | undefined {
  if (v.version === tool.package_version && v.install_path === tool.package_install_path) return tool;
  const t = v.tools.find((x) => x.name === tool.name);
  if (!t) return undefined;
  return {
    ...tool,
    export_name: t.exportName,
    description: t.description,
    input_schema: t.inputSchema,
    output_schema: t.outputSchema,
    permissions: (t.permissions ?? null) as ToolPermissions | null,
    health_example: (t.healthExample ?? null) as ToolRow['health_example'],
    health_status: t.broken ? 'BROKEN' : 'UNKNOWN',
    health_error: t.broken,
    package_version: v.version,
    package_install_path: v.install_path,
    package_integrity: v.integrity,
    // The risks of this version's own texts, not the latest's (the admin's clearing is the latest's texts').
    risks: toolRisks({ name: t.name, description: t.description, inputSchema: t.inputSchema }),
    risks_cleared_at: null,
    package_env: v.env,
    package_mcp: ((v.manifest as { mcp?: unknown } | null)?.mcp ?? null) as ToolRow['package_mcp'],
  };
}

/**
 * What changed for one tool between two versions, with the package's own changes (its env: tool ''); `breaking` marks
 * those that break callers, `needsReview` those a follower does not move over (core/packages/compatibility.ts).
 */
export function toolChanges(tool: string, from: PackageVersionRow, to: PackageVersionRow): SchemaChange[] {
  const pick = (v: PackageVersionRow) => ({ version: v.version, tools: v.tools.filter((t: VersionTool) => t.name === tool), env: v.env ?? [] });
  return compareVersions(pick(from), pick(to)).changes;
}

/**
 * Where a collection's entry that follows the latest version goes when `next` becomes the latest: it moves when
 * nothing of `next` needs review for its tool against the version it is on (`current`): only compatible schema
 * changes. It is held on `current` otherwise (a breaking schema change, a description, annotation or permission
 * changed, network or secrets gained, env added, the tool removed) until its owner accepts the change.
 * Returns the version to hold it on, or null to follow the latest.
 */
export function heldVersionFor(tool: string, current: PackageVersionRow, next: PackageVersionRow): string | null {
  return toolChanges(tool, current, next).some((c) => c.needsReview) ? current.version : null;
}

/**
 * Tool rows seen at the versions their collection entries are on (`versions[i]` for `tools[i]`: a pinned or held
 * version, or null for the latest). Reads the database only when some entry is not on the latest.
 */
export async function atEntryVersions(db: Db, tools: ToolRow[], versions: (string | null)[]): Promise<ToolRow[]> {
  const wanted = tools.flatMap((t, i) => (versions[i] && versions[i] !== t.package_version ? [{ packageId: t.package_id, version: versions[i]! }] : []));
  if (wanted.length === 0) return tools;
  const found = await findPackageVersions(db, wanted);
  return tools.map((t, i) => {
    const v = versions[i] ? found.get(`${t.package_id}@${versions[i]}`) : undefined;
    return (v && toolAtVersion(t, v)) ?? t;
  });
}
