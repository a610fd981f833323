/**
 * The one recorder every kind of import ends in (issues 24, 43, 46): `recordVersion` records in one transaction, under
 * a lock on the package's name, after checking who may record it and that a recorded version never changes: the
 * version (a snapshot of its tools and its comparison with the version just below it) and, when it becomes the latest,
 * the package, its tools, its removed tools and the collections that follow the latest (an entry stays held on its
 * version when the new one needs review; core/packages/versions.ts). Then, for the latest, each tool's health check at
 * import (the kind's own check: a JS tool's example, an MCP server's start and tools/list) and its quality score.
 *
 * Who may record: a package name belongs to whoever first recorded it (null: the admin, whose imports are official).
 * Another user's import of it is refused (FORBIDDEN) by the recorded name, whatever was requested; the admin's (and
 * the poller's, on the owner's behalf) goes through. A (package, version) recorded from other bytes is refused
 * (CONFLICT); from the same bytes nothing changes.
 */
import { compareVersions, type Compatibility } from '../../core/packages/compatibility.js';
import { readAbout } from '../../core/packages/about.js';
import type { Manifest } from '../../core/packages/manifest.js';
import { heldVersionFor } from '../../core/packages/versions.js';
import { listFollowingEntries, setHeldVersion } from '../../core/repos/collections.js';
import { saveMcpListing } from '../../core/repos/health-checks.js';
import {
  compareVersionsDesc,
  findPackageVersion,
  findVersionByName,
  listPackageVersions,
  markOfficial,
  toolIdsByName,
  savePackageVersion,
  type NewPackageVersion,
  type PackageVersionRow,
  type VersionTool,
} from '../../core/repos/package-versions.js';
import { findPackageOwner, lockPackageName, markRemovedTools, upsertPackage, upsertTool, type PackageOwner } from '../../core/repos/packages.js';
import { setCompatibility } from '../../core/repos/published-packages.js';
import { refreshToolRisks } from '../../core/repos/tool-risks.js';
import type { Db } from '../../core/infra/db.js';
import type { McpListing } from '../../core/packages/mcp-server.js';
import type { McpOffer } from '../../core/packages/mcp-offer.js';
import { saveMcpOffer } from '../../core/repos/mcp-offers.js';
import { refreshQualityScore } from '../../core/repos/tools.js';
import type { InstalledPackage } from '../../sandbox/packages.js';
import { recordHealth } from '../health.js';
import type { ImportResult } from './result.js';

/** What an import found, to be recorded. */
export interface ImportRecord {
  manifest: Manifest;
  source: string;
  official: boolean;
  /** The importing user; null for the admin (and the poller importing an admin's package). */
  publishedBy: string | null;
  installed: InstalledPackage;
  /** Why the package's tools cannot work (a module that does not load); null when they can. */
  importError: string | null;
  /** The version's tools, in order; they become the tools rows when the version is the latest. */
  snapshot: VersionTool[];
  /** An MCP server's tools/list as seen at import (what its health checks compare the next one with). */
  mcpListing?: McpListing;
  /** What an MCP server offers besides tools (icons, resources, prompts), recorded with the version. */
  mcpOffer?: McpOffer;
}

export type Recorded = { ok: true; packageId: string; toolIds: string[]; latest: boolean };
type Refusal = Extract<ImportResult, { ok: false }>;

class Refused extends Error {
  constructor(readonly refusal: Refusal) {
    super(refusal.error.message);
  }
}

/** A tool's health check at import, by its index in the snapshot: the error that makes it BROKEN (null: healthy). */
export type CheckAtImport = (index: number) => Promise<{ error: string | null; durationMs: number }>;

/**
 * Records the import, or answers why it may not be recorded (nothing is written then). When the version becomes the
 * latest, each of its tools is checked (`check`) and the outcome recorded as its health at import; an older version's
 * tools are not the tools rows' (those describe the latest), so their health stays the latest's.
 */
export async function recordVersion(db: Db, r: ImportRecord, check: CheckAtImport): Promise<Recorded | Refusal> {
  const recorded = await recordImport(db, r);
  if (!recorded.ok || !recorded.latest) return recorded;
  for (const [i, toolId] of recorded.toolIds.entries()) {
    const { error, durationMs } = await check(i);
    await recordHealth(db, toolId, { error, durationMs, atImport: true });
    await refreshQualityScore(db, toolId);
  }
  return recorded;
}

async function recordImport(db: Db, r: ImportRecord): Promise<Recorded | Refusal> {
  try {
    return await db.transaction(async (trx) => {
      await lockPackageName(trx, r.manifest.name);
      const owner = await findPackageOwner(trx, r.manifest.name);
      const refused = ownerRefusal(owner, r.manifest.name, r.publishedBy);
      if (refused) throw new Refused(refused);
      const same = owner && (await findPackageVersion(trx, owner.id, r.manifest.version));
      if (!same) return recordNew(trx, r, owner);
      const answer = await answerRecorded(trx, same, r.installed, r.official);
      if (!answer.ok) throw new Refused(answer);
      return answer;
    });
  } catch (err) {
    if (err instanceof Refused) return err.refusal;
    throw err;
  }
}

/**
 * Before anything runs: the same answers for a version recorded already (nothing to describe) and for a name the
 * importer does not own. Undefined when the import may go on; recordImport checks both again in its transaction.
 */
export async function checkBeforeDescribing(
  db: Db,
  installed: InstalledPackage,
  req: { official: boolean; publishedBy?: string | null },
): Promise<ImportResult | undefined> {
  const name = String(installed.packageJson.name);
  const refused = ownerRefusal(await findPackageOwner(db, name), name, req.publishedBy ?? null);
  if (refused) return refused;
  const v = await findVersionByName(db, name, String(installed.packageJson.version));
  return v ? answerRecorded(db, v, installed, req.official) : undefined;
}

function ownerRefusal(owner: PackageOwner | undefined, name: string, importer: string | null): Refusal | undefined {
  if (!owner || importer === null || owner.published_by === importer) return undefined;
  const whose = owner.publisher_username ? `the user ${owner.publisher_username}` : 'the admin (an official package)';
  const message = `'${name}' belongs to ${whose}: only its owner records its versions (the admin may transfer the name)`;
  return { ok: false, error: { code: 'FORBIDDEN', message, details: [{ path: 'package.json.name', message }] } };
}

/**
 * A version recorded already: from the same bytes, the import answers with what is there (an admin's import flags
 * it official); from other bytes it is refused. A version recorded before integrity was kept is compared by its
 * install path for a folder; an npm version is the registry's (npm checked its bytes against dist.integrity).
 */
async function answerRecorded(db: Db, v: PackageVersionRow, installed: InstalledPackage, official: boolean): Promise<Recorded | Refusal> {
  const same = v.integrity ? v.integrity === installed.integrity : v.install_path === installed.dir || !v.source.startsWith('path:');
  if (!same) {
    const name = String(installed.packageJson.name);
    const message = `${name}@${v.version} is recorded already from other bytes (${v.integrity ?? 'an earlier install'}; these are ${installed.integrity}): a recorded version never changes, publish a new version`;
    return { ok: false, error: { code: 'CONFLICT', message, details: [{ path: 'package.json.version', message }] } };
  }
  if (official) await markOfficial(db, v.package_id);
  return { ok: true, packageId: v.package_id, toolIds: await toolIdsByName(db, v.package_id, v.tools), latest: false };
}

async function recordNew(trx: Db, r: ImportRecord, owner: PackageOwner | undefined): Promise<Recorded> {
  const m = r.manifest;
  // Its README, licence and repository, as the installed package says them (a failure to read is only their absence).
  const about = await readAbout(r.installed.dir, r.installed.packageJson).catch(() => null);
  const version: Omit<NewPackageVersion, 'compatibility' | 'package_id'> = {
    version: m.version,
    source: r.source,
    install_path: r.installed.dir,
    integrity: r.installed.integrity,
    manifest: m,
    env: m.env,
    tools: r.snapshot,
    import_error: r.importError,
    published_by: r.publishedBy,
    about,
  };
  // The latest version is the highest recorded (by semver), not the last: an older one is only recorded.
  if (owner && compareVersionsDesc(m.version, owner.version) > 0) {
    await saveVersion(trx, { ...version, package_id: owner.id }, undefined);
    if (r.mcpOffer) await saveMcpOffer(trx, owner.id, m.version, r.mcpOffer);
    return { ok: true, packageId: owner.id, toolIds: await toolIdsByName(trx, owner.id, r.snapshot), latest: false };
  }
  const pkg = await upsertPackage(trx, m, {
    source: r.source,
    official: r.official,
    installPath: r.installed.dir,
    importError: r.importError,
    publishedBy: r.publishedBy,
  });
  const toolIds: string[] = [];
  for (const t of r.snapshot) {
    toolIds.push(
      await upsertTool(trx, pkg.id, {
        name: t.name,
        exportName: t.exportName,
        description: t.description,
        inputSchema: t.inputSchema,
        outputSchema: t.outputSchema,
        permissions: (t.permissions ?? null) as Parameters<typeof upsertTool>[2]['permissions'],
        healthExample: (t.healthExample ?? null) as Parameters<typeof upsertTool>[2]['healthExample'],
        brokenReason: t.broken,
      }),
    );
  }
  // Compared with the version below it; collections following the latest move (or are held, when it needs review).
  await setCompatibility(trx, pkg.id, await saveVersion(trx, { ...version, package_id: pkg.id }, owner?.version));
  if (r.mcpListing) await saveMcpListing(trx, pkg.id, r.mcpListing);
  if (r.mcpOffer) await saveMcpOffer(trx, pkg.id, m.version, r.mcpOffer);
  await markRemovedTools(
    trx,
    pkg.id,
    r.snapshot.map((t) => t.name),
    m.version,
  );
  // Hidden instructions in the tools' descriptions and annotations (core/packages/poisoning.ts), with the rest.
  await refreshToolRisks(trx, pkg.id);
  return { ok: true, packageId: pkg.id, toolIds, latest: true };
}

/**
 * `previousLatest`: the package's latest version before this import (undefined for a first import, or when this one
 * is not the latest). Returns the new version's comparison with the one below it (null when it is the lowest).
 */
async function saveVersion(db: Db, v: Omit<NewPackageVersion, 'compatibility'>, previousLatest: string | undefined): Promise<Compatibility | null> {
  const others = (await listPackageVersions(db, v.package_id)).filter((o) => o.version !== v.version);
  // The version just below this one (by semver): the one it is compared with.
  const below = others.find((o) => compareVersionsDesc(o.version, v.version) > 0);
  const compatibility = below ? compareVersions(below, v) : null;
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
