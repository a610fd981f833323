/**
 * package_versions: every imported version of a package (issue 24), with what it takes to run it and a snapshot of
 * its tools. `packages`/`tools` describe the latest version; this table keeps the others runnable by pinned reference.
 */
import semver from 'semver';
import type { Db } from '../infra/db.js';
import type { EnvVarSpec } from '../types.js';
import type { PackageAbout } from '../packages/about.js';

/** A tool as one version declared it. */
export interface VersionTool {
  name: string;
  exportName: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema: Record<string, unknown> | null;
  permissions: unknown;
  healthExample: unknown;
  /** Why the tool could not work in this version (module load failure, missing export); null when it could. */
  broken: string | null;
}

export interface PackageVersionRow {
  id: string;
  package_id: string;
  version: string;
  source: string;
  install_path: string;
  /** The integrity of the bytes the version was installed from (null: recorded before integrity was kept). */
  integrity: string | null;
  manifest: { format?: string; mcp?: unknown; discovery?: unknown } | null;
  env: EnvVarSpec[];
  tools: VersionTool[];
  import_error: string | null;
  compatibility: unknown;
  deprecated: string | null;
  published_by: string | null;
  /** What the package says about itself at import (core/packages/about.ts); null for versions recorded before. */
  about: PackageAbout | null;
  imported_at: Date;
  // joined by listPackageVersions
  publisher_username?: string | null;
}

export type NewPackageVersion = Omit<PackageVersionRow, 'id' | 'imported_at' | 'deprecated' | 'publisher_username' | 'about'> & { about?: PackageAbout | null };

/** Highest semver first; a version that is not semver sorts below every one that is. */
export function compareVersionsDesc(a: string, b: string): number {
  const va = semver.valid(a);
  const vb = semver.valid(b);
  if (va && vb) return semver.rcompare(va, vb);
  if (va) return -1;
  if (vb) return 1;
  return a < b ? 1 : a > b ? -1 : 0;
}

/**
 * Records a new version. A recorded version never changes (worker/import/record.ts refuses one from other bytes
 * under a lock on the package's name): a second insert of the same version is an error, never a merge.
 */
export async function savePackageVersion(db: Db, v: NewPackageVersion): Promise<PackageVersionRow> {
  const row = {
    package_id: v.package_id,
    version: v.version,
    source: v.source,
    install_path: v.install_path,
    integrity: v.integrity,
    manifest: JSON.stringify(v.manifest ?? {}),
    env: JSON.stringify(v.env ?? []),
    tools: JSON.stringify(v.tools),
    import_error: v.import_error,
    compatibility: v.compatibility === null ? null : JSON.stringify(v.compatibility),
    published_by: v.published_by,
    about: v.about ? JSON.stringify(v.about) : null,
  };
  const [saved] = await db('package_versions').insert(row).returning('*');
  return saved;
}

/**
 * Adds the variables `env` declares that a recorded version does not (and a default to one declared without), to the
 * version and, when it is the package's current one, the package (which calls read). Declarations only: what the
 * version's files are never changes. Returns the names added or given a default.
 */
export async function declareSettings(
  db: Db,
  packageId: string,
  version: string,
  env: ReadonlyArray<{ name: string; required: boolean; secret?: boolean; description?: string; default?: string; file?: boolean; placeholder?: string }>,
): Promise<string[]> {
  return db.transaction(async (trx) => {
    const v = await trx('package_versions').where({ package_id: packageId, version }).forUpdate().first('env', 'manifest', 'tools');
    if (!v) return [];
    const current: EnvVarSpec[] = [...((v.env as EnvVarSpec[] | null) ?? [])];
    const changed: string[] = [];
    for (const given of env) {
      const at = current.findIndex((c) => c.name === given.name);
      const spec: EnvVarSpec = {
        name: given.name,
        required: given.required,
        ...(given.secret ? { secret: true } : {}),
        ...(given.description ? { description: given.description } : {}),
        ...(given.default !== undefined ? { default: given.default } : {}),
        ...(given.file ? { file: true } : {}),
        ...(given.placeholder !== undefined ? { placeholder: given.placeholder } : {}),
      };
      if (at === -1) current.push(spec);
      else if (given.default !== undefined && current[at].default !== given.default && !current[at].secret)
        current[at] = { ...current[at], default: given.default };
      else continue;
      changed.push(given.name);
    }
    if (changed.length === 0) return [];
    // An MCP server's tools may read every declared variable (worker/import/mcp.ts permissionsOf): the new ones join
    // their `secrets`, or the narrowing would keep them (and their defaults) from the server. A JS tool's own
    // `secrets` are its author's and stay as they are.
    const manifest = v.manifest as { format?: string; mcp?: { files?: string[] } } | null;
    const mcp = manifest?.format === 'mcp';
    const tools = mcp ? (v.tools as VersionTool[]).map((t) => ({ ...t, permissions: withSecrets(t.permissions, changed) })) : undefined;
    // The server's launch names the variables that are files (sandbox/types.ts McpLaunch.files).
    const files = current.filter((c) => c.file).map((c) => c.name);
    const launch = mcp && manifest.mcp && files.length ? { manifest: trx.raw(`jsonb_set(manifest, '{mcp,files}', ?::jsonb)`, [JSON.stringify(files)]) } : {};
    await trx('package_versions')
      .where({ package_id: packageId, version })
      .update({ env: JSON.stringify(current), ...(tools ? { tools: JSON.stringify(tools) } : {}), ...launch });
    const latest = await trx('packages')
      .where({ id: packageId, version })
      .update({ env: JSON.stringify(current), ...launch });
    if (mcp && latest > 0) {
      for (const t of await trx('tools').where({ package_id: packageId }).select('id', 'permissions')) {
        await trx('tools')
          .where({ id: t.id })
          .update({ permissions: JSON.stringify(withSecrets(t.permissions, changed)) });
      }
    }
    return changed;
  });
}

/** Permissions whose `secrets` list holds `names` too (a tool without such a list reads every variable already). */
function withSecrets(permissions: unknown, names: string[]): unknown {
  const p = (permissions ?? {}) as { secrets?: string[] };
  if (!Array.isArray(p.secrets)) return permissions;
  return { ...p, secrets: [...new Set([...p.secrets, ...names])] };
}

export async function findPackageVersion(db: Db, packageId: string, version: string): Promise<PackageVersionRow | undefined> {
  return db('package_versions').where({ package_id: packageId, version }).first();
}

/** The recorded version of the package named `name`, if any. */
export async function findVersionByName(db: Db, name: string, version: string): Promise<PackageVersionRow | undefined> {
  return db('package_versions as v').join('packages as p', 'p.id', 'v.package_id').where({ 'p.name': name, 'v.version': version }).first('v.*');
}

/** Every version of the package, highest first, with its publisher's username. */
export async function listPackageVersions(db: Db, packageId: string): Promise<PackageVersionRow[]> {
  const rows: PackageVersionRow[] = await db('package_versions as v')
    .leftJoin('users as u', 'u.id', 'v.published_by')
    .where('v.package_id', packageId)
    .select('v.*', 'u.username as publisher_username');
  return rows.sort((a, b) => compareVersionsDesc(a.version, b.version));
}

/** The given (package, version) pairs, keyed `<package_id>@<version>` (for tools of collections that are not on the latest). */
export async function findPackageVersions(db: Db, pairs: { packageId: string; version: string }[]): Promise<Map<string, PackageVersionRow>> {
  if (pairs.length === 0) return new Map();
  const rows: PackageVersionRow[] = await db('package_versions').whereIn(
    ['package_id', 'version'],
    pairs.map((p) => [p.packageId, p.version]),
  );
  return new Map(rows.map((r) => [`${r.package_id}@${r.version}`, r]));
}

export async function setVersionDeprecated(db: Db, id: string, deprecated: string | null): Promise<void> {
  await db('package_versions').where({ id }).update({ deprecated });
}

/** The ids of the package's tools rows named as the version's tools, in the version's order. */
export async function toolIdsByName(db: Db, packageId: string, tools: { name: string }[]): Promise<string[]> {
  const rows: { id: string; name: string }[] = await db('tools')
    .where({ package_id: packageId })
    .whereIn(
      'name',
      tools.map((t) => t.name),
    )
    .select('id', 'name');
  const byName = new Map(rows.map((r) => [r.name, r.id]));
  return tools.flatMap((t) => (byName.has(t.name) ? [byName.get(t.name)!] : []));
}

/** An admin's import flags the package official, even when the version was imported already. */
export async function markOfficial(db: Db, packageId: string): Promise<void> {
  await db('packages').where({ id: packageId, official: false }).update({ official: true });
}
