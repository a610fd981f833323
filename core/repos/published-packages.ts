/** Packages as their publishers and the public see them (issue 24): lists, details, hiding, deprecating, quotas. */
import type { Db } from '../infra/db.js';
import type { PackageRow } from './packages.js';

export interface PublishedPackageRow extends PackageRow {
  publisher_username: string | null;
  deprecated: string | null;
  compatibility: unknown;
  /** npm's weekly downloads (core/packages/downloads.ts): the count and the week npm states, and when npm was asked. */
  weekly_downloads: number | null;
  downloads_start: string | null;
  downloads_end: string | null;
  downloads_checked_at: Date | null;
}

const withPublisher = (db: Db) => db('packages as p').leftJoin('users as u', 'u.id', 'p.published_by').select('p.*', 'u.username as publisher_username');

/** Visible packages by name (hidden ones leave lists), one more than `limit` to tell whether there is more. */
export async function listPublishedPackages(db: Db, page: { limit: number; offset: number }): Promise<PublishedPackageRow[]> {
  return withPublisher(db)
    .where('p.hidden', false)
    .orderBy('p.name')
    .limit(page.limit + 1)
    .offset(page.offset);
}

/** The packages a user published, hidden ones included (their own list, where they show them again), by name. */
export async function listPackagesPublishedBy(db: Db, userId: string, page: { limit: number; offset: number }): Promise<PublishedPackageRow[]> {
  return withPublisher(db)
    .where('p.published_by', userId)
    .orderBy('p.name')
    .limit(page.limit + 1)
    .offset(page.offset);
}

export async function findPackageByName(db: Db, name: string): Promise<PublishedPackageRow | undefined> {
  return withPublisher(db).where('p.name', name).first();
}

export async function updatePackageFlags(db: Db, id: string, patch: { hidden?: boolean; deprecated?: string | null }): Promise<void> {
  const set: Record<string, unknown> = {};
  if (patch.hidden !== undefined) set.hidden = patch.hidden;
  if (patch.deprecated !== undefined) set.deprecated = patch.deprecated;
  if (Object.keys(set).length === 0) return;
  // A change of `hidden` notifies each of the package's tools (migration 20261126070001's trigger): every process
  // drops its cached list pages, and search re-reads (and drops hidden) tools.
  await db('packages').where({ id }).update(set);
}

/**
 * Serialises a user's imports for the rest of the transaction, so the daily quota is counted and taken at once: two
 * parallel publishes cannot both see the last free import.
 */
export async function lockImportQuota(db: Db, userId: string): Promise<void> {
  await db.raw('select pg_advisory_xact_lock(hashtextextended(?, 43))', [`import-quota:${userId}`]);
}

/** Imports a user requested since `since` (the daily publish quota counts them, failed ones too; not the npm poller's). */
export async function countImportsSince(db: Db, userId: string, since: Date): Promise<number> {
  const row = await db('package_imports').where('requested_by', userId).where('polled', false).where('created_at', '>=', since).count('* as n').first();
  return Number(row?.n ?? 0);
}

/** The package's current version and tools (those it still declares), to compare a new version with. */
export async function currentVersionTools(
  db: Db,
  name: string,
): Promise<{ version: string; tools: { name: string; inputSchema: unknown; outputSchema: unknown }[] } | undefined> {
  const p = await db('packages').where({ name }).first('id', 'version');
  if (!p) return undefined;
  const rows = await db('tools')
    .where({ package_id: p.id })
    .where((w) => w.whereNull('health_error').orWhereNot('health_error', 'like', 'not declared by version %'))
    .select('name', 'input_schema', 'output_schema');
  return { version: p.version, tools: rows.map((r) => ({ name: r.name, inputSchema: r.input_schema, outputSchema: r.output_schema })) };
}

export async function setCompatibility(db: Db, packageId: string, compatibility: unknown): Promise<void> {
  await db('packages')
    .where({ id: packageId })
    .update({ compatibility: compatibility === null ? null : JSON.stringify(compatibility) });
}
