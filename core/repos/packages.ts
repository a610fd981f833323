/** packages and the tools they declare: written by imports, idempotently (re-importing a version changes nothing). */
import type { Db } from '../infra/db.js';
import type { Manifest, HealthExample, ToolPermissions } from '../packages/manifest.js';
import { scrubHostPaths } from '../text/host-paths.js';

export interface PackageRow {
  id: string;
  name: string;
  version: string;
  category: string;
  description: string | null;
  source: string;
  official: boolean;
  env: unknown;
  /** The manifest as imported (Manifest: `format`, `mcp` for an MCP server, `discovery` for discovered tools). */
  manifest: { format?: string; mcp?: unknown; discovery?: unknown } | null;
  install_path: string;
  import_error: string | null;
  published_by: string | null;
  hidden: boolean;
  /** An MCP server's tools/list as last seen (McpListing; null before its first record). */
  mcp_listing?: unknown;
  created_at: Date;
  updated_at: Date;
}

export async function upsertPackage(
  db: Db,
  m: Manifest,
  extra: { source: string; official: boolean; installPath: string; importError: string | null; publishedBy?: string | null },
): Promise<PackageRow> {
  // Import and health errors are stored without host paths or stack frames (see host-paths.ts).
  const importError = extra.importError === null ? null : scrubHostPaths(extra.importError, extra.installPath);
  const [row] = await db('packages')
    .insert({
      name: m.name,
      version: m.version,
      category: m.category,
      description: m.description,
      source: extra.source,
      official: extra.official,
      env: JSON.stringify(m.env),
      manifest: JSON.stringify(m),
      install_path: extra.installPath,
      import_error: importError,
      published_by: extra.publishedBy ?? null,
    })
    .onConflict('name')
    .merge({
      version: m.version,
      category: m.category,
      description: m.description,
      source: extra.source,
      // An admin flag survives a re-import that does not ask for it.
      official: extra.official ? true : db.raw('packages.official'),
      env: JSON.stringify(m.env),
      manifest: JSON.stringify(m),
      install_path: extra.installPath,
      import_error: importError,
      // An import lists the server's tools afresh (worker/import/mcp.ts records them): earlier checks' listing goes.
      mcp_listing: null,
      // Re-importing the version already there changes nothing, its import time included.
      updated_at: db.raw('case when packages.version = excluded.version then packages.updated_at else now() end'),
    })
    .returning('*');
  return row;
}

export interface ToolUpsert {
  name: string;
  exportName: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema: Record<string, unknown> | null;
  permissions: ToolPermissions | null;
  healthExample: HealthExample | null;
  /** Set when the tool cannot work (load failure, missing export): it is BROKEN with this reason. */
  brokenReason: string | null;
}

export async function upsertTool(db: Db, packageId: string, t: ToolUpsert): Promise<string> {
  const broken = t.brokenReason !== null;
  // The package dir is not known here: every absolute path becomes generic (recordHealth, right after, knows it).
  const reason = t.brokenReason === null ? null : scrubHostPaths(t.brokenReason);
  const [row] = await db('tools')
    .insert({
      package_id: packageId,
      name: t.name,
      export_name: t.exportName,
      description: t.description,
      input_schema: JSON.stringify(t.inputSchema),
      output_schema: t.outputSchema ? JSON.stringify(t.outputSchema) : null,
      permissions: t.permissions ? JSON.stringify(t.permissions) : null,
      health_example: t.healthExample ? JSON.stringify(t.healthExample) : null,
      health_status: broken ? 'BROKEN' : 'UNKNOWN',
      health_error: reason,
      last_health_check_at: broken ? db.fn.now() : null,
    })
    .onConflict(['package_id', 'name'])
    .merge({
      export_name: t.exportName,
      description: t.description,
      input_schema: JSON.stringify(t.inputSchema),
      output_schema: t.outputSchema ? JSON.stringify(t.outputSchema) : null,
      permissions: t.permissions ? JSON.stringify(t.permissions) : null,
      health_example: t.healthExample ? JSON.stringify(t.healthExample) : null,
      // A failed import makes the tool BROKEN at once; otherwise the health check that follows decides.
      health_status: broken ? 'BROKEN' : db.raw('tools.health_status'),
      health_error: broken ? reason : db.raw('tools.health_error'),
      // Imported again, the tool has the definition its server lists now: no change is pending.
      tools_changed: null,
      updated_at: db.fn.now(),
    })
    .returning('id');
  return row.id;
}

/** Tools that an earlier version declared and this one does not: BROKEN, kept for history and collections. */
export async function markRemovedTools(db: Db, packageId: string, keep: string[], version: string): Promise<void> {
  await db('tools')
    .where({ package_id: packageId })
    .whereNotIn('name', keep)
    .update({ health_status: 'BROKEN', health_error: `not declared by version ${version}`, updated_at: db.fn.now() });
}

/** Who a package name belongs to (`published_by`, null: the admin), with its id and latest version. */
export interface PackageOwner {
  id: string;
  version: string;
  published_by: string | null;
  publisher_username: string | null;
}

export async function findPackageOwner(db: Db, name: string): Promise<PackageOwner | undefined> {
  return db('packages as p')
    .leftJoin('users as u', 'u.id', 'p.published_by')
    .where('p.name', name)
    .first('p.id', 'p.version', 'p.published_by', 'u.username as publisher_username');
}

/**
 * Serialises the imports of one package name for the rest of the transaction: two first imports of a new name by
 * different users cannot both record it, and two imports of one version cannot both save it.
 */
export async function lockPackageName(db: Db, name: string): Promise<void> {
  await db.raw('select pg_advisory_xact_lock(hashtextextended(?, 43))', [`package:${name}`]);
}

/** Gives a package name to another owner (a username's id; null: the admin). Undefined when there is no such package. */
export async function transferPackage(db: Db, name: string, to: string | null): Promise<string | undefined> {
  const [row] = await db('packages').where({ name }).update({ published_by: to, updated_at: db.fn.now() }).returning('id');
  return row?.id;
}

/** The package's id and latest version, by name (an import decides whether its version becomes the latest). */
export async function findLatestVersion(db: Db, name: string): Promise<{ id: string; version: string } | undefined> {
  return db('packages').where({ name }).first('id', 'version');
}

export async function findPackage(db: Db, id: string): Promise<PackageRow | undefined> {
  return db('packages').where({ id }).first();
}

/** How many packages are imported (none: the first start, which imports the examples). */
export async function countPackages(db: Db): Promise<number> {
  return Number((await db('packages').count('* as n').first())?.n ?? 0);
}
