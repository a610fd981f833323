/**
 * The catalogue's list order (`tools.list`): only the ids of one page, read in index order (tools_quality_name:
 * quality_score desc, name, id), so that the rows themselves come from the in-process tool cache (core/tools/tool-cache.ts)
 * as search's do. The packages join is taken only when a filter needs it.
 */
import type { Db } from '../infra/db.js';
import type { Category } from '../types.js';

export interface ToolListFilter {
  category?: Category;
  q?: string;
  official?: boolean;
  limit: number;
  offset: number;
}

/** One page of ids (limit + 1, so that the caller can tell hasMore exactly), ordered by qualityScore desc, then name. */
export async function listToolIds(db: Db, f: ToolListFilter): Promise<string[]> {
  const query = db('tools as t').select('t.id');
  if (f.category || f.official !== undefined || f.q) query.join('packages as p', 'p.id', 't.package_id');
  if (f.category) query.where('p.category', f.category);
  if (f.official !== undefined) query.where('p.official', f.official);
  // A hidden package's tools leave the list (they stay runnable by reference).
  query.whereNotIn('t.package_id', db('packages').select('id').where('hidden', true));
  if (f.q) {
    const like = `%${f.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    query.where((w) => w.whereILike('t.name', like).orWhereILike('t.description', like).orWhereILike('p.name', like));
  }
  const rows: { id: string }[] = await query
    .orderBy([{ column: 't.quality_score', order: 'desc' }, { column: 't.name' }, { column: 't.id' }])
    .limit(f.limit + 1)
    .offset(f.offset);
  return rows.map((r) => r.id);
}
