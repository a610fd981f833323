/** tools (joined with their package): catalogue reads, lookups by id / slug / `<package>::<tool>`, and counters. */
import type { Db } from '../infra/db.js';
import type { ToolsChanged } from '../packages/mcp-server.js';
import { isUuid } from '../infra/ids.js';
import type { Category, EnvVarSpec, HealthStatus } from '../types.js';
import { qualityScore } from '../tools/scoring.js';
import type { ToolPermissions } from '../packages/manifest.js';
import type { SearchDocument } from '../search/engine.js';
import { schemaText } from '../search/analyzer.js';
import { findPackageVersion } from './package-versions.js';
import { toolAtVersion } from '../packages/versions.js';
import type { ToolRisk } from '../packages/poisoning.js';

export interface ToolRow {
  id: string;
  package_id: string;
  name: string;
  export_name: string;
  description: string;
  input_schema: Record<string, unknown>;
  /** JSON Schema of the tool's output, when the tool declares one. */
  output_schema: Record<string, unknown> | null;
  /** What the package declares the tool does (null: undeclared). */
  permissions: ToolPermissions | null;
  health_example: { params: unknown; expect?: unknown } | null;
  health_status: HealthStatus;
  health_error: string | null;
  consecutive_health_failures: number;
  last_health_check_at: Date | null;
  quality_score: number;
  execution_count: number;
  rating_sum: number;
  rating_count: number;
  created_at: Date;
  updated_at: Date;
  /** Its MCP server's tools/list changed within the version (ToolsChanged), until the package is imported again. */
  tools_changed: ToolsChanged | null;
  /** Hidden instructions found in its descriptions (core/packages/poisoning.ts); null before the check ran. */
  risks: ToolRisk[] | null;
  /** When the admin cleared them as a false alarm (they are not served then); null otherwise. */
  risks_cleared_at: Date | null;
  // from packages
  package_name: string;
  package_version: string;
  package_category: Category;
  package_env: EnvVarSpec[];
  package_official: boolean;
  package_install_path: string;
  /** The integrity of the bytes its version was recorded from (null: recorded before integrity was kept). */
  package_integrity: string | null;
  /** An MCP server's launch (packages.manifest.mcp: bin, args, network); null for other packages. */
  package_mcp: { bin: string; args: string[]; network?: boolean } | null;
}

const COLUMNS = [
  't.*',
  'p.name as package_name',
  'p.version as package_version',
  'p.category as package_category',
  'p.env as package_env',
  'p.official as package_official',
  'p.install_path as package_install_path',
];
/** COLUMNS and an MCP server's launch (ToolRow.package_mcp). */
const columns = (db: Db) => [
  ...COLUMNS,
  db.raw(`p.manifest->'mcp' as package_mcp`),
  db.raw('(select pv.integrity from package_versions pv where pv.package_id = p.id and pv.version = p.version) as package_integrity'),
];

export function toolsQuery(db: Db) {
  return db('tools as t').join('packages as p', 'p.id', 't.package_id');
}

export async function findToolsByIds(db: Db, ids: string[]): Promise<ToolRow[]> {
  if (ids.length === 0) return [];
  return toolsQuery(db).select(columns(db)).whereIn('t.id', ids);
}

/**
 * Resolves a tool reference, the one place every reference is read: its id, `<package>/<tool>` (scoped:
 * `@scope/pkg/tool`) or `<package>::<tool>` for the latest version, and `<package>@<version>/<tool>` or
 * `<package>@<version>::<tool>` for that recorded version (undefined when the version or its tool is unknown).
 */
export async function findToolByRef(db: Db, ref: string): Promise<ToolRow | undefined> {
  if (isUuid(ref)) return toolsQuery(db).select(columns(db)).where('t.id', ref).first();
  const split = splitToolRef(ref);
  if (!split) return undefined;
  const tool = await findToolByName(db, split.packageName, split.toolName);
  if (!tool || split.version === undefined) return tool;
  const v = await findPackageVersion(db, tool.package_id, split.version);
  return v ? toolAtVersion(tool, v) : undefined;
}

export async function findToolByName(db: Db, packageName: string, toolName: string): Promise<ToolRow | undefined> {
  return toolsQuery(db).select(columns(db)).where({ 'p.name': packageName, 't.name': toolName }).first();
}

/** Whether `ref` has the form of a tool reference (an id, `<package>/<tool>` or `<package>::<tool>`); a package alone has not. */
export function isToolRefShape(ref: string): boolean {
  return isUuid(ref) || splitToolRef(ref) !== undefined;
}

/** The version a reference pins (`<package>@<version>/<tool>`), or null (an id, or the latest). */
export function pinnedVersionOf(ref: string): string | null {
  return isUuid(ref) ? null : (splitToolRef(ref)?.version ?? null);
}

/** `<package>[@<version>]/<tool>` or `<package>[@<version>]::<tool>` into its parts (`version` only when pinned). */
export function splitToolRef(ref: string): { packageName: string; toolName: string; version?: string } | undefined {
  const sep = ref.includes('::') ? ref.lastIndexOf('::') : ref.lastIndexOf('/');
  const width = ref.includes('::') ? 2 : 1;
  if (sep <= 0) return undefined;
  let packageName = ref.slice(0, sep);
  const toolName = ref.slice(sep + width);
  // A scope's `@` opens the name; any later `@` starts the pinned version.
  const at = packageName.lastIndexOf('@');
  const version = at > 0 ? packageName.slice(at + 1) : undefined;
  if (at > 0) packageName = packageName.slice(0, at);
  if (version !== undefined && !version) return undefined;
  if (!packageName || !toolName || (packageName.startsWith('@') && !packageName.includes('/'))) return undefined;
  return version === undefined ? { packageName, toolName } : { packageName, toolName, version };
}

/** What the search engines index for a tool: the input schema as the text of its parameters (schemaText()). */
export function searchDocumentOf(
  t: Pick<ToolRow, 'id' | 'name' | 'description' | 'input_schema' | 'package_name' | 'package_category' | 'health_status' | 'quality_score'>,
): SearchDocument {
  return {
    id: t.id,
    name: t.name,
    description: t.description,
    parameters: schemaText(t.input_schema),
    packageName: t.package_name,
    category: t.package_category,
    healthStatus: t.health_status,
    qualityScore: t.quality_score,
  };
}

/** All tools as the search engines index them (searchDocumentOf()). */
export async function listSearchDocuments(db: Db, ids?: string[]): Promise<SearchDocument[]> {
  const q = toolsQuery(db).select(
    't.id',
    't.name',
    't.description',
    't.input_schema',
    'p.name as package_name',
    'p.category as package_category',
    't.health_status',
    't.quality_score',
  );
  // One array parameter, not one per id: a burst of changes (a bulk update of tools) can name more ids than the 65,535
  // parameters a Postgres statement takes.
  if (ids) q.whereRaw('t.id = any(?::uuid[])', [ids]);
  // A hidden package's tools leave search (they stay runnable by reference).
  q.where('p.hidden', false);
  return ((await q) as Parameters<typeof searchDocumentOf>[0][]).map(searchDocumentOf);
}

export async function updateTool(db: Db, id: string, patch: Partial<Omit<ToolRow, 'id'>>): Promise<void> {
  await db('tools')
    .where({ id })
    .update({ ...patch, updated_at: db.fn.now() });
}

/** Recomputes the tool's qualityScore from its current row (see core/tools/scoring.ts). */
export async function refreshQualityScore(db: Db, toolId: string): Promise<void> {
  const t = await db('tools').where({ id: toolId }).first();
  if (!t) return;
  const base = qualityScore({
    description: t.description,
    inputSchema: t.input_schema,
    healthStatus: t.health_status,
    ratingSum: t.rating_sum,
    ratingCount: t.rating_count,
    executionCount: t.execution_count,
  });
  // A tool flagged for hidden instructions ranks below its peers (core/packages/poisoning.ts), until cleared.
  const flagged = !t.risks_cleared_at && Array.isArray(t.risks) && t.risks.length > 0;
  const score = flagged ? Math.round(base * 50) / 100 : base;
  if (score !== t.quality_score) await db('tools').where({ id: toolId }).update({ quality_score: score });
}

/** Every tool's id (the periodic health check enqueues one job per tool). */
export async function listAllToolIds(db: Db): Promise<string[]> {
  return (await db('tools').select('id')).map((r: { id: string }) => r.id);
}

/** Name and health of the given tools (the CLI's import report). */
export async function toolNamesAndHealth(db: Db, ids: string[]): Promise<{ name: string; health_status: string }[]> {
  return db('tools').whereIn('id', ids).select('name', 'health_status');
}

/** A package's tools by name (the admin import's answer). */
export async function listPackageTools(db: Db, packageId: string): Promise<ToolRow[]> {
  return toolsQuery(db).select(columns(db)).where('t.package_id', packageId).orderBy('t.name');
}

/** listPackageTools for several packages in one statement: each package's tools by name (an empty list for none). */
export async function listPackagesTools(db: Db, packageIds: string[]): Promise<Map<string, ToolRow[]>> {
  const out = new Map<string, ToolRow[]>(packageIds.map((id) => [id, []]));
  if (packageIds.length === 0) return out;
  const rows: ToolRow[] = await toolsQuery(db).select(columns(db)).whereIn('t.package_id', packageIds).orderBy('t.name');
  for (const r of rows) out.get(r.package_id)?.push(r);
  return out;
}
