/**
 * Records an imported version (issue 24): its row in package_versions with a snapshot of its tools and its comparison
 * with the version just below it, and, when it becomes the latest, moves the collections that follow the latest
 * version (an entry stays held on the version it is on when the new one breaks its tool; see core/packages/versions.ts).
 */
import { compareVersions, type Compatibility } from '../core/packages/compatibility.js';
import { heldVersionFor } from '../core/packages/versions.js';
import { listFollowingEntries, setHeldVersion } from '../core/repos/collections.js';
import {
  compareVersionsDesc,
  findVersionByName,
  listPackageVersions,
  markOfficial,
  toolIdsByName,
  savePackageVersion,
  type NewPackageVersion,
  type PackageVersionRow,
} from '../core/repos/package-versions.js';
import type { Db } from '../core/infra/db.js';
import type { InstalledPackage } from '../sandbox/packages.js';
import type { ImportResult } from './import.js';

/**
 * `previousLatest`: the package's latest version before this import (undefined for a first import, or when this one
 * is not the latest). Returns the new version's comparison with the one below it (null when it is the lowest).
 */
export async function recordVersion(db: Db, v: Omit<NewPackageVersion, 'compatibility'>, previousLatest: string | undefined): Promise<Compatibility | null> {
  const others = (await listPackageVersions(db, v.package_id)).filter((o) => o.version !== v.version);
  // The version just below this one (by semver): the one it is compared with.
  const below = others.find((o) => compareVersionsDesc(o.version, v.version) > 0);
  const compatibility = below ? compareVersions(below, { version: v.version, tools: v.tools }) : null;
  const saved = await savePackageVersion(db, { ...v, compatibility });
  if (previousLatest !== undefined && previousLatest !== v.version) await moveFollowers(db, saved, others, previousLatest);
  return compatibility;
}

async function moveFollowers(db: Db, next: PackageVersionRow, others: PackageVersionRow[], previousLatest: string): Promise<void> {
  const byVersion = new Map(others.map((o) => [o.version, o]));
  for (const e of await listFollowingEntries(db, next.package_id)) {
    // An entry is on the version it is held on, or on the latest before this one.
    const current = byVersion.get(e.held_version ?? previousLatest);
    if (!current) continue;
    const held = heldVersionFor(e.tool_name, current, next);
    if (held !== e.held_version) await setHeldVersion(db, e.collection_id, e.tool_id, held);
  }
}

/**
 * Re-importing a version already recorded from the same files (npm versions never change; a folder is recorded by
 * its content hash) changes nothing: the import answers with what is there. Undefined when the version is new.
 */
export async function knownVersion(db: Db, installed: InstalledPackage, official: boolean): Promise<ImportResult | undefined> {
  const v = await findVersionByName(db, String(installed.packageJson.name), String(installed.packageJson.version));
  if (!v || v.install_path !== installed.dir) return undefined;
  if (official) await markOfficial(db, v.package_id);
  return { ok: true, packageId: v.package_id, toolIds: await toolIdsByName(db, v.package_id, v.tools) };
}
