/**
 * Collection rules shared by the REST routes and the MCP endpoint: uids (given, or made from the name and made
 * unique), who may see and change a collection, and the units of work that touch more than one table.
 */
import type { Knex } from 'knex';
import { errors } from '../infra/errors.js';
import { TRENDING_WEIGHTS } from '../tools/scoring.js';
import { recordCollectionAdd } from '../repos/feedback.js';
import {
  countCollectionTools,
  findCollection,
  insertCollection,
  insertCollectionTool,
  isUuid,
  listHeldEntries,
  lockAndCountCollectionTools,
  lockAndCountOwnedCollections,
  takenUids,
  toggleLike,
  type CollectionRow,
  type NewCollection,
} from '../repos/collections.js';
import type { ToolRow } from '../repos/tools.js';
import { atEntryVersions, toolChanges } from '../packages/versions.js';
import type { SchemaChange } from '../packages/compatibility.js';
import { findPackageVersions } from '../repos/package-versions.js';
import type { ToolCache } from '../tools/tool-cache.js';
import type { Caller } from '../types.js';

export const UID_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const UID_MIN = 3;
export const UID_MAX = 64;
/** Default uid when a name has nothing to make a slug of. */
const FALLBACK_UID = 'collection';

/** A uid from a name: lower-case ASCII letters and digits joined by single hyphens, 3–64 characters, never a UUID. */
export function slugOfName(name: string): string {
  let slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, UID_MAX)
    .replace(/-+$/, '');
  if (slug.length === 0) slug = FALLBACK_UID;
  else if (slug.length < UID_MIN || isUuid(slug)) slug = `${slug}-${FALLBACK_UID}`.slice(0, UID_MAX);
  return slug;
}

/** The first of `base`, `base-2`, `base-3`, … that is not taken (the base is shortened to keep 64 characters). */
export function firstFreeUid(base: string, taken: Set<string>): string {
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const suffix = `-${n}`;
    const candidate = `${base.slice(0, UID_MAX - suffix.length).replace(/-+$/, '')}${suffix}`;
    if (!taken.has(candidate)) return candidate;
  }
}

export interface CreateCollectionInput {
  name: string;
  uid?: string;
  description?: string | null;
  isPublic?: boolean;
}

/**
 * Creates the collection; a given uid that is taken is a 409, a default uid is made unique, and an owner already at
 * `maxPerUser` collections gets a 409 (counted under a lock on the owner, so a parallel burst cannot overshoot).
 * Returns its id.
 */
export async function createCollection(db: Knex, ownerId: string, input: CreateCollectionInput, maxPerUser: number): Promise<string> {
  const row = { ownerId, name: input.name, description: input.description ?? null, isPublic: input.isPublic ?? true };
  return db.transaction(async (trx) => {
    if ((await lockAndCountOwnedCollections(trx, ownerId)) >= maxPerUser) {
      throw errors.conflict(`A user may own at most ${maxPerUser} collections; delete one first`);
    }
    return insertWithUid(trx, row, input);
  });
}

async function insertWithUid(trx: Knex.Transaction, row: Omit<NewCollection, 'uid'>, input: CreateCollectionInput): Promise<string> {
  if (input.uid !== undefined) {
    const id = await insertCollection(trx, { ...row, uid: input.uid });
    if (!id) throw errors.conflict(`Collection uid '${input.uid}' is already taken`);
    return id;
  }
  const base = slugOfName(input.name);
  // Requests making a uid from the same base take turns (a transaction-scoped advisory lock), so a burst of
  // collections with one name gets base, base-2, base-3… instead of racing for the same free uid. A uid given
  // explicitly by someone else can still land between the read and the insert: then read again.
  await trx.raw(`select pg_advisory_xact_lock(hashtext('collection-uid:' || ?))`, [base]);
  for (let attempt = 0; attempt < 5; attempt++) {
    const uid = firstFreeUid(base, new Set(await takenUids(trx, base)));
    const id = await insertCollection(trx, { ...row, uid });
    if (id) return id;
  }
  throw errors.conflict(`Could not find a free uid for '${base}'; give one explicitly`);
}

export function isOwner(c: CollectionRow, caller: Caller | undefined): boolean {
  return caller !== undefined && caller.userId === c.owner_id;
}

/** The collection by uid or id, if the caller may see it (private ones: the owner only), else 404. */
export async function loadVisibleCollection(db: Knex, ref: string, caller: Caller | undefined): Promise<CollectionRow> {
  const c = await findCollection(db, ref);
  if (!c || (!c.is_public && !isOwner(c, caller))) throw errors.notFound('Collection', ref);
  return c;
}

/** As loadVisibleCollection, and the caller must own it (403 otherwise). */
export async function loadOwnedCollection(db: Knex, ref: string, caller: Caller): Promise<CollectionRow> {
  const c = await loadVisibleCollection(db, ref, caller);
  if (!isOwner(c, caller)) throw errors.forbidden('Only the owner of this collection may change it');
  return c;
}

/**
 * Adds a tool (409 when already there, or when the collection already holds `maxTools`: counted under a lock on the
 * collection) and records the trending event (once per owner, tool and day), in one transaction; returns the tool count.
 */
export async function addToolToCollection(
  db: Knex,
  collectionId: string,
  toolId: string,
  maxTools: number,
  pinnedVersion: string | null = null,
): Promise<number> {
  return db.transaction(async (trx) => {
    const count = await lockAndCountCollectionTools(trx, collectionId);
    if (count === undefined) throw errors.notFound('Collection', collectionId);
    if (count >= maxTools) throw errors.conflict(`A collection may hold at most ${maxTools} tools; remove one first`);
    if (!(await insertCollectionTool(trx, collectionId, toolId, pinnedVersion))) throw errors.conflict('The tool is already in this collection');
    await recordCollectionAdd(trx, collectionId, toolId, TRENDING_WEIGHTS.collectionAdd);
    return countCollectionTools(trx, collectionId);
  });
}

/** Toggles the user's like of the collection (404 if it went away meanwhile): `{ liked, likeCount }`. */
export async function likeCollection(db: Knex, c: CollectionRow, userId: string): Promise<{ liked: boolean; likeCount: number }> {
  const result = await db.transaction((trx) => toggleLike(trx, c.id, userId));
  if (!result) throw errors.notFound('Collection', c.uid);
  return result;
}

/** The collection's tools in the order they were added (rows from the NOTIFY-kept tool cache: no query when warm). */
export async function collectionTools(deps: { tools: ToolCache; db: Knex }, c: CollectionRow): Promise<ToolRow[]> {
  const byId = new Map((await deps.tools.getMany(c.tool_ids)).map((t) => [t.id, t]));
  const present = c.tool_ids.flatMap((id, i) => (byId.has(id) ? [{ tool: byId.get(id)!, version: c.tool_versions?.[i] ?? null }] : []));
  // An entry pinned to a version, or held on one by a breaking new version, serves that version's tool.
  return atEntryVersions(
    deps.db,
    present.map((p) => p.tool),
    present.map((p) => p.version),
  );
}

export interface CollectionNotice {
  package: string;
  tool: string;
  /** The version the entry stays on. */
  heldVersion: string;
  /** The latest version, which the entry did not move to. */
  latestVersion: string;
  /** What in the latest version breaks the tool (core/packages/compatibility.ts). */
  changes: SchemaChange[];
}

/**
 * What the owner of a collection is told: for each entry that follows the latest version but is held on an older
 * one, the package, both versions and the breaking changes. No query when no entry is held.
 */
export async function collectionNotices(db: Knex, c: CollectionRow): Promise<CollectionNotice[]> {
  if (!c.tool_versions?.some((v, i) => v !== null && !c.tool_pinned?.[i])) return [];
  const held = await listHeldEntries(db, c.id);
  const versions = await findPackageVersions(
    db,
    held.flatMap((h) => [
      { packageId: h.package_id, version: h.held_version },
      { packageId: h.package_id, version: h.latest_version },
    ]),
  );
  return held.flatMap((h) => {
    const from = versions.get(`${h.package_id}@${h.held_version}`);
    const to = versions.get(`${h.package_id}@${h.latest_version}`);
    if (!from || !to) return [];
    const changes = toolChanges(h.tool_name, from, to).filter((ch) => ch.breaking);
    return [{ package: h.package_name, tool: h.tool_name, heldVersion: h.held_version, latestVersion: h.latest_version, changes }];
  });
}
