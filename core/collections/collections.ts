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
  setHeldVersion,
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
import { lockPackageName } from '../repos/packages.js';
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
  return (await collectionsTools(deps, [c]))[0]!;
}

/**
 * collectionTools for a page of collections (the registry's servers) in a bounded number of reads whatever the page's
 * size: one read of the tool cache for every collection's tools, one of the package versions their entries are on.
 */
export async function collectionsTools(deps: { tools: ToolCache; db: Knex }, cs: CollectionRow[]): Promise<ToolRow[][]> {
  const byId = new Map((await deps.tools.getMany([...new Set(cs.flatMap((c) => c.tool_ids))])).map((t) => [t.id, t]));
  const present = cs.map((c) => c.tool_ids.flatMap((id, i) => (byId.has(id) ? [{ tool: byId.get(id)!, version: c.tool_versions?.[i] ?? null }] : [])));
  // An entry pinned to a version, or held on one by a breaking new version, serves that version's tool.
  const all = await atEntryVersions(
    deps.db,
    present.flatMap((p) => p.map((e) => e.tool)),
    present.flatMap((p) => p.map((e) => e.version)),
  );
  let at = 0;
  return present.map((p) => all.slice(at, (at += p.length)));
}

export interface CollectionNotice {
  package: string;
  /** The version the entries stay on. */
  from: string;
  /** The latest version, which the entries did not move to. */
  to: string;
  /** The collection's tools of the package held on `from`. */
  tools: string[];
  /** What in `to` needs review for those tools, and the package's own changes (tool ''): core/packages/compatibility.ts. */
  changes: SchemaChange[];
}

/**
 * What the owner of a collection is told: for each package whose entries follow the latest version but are held on
 * an older one (a change that needs review came), the package, both versions, its held tools and the changes that
 * need review. No query when no entry is held.
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
  const notices = new Map<string, CollectionNotice & { seen: Set<string> }>();
  for (const h of held) {
    const from = versions.get(`${h.package_id}@${h.held_version}`);
    const to = versions.get(`${h.package_id}@${h.latest_version}`);
    if (!from || !to || from.version === to.version) continue;
    const key = `${h.package_name}@${h.held_version}`;
    let n = notices.get(key);
    if (!n) notices.set(key, (n = { package: h.package_name, from: from.version, to: to.version, tools: [], changes: [], seen: new Set() }));
    n.tools.push(h.tool_name);
    for (const ch of toolChanges(h.tool_name, from, to)) {
      const id = JSON.stringify(ch);
      if (!ch.needsReview || n.seen.has(id)) continue;
      n.seen.add(id);
      n.changes.push(ch);
    }
  }
  return [...notices.values()].map(({ seen: _seen, ...n }) => n);
}

/**
 * The owner accepts a package's notice: its held entries follow the latest version again (they are on `to`). Under
 * the lock the recorder takes on the package's name, so no newer version can slip in between: when the latest is
 * no longer `to`, a 409 says which it is (the owner reviews that one); no held entry of the package, a 404.
 */
export async function acceptNotice(db: Knex, c: CollectionRow, pkg: string, to: string): Promise<void> {
  await db.transaction(async (trx) => {
    await lockPackageName(trx, pkg);
    const held = (await listHeldEntries(trx, c.id)).filter((h) => h.package_name === pkg && h.held_version !== h.latest_version);
    if (held.length === 0) throw errors.notFound(`A notice for package '${pkg}' in collection '${c.uid}'`);
    const latest = held[0].latest_version;
    if (latest !== to) throw errors.conflict(`The latest version of '${pkg}' is ${latest}, not ${to}: review the notice for ${latest} and accept that`);
    for (const h of held) await setHeldVersion(trx, c.id, h.tool_id, null);
  });
}
