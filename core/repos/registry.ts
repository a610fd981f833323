/**
 * Reads for the MCP Registry API (api/registry/routes.ts): collections as registry servers, paged by a keyset on
 * (lower(username), uid) — the order of their server names — and the per-collection scenario figures; and imported
 * MCP servers (packages with `manifest.mcp`), paged by their server-name key (`.scope/name` or `/name`).
 */
import type { Db } from '../infra/db.js';
import { collectionsQuery } from './collections.js';
import type { CollectionRow } from './collections.js';
import type { PackageRow } from './packages.js';

export interface RegistryFilter {
  /** Keyset: rows strictly after this (username, uid). */
  after?: { username: string; uid: string };
  /** Substring of the server name part `<username>.<uid>` or of the collection's name (case-insensitive). */
  search?: string;
  updatedSince?: Date;
  /** Only collections at this revision (the `version` filter). */
  revision?: number;
  /** A user's own private collections are listed too. */
  viewerId?: string;
  limit: number;
}

const escapeLike = (s: string) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

function serversQuery(db: Db, viewerId: string | undefined) {
  return collectionsQuery(db).where((w) => {
    w.where('c.is_public', true);
    if (viewerId) w.orWhere('c.owner_id', viewerId);
  });
}

/** Server-name order: lower(username), then uid, in byte order. */
const nameOrder = (username: string, uid: string) => `lower(${username}) collate "C", ${uid} collate "C"`;

/**
 * One page in server-name order; limit + 1 rows so that the caller can tell whether another page exists. The public
 * collections' page walks users by name and each one's public collections by uid (migration 20261207050002) and stops
 * at the page; a viewer's own private ones are a page of their own (by owner, migration 20261209000001), and the two
 * are merged. One query with `is_public or owner_id = viewer` could use neither index and read every collection.
 */
export async function listRegistryCollections(db: Db, f: RegistryFilter): Promise<CollectionRow[]> {
  const page = (q: ReturnType<typeof collectionsQuery>) => {
    if (f.after) q.whereRaw(`(${nameOrder('u.username', 'c.uid')}) > (lower(?), ?)`, [f.after.username, f.after.uid]);
    if (f.search) {
      const like = escapeLike(f.search);
      q.where((w) => w.whereRaw(`lower(u.username) || '.' || c.uid ilike ?`, [like]).orWhereILike('c.name', like));
    }
    if (f.updatedSince) q.where('c.updated_at', '>', f.updatedSince);
    if (f.revision !== undefined) q.where('c.revision', f.revision);
    return q.orderByRaw(nameOrder('u.username', 'c.uid')).limit(f.limit + 1);
  };
  const publicPage = page(collectionsQuery(db).where('c.is_public', true));
  if (!f.viewerId) return publicPage;
  const ownPage = page(collectionsQuery(db).where('c.is_public', false).where('c.owner_id', f.viewerId));
  return db
    .select('*')
    .from(db.raw('((?) union all (?)) as s', [publicPage, ownPage]))
    .orderByRaw(nameOrder('s.owner_username', 's.uid'))
    .limit(f.limit + 1);
}

/** The collection `<username>.<uid>`, if it is public or the viewer's own. */
export async function findRegistryCollection(db: Db, username: string, uid: string, viewerId?: string): Promise<CollectionRow | undefined> {
  return serversQuery(db, viewerId).where('c.uid', uid).whereRaw('lower(u.username) = lower(?)', [username]).first();
}

export interface ScenarioFigures {
  scenarios: number;
  /** Scenarios that have been run at least once, and those whose last run passed. */
  run: number;
  passing: number;
}

/** Scenario counts per collection, for a page of collections in one statement. */
export async function scenarioFigures(db: Db, collectionIds: string[]): Promise<Map<string, ScenarioFigures>> {
  if (collectionIds.length === 0) return new Map();
  const rows: { collection_id: string; scenarios: string; run: string; passing: string }[] = await db('scenarios')
    .whereIn('collection_id', collectionIds)
    .groupBy('collection_id')
    .select(
      'collection_id',
      db.raw('count(*) as scenarios'),
      db.raw('count(last_run_status) as run'),
      db.raw(`count(*) filter (where last_run_status = 'pass') as passing`),
    );
  return new Map(rows.map((r) => [r.collection_id, { scenarios: Number(r.scenarios), run: Number(r.run), passing: Number(r.passing) }]));
}

/**
 * An MCP server package's key: its registry server name after the namespace (`.scope/name` for `@scope/name`,
 * `/name` otherwise; api/registry/server-document.ts), in byte order, which is the order of the names.
 */
const PACKAGE_KEY = `(case when p.name like '@%/%' then '.' || substr(split_part(p.name, '/', 1), 2) || '/' || split_part(p.name, '/', 2) else '/' || p.name end) collate "C"`;

export interface RegistryPackageFilter {
  /** Keyset: packages whose key is strictly after this one. */
  afterKey?: string;
  /** Substring of the package name or its description (case-insensitive). */
  search?: string;
  updatedSince?: Date;
  /** Only packages at this exact version. */
  version?: string;
  limit: number;
}

/** Imported MCP servers that are listed: not hidden, with tools. */
function mcpPackagesQuery(db: Db) {
  return db('packages as p')
    .whereRaw(`jsonb_typeof(p.manifest->'mcp') = 'object'`)
    .where('p.hidden', false)
    .whereExists((q) => q.select(db.raw('1')).from('tools as t').whereRaw('t.package_id = p.id'))
    .select('p.*', db.raw(`${PACKAGE_KEY} as registry_key`));
}

/** One page in server-name order; limit + 1 rows so that the caller can tell whether another page exists. */
export async function listRegistryPackages(db: Db, f: RegistryPackageFilter): Promise<(PackageRow & { registry_key: string })[]> {
  const q = mcpPackagesQuery(db);
  if (f.afterKey !== undefined) q.whereRaw(`${PACKAGE_KEY} > ?`, [f.afterKey]);
  if (f.search) {
    const like = escapeLike(f.search);
    q.where((w) => w.whereILike('p.name', like).orWhereILike('p.description', like));
  }
  if (f.updatedSince) q.where('p.updated_at', '>', f.updatedSince);
  if (f.version !== undefined) q.where('p.version', f.version);
  return q.orderByRaw(PACKAGE_KEY).limit(f.limit + 1);
}

/** The listed MCP server package of this npm name. */
export async function findRegistryPackage(db: Db, name: string): Promise<PackageRow | undefined> {
  return mcpPackagesQuery(db).where('p.name', name).first();
}
