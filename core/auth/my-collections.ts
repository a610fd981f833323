/** A signed-in user's own collections, public and private (the public list, 1, shows only public ones). */
import type { Db } from '../db.js';
import type { CollectionRow } from '../repos/collections.js';

export async function listOwnCollections(db: Db, userId: string, limit: number, offset: number): Promise<CollectionRow[]> {
  return db('collections as c')
    .join('users as u', 'u.id', 'c.owner_id')
    .where('c.owner_id', userId)
    .select(
      'c.*',
      'u.username as owner_username',
      'u.name as owner_name',
      db.raw('array(select ct.tool_id::text from collection_tools ct where ct.collection_id = c.id order by ct.added_at, ct.tool_id) as tool_ids'),
    )
    .orderBy([{ column: 'c.updated_at', order: 'desc' }, { column: 'c.id', order: 'desc' }])
    .limit(limit + 1)
    .offset(offset);
}
