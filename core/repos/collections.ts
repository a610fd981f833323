/**
 * collections, collection_tools and collection_likes. Rows come back joined with their owner and tool count, so that
 * every read is one statement; like counts are kept on the collection row and changed under its row lock.
 */
import type { Db } from '../infra/db.js';
import { isUuid } from '../infra/ids.js';

export interface CollectionRow {
  id: string;
  uid: string;
  owner_id: string;
  name: string;
  description: string | null;
  is_public: boolean;
  like_count: number;
  /** Bumped by triggers on every change of the collection or its tools (migration 20261124000001). */
  revision: number;
  /** How the MCP endpoint offers the tools by default: all of them, or search_tools + call_tool (migration 20261124000003). */
  mcp_mode: 'all' | 'search';
  created_at: Date;
  updated_at: Date;
  // joined
  owner_username: string;
  owner_name: string | null;
  /** The collection's tool ids in the order they were added (tool rows come from the tool cache). */
  tool_ids: string[];
  /** Per tool id, the version its entry is on when not the latest: pinned, or held by a breaking new version. */
  tool_versions: (string | null)[];
  /** Per tool id, whether its entry pins its version (else it follows the latest, or is held). */
  tool_pinned: boolean[];
}

export { isUuid };

/** Collections with their owner's name and their tool ids in order (also the registry's servers). */
export function collectionsQuery(db: Db) {
  return db('collections as c')
    .join('users as u', 'u.id', 'c.owner_id')
    .select(
      'c.*',
      'u.username as owner_username',
      'u.name as owner_name',
      db.raw('array(select ct.tool_id::text from collection_tools ct where ct.collection_id = c.id order by ct.added_at, ct.tool_id) as tool_ids'),
      db.raw(
        'array(select coalesce(ct.pinned_version, ct.held_version) from collection_tools ct where ct.collection_id = c.id order by ct.added_at, ct.tool_id) as tool_versions',
      ),
      db.raw(
        'array(select ct.pinned_version is not null from collection_tools ct where ct.collection_id = c.id order by ct.added_at, ct.tool_id) as tool_pinned',
      ),
    );
}

const escapeLike = (s: string) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Public collections, newest first; limit + 1 rows so that the caller can tell hasMore exactly. */
export async function listPublicCollections(db: Db, f: { q?: string; limit: number; offset: number }): Promise<CollectionRow[]> {
  const query = collectionsQuery(db).where('c.is_public', true);
  if (f.q) query.where((w) => w.whereILike('c.name', escapeLike(f.q!)).orWhereILike('c.description', escapeLike(f.q!)));
  return query
    .orderBy([
      { column: 'c.created_at', order: 'desc' },
      { column: 'c.id', order: 'desc' },
    ])
    .limit(f.limit + 1)
    .offset(f.offset);
}

/** A user's own collections, public and private, last changed first; limit + 1 rows (hasMore). */
export async function listCollectionsOwnedBy(db: Db, userId: string, f: { limit: number; offset: number }): Promise<CollectionRow[]> {
  return collectionsQuery(db)
    .where('c.owner_id', userId)
    .orderBy([
      { column: 'c.updated_at', order: 'desc' },
      { column: 'c.id', order: 'desc' },
    ])
    .limit(f.limit + 1)
    .offset(f.offset);
}

/** By uid, or by id when the reference is a UUID (uids never look like one). */
export async function findCollection(db: Db, ref: string): Promise<CollectionRow | undefined> {
  return collectionsQuery(db)
    .where(isUuid(ref) ? 'c.id' : 'c.uid', isUuid(ref) ? ref.toLowerCase() : ref)
    .first();
}

/** The collection `uid` of the user `username` (case-insensitive, like logins), for the MCP endpoint. */
export async function findCollectionOfUser(db: Db, username: string, uid: string): Promise<CollectionRow | undefined> {
  return collectionsQuery(db).where('c.uid', uid).whereRaw('lower(u.username) = lower(?)', [username]).first();
}

/** The taken uids among `base` and `base-<n>` (for making a default uid unique). */
export async function takenUids(db: Db, base: string): Promise<string[]> {
  const rows: { uid: string }[] = await db('collections')
    .where('uid', base)
    .orWhere('uid', 'like', `${base.replace(/[\\%_]/g, (c) => `\\${c}`)}-%`)
    .select('uid');
  return rows.map((r) => r.uid);
}

export interface NewCollection {
  uid: string;
  ownerId: string;
  name: string;
  description: string | null;
  isPublic: boolean;
}

/** Inserts; returns undefined when the uid is already taken. */
export async function insertCollection(db: Db, c: NewCollection): Promise<string | undefined> {
  const rows: { id: string }[] = await db('collections')
    .insert({ uid: c.uid, owner_id: c.ownerId, name: c.name, description: c.description, is_public: c.isPublic })
    .onConflict('uid')
    .ignore()
    .returning('id');
  return rows[0]?.id;
}

export async function updateCollection(
  db: Db,
  id: string,
  patch: { name?: string; description?: string | null; isPublic?: boolean; mcpMode?: 'all' | 'search' },
): Promise<void> {
  await db('collections')
    .where({ id })
    .update({
      ...(patch.name !== undefined ? { name: patch.name } : {}),
      ...(patch.description !== undefined ? { description: patch.description } : {}),
      ...(patch.isPublic !== undefined ? { is_public: patch.isPublic } : {}),
      ...(patch.mcpMode !== undefined ? { mcp_mode: patch.mcpMode } : {}),
      updated_at: db.fn.now(),
    });
}

/** Deletes the collection; its tools list, likes, scenarios (and their runs), batches and agent links cascade. */
export async function deleteCollection(db: Db, id: string): Promise<boolean> {
  return (await db('collections').where({ id }).delete()) > 0;
}

/** Adds the tool; false when it was already there. Touches the collection's updated_at. */
export async function insertCollectionTool(db: Db, collectionId: string, toolId: string, pinnedVersion: string | null = null): Promise<boolean> {
  const rows = await db('collection_tools')
    .insert({ collection_id: collectionId, tool_id: toolId, pinned_version: pinnedVersion })
    .onConflict(['collection_id', 'tool_id'])
    .ignore()
    .returning('tool_id');
  if (rows.length === 0) return false;
  await db('collections').where({ id: collectionId }).update({ updated_at: db.fn.now() });
  return true;
}

export async function deleteCollectionTool(db: Db, collectionId: string, toolId: string): Promise<boolean> {
  const removed = await db('collection_tools').where({ collection_id: collectionId, tool_id: toolId }).delete();
  if (removed === 0) return false;
  await db('collections').where({ id: collectionId }).update({ updated_at: db.fn.now() });
  return true;
}

/** Locks the owner's user row (so that creations by one owner take turns) and counts their collections. */
export async function lockAndCountOwnedCollections(db: Db, ownerId: string): Promise<number> {
  await db.raw('select 1 from users where id = ? for update', [ownerId]);
  const row = await db('collections').where({ owner_id: ownerId }).count<{ count: number }[]>('* as count').first();
  return Number(row?.count ?? 0);
}

/** Locks the collection row (so that adds to one collection take turns) and counts its tools; undefined if it is gone. */
export async function lockAndCountCollectionTools(db: Db, collectionId: string): Promise<number | undefined> {
  const { rows } = await db.raw('select id from collections where id = ? for update', [collectionId]);
  if (rows.length === 0) return undefined;
  return countCollectionTools(db, collectionId);
}

export async function countCollectionTools(db: Db, collectionId: string): Promise<number> {
  const row = await db('collection_tools').where({ collection_id: collectionId }).count<{ count: number }[]>('* as count').first();
  return Number(row?.count ?? 0);
}

export async function isLikedBy(db: Db, collectionId: string, userId: string): Promise<boolean> {
  return (await db('collection_likes').where({ collection_id: collectionId, user_id: userId }).first('user_id')) !== undefined;
}

/**
 * Toggles the user's like. Must run in a transaction: the collection row is locked first, so that concurrent toggles
 * (by anyone) on one collection apply one after the other and like_count always equals the number of likes.
 */
export async function toggleLike(trx: Db, collectionId: string, userId: string): Promise<{ liked: boolean; likeCount: number } | undefined> {
  const locked = await trx('collections').where({ id: collectionId }).forUpdate().first('id');
  if (!locked) return undefined;
  const removed = await trx('collection_likes').where({ collection_id: collectionId, user_id: userId }).delete();
  if (removed === 0) await trx('collection_likes').insert({ collection_id: collectionId, user_id: userId });
  const [row] = await trx('collections')
    .where({ id: collectionId })
    .update({ like_count: trx.raw(`like_count + ?`, [removed === 0 ? 1 : -1]) })
    .returning('like_count');
  return { liked: removed === 0, likeCount: row.like_count };
}

/** Entries of every collection that follow the latest version of the package (not pinned), with their tool's name. */
export async function listFollowingEntries(
  db: Db,
  packageId: string,
): Promise<{ collection_id: string; tool_id: string; tool_name: string; held_version: string | null }[]> {
  return db('collection_tools as ct')
    .join('tools as t', 't.id', 'ct.tool_id')
    .where('t.package_id', packageId)
    .whereNull('ct.pinned_version')
    .select('ct.collection_id', 'ct.tool_id', 't.name as tool_name', 'ct.held_version');
}

/** Holds an entry on an older version (a breaking new one came), or lets it follow the latest again (null). */
export async function setHeldVersion(db: Db, collectionId: string, toolId: string, version: string | null): Promise<void> {
  await db('collection_tools').where({ collection_id: collectionId, tool_id: toolId }).update({ held_version: version });
}

/** Entries of the collection held on an older version by a breaking new one (its owner is told). */
export async function listHeldEntries(
  db: Db,
  collectionId: string,
): Promise<{ tool_id: string; tool_name: string; package_id: string; package_name: string; held_version: string; latest_version: string }[]> {
  return db('collection_tools as ct')
    .join('tools as t', 't.id', 'ct.tool_id')
    .join('packages as p', 'p.id', 't.package_id')
    .where('ct.collection_id', collectionId)
    .whereNull('ct.pinned_version')
    .whereNotNull('ct.held_version')
    .orderBy(['ct.added_at', 'ct.tool_id'])
    .select('ct.tool_id', 't.name as tool_name', 't.package_id', 'p.name as package_name', 'ct.held_version', 'p.version as latest_version');
}
