/** tool_ratings, tool_reviews and tool_events: what users say about tools, and the events trending sums. */
import type { Db } from '../infra/db.js';
import type { Category } from '../types.js';
import { TRENDING_PERIODS, type TrendingPeriod } from '../tools/scoring.js';

export type ToolEventKind = 'execution_succeeded' | 'execution_failed' | 'rating' | 'review' | 'collection_add';

export async function recordToolEvent(db: Db, toolId: string, kind: ToolEventKind, weight: number): Promise<void> {
  await db('tool_events').insert({ tool_id: toolId, kind, weight });
}

/**
 * A collection add, as the collection owner's event: at most one row per owner, tool and UTC day (a unique partial
 * index; a repeat does nothing), so that an add/remove/add loop neither grows the table nor, with trendingScores
 * counting one add per user and tool per period, the tool's trending score.
 */
export async function recordCollectionAdd(db: Db, collectionId: string, toolId: string, weight: number): Promise<void> {
  await db.raw(
    `insert into tool_events (tool_id, kind, weight, user_id)
     select ?, 'collection_add', ?, c.owner_id from collections c where c.id = ?
     on conflict do nothing`,
    [toolId, weight, collectionId],
  );
}

/**
 * Inserts or replaces the user's rating and returns the tool's new totals; `created` is true only for the insert that
 * made the row (decided by Postgres, so of two concurrent first ratings exactly one is `created`).
 */
export async function upsertRating(db: Db, toolId: string, userId: string, rating: number) {
  const { rows } = await db.raw(
    `insert into tool_ratings (tool_id, user_id, rating) values (?, ?, ?)
     on conflict (tool_id, user_id) do update set rating = excluded.rating, updated_at = now()
     returning (xmax = 0) as created`,
    [toolId, userId, rating],
  );
  const [totals] = await db('tools')
    .where({ id: toolId })
    .update({
      rating_sum: db('tool_ratings').where({ tool_id: toolId }).sum('rating'),
      rating_count: db('tool_ratings').where({ tool_id: toolId }).count('*'),
    })
    .returning(['rating_sum', 'rating_count']);
  return { ratingSum: Number(totals.rating_sum), ratingCount: Number(totals.rating_count), created: rows[0].created as boolean };
}

export interface ReviewRow {
  id: string;
  tool_id: string;
  user_id: string;
  username: string;
  rating: number;
  title: string | null;
  body: string;
  created_at: Date;
  updated_at: Date;
}

/** Inserts or replaces the user's review; `created` tells which. */
export async function upsertReview(
  db: Db,
  r: { toolId: string; userId: string; rating: number; title: string | null; body: string },
): Promise<{ review: ReviewRow; created: boolean }> {
  const { rows } = await db.raw(
    `insert into tool_reviews (tool_id, user_id, rating, title, body) values (?, ?, ?, ?, ?)
     on conflict (tool_id, user_id) do update
       set rating = excluded.rating, title = excluded.title, body = excluded.body, updated_at = now()
     returning id, (xmax = 0) as created`,
    [r.toolId, r.userId, r.rating, r.title, r.body],
  );
  const review = (await findReview(db, rows[0].id))!;
  return { review, created: rows[0].created };
}

export async function findReview(db: Db, id: string): Promise<ReviewRow | undefined> {
  return reviewsQuery(db).where('r.id', id).first();
}

function reviewsQuery(db: Db) {
  return db('tool_reviews as r').join('users as u', 'u.id', 'r.user_id').select('r.*', 'u.username');
}

export async function listReviews(db: Db, toolId: string, limit: number, offset: number): Promise<ReviewRow[]> {
  return reviewsQuery(db)
    .where('r.tool_id', toolId)
    .orderBy([{ column: 'r.updated_at', order: 'desc' }, { column: 'r.id' }])
    .limit(limit + 1)
    .offset(offset);
}

/**
 * Tool ids with their summed event weight over the period, best first (limit + 1 rows). A user's collection adds of
 * one tool count once per period (the heaviest), however often they were removed and added again; so do a caller's
 * executions of one tool (1 if any succeeded, else 0.25), however often they were repeated: trending counts callers,
 * not calls.
 */
export async function trendingScores(db: Db, f: { period: TrendingPeriod; category?: Category; limit: number }): Promise<{ tool_id: string; score: number }[]> {
  const days = TRENDING_PERIODS[f.period];
  // One weight per event, except one per (tool, user) for a user's collection adds and one per (tool, caller) for a
  // caller's executions.
  const events = db('tool_events as e')
    .select('e.tool_id', db.raw('max(e.weight) as weight'))
    .groupBy(
      'e.tool_id',
      db.raw(`case when e.kind = 'collection_add' and e.user_id is not null then 'u' || e.user_id::text
                   when e.kind in ('execution_succeeded', 'execution_failed') and e.caller is not null then 'x' || e.caller
                   else 'e' || e.id::text end`),
    );
  if (days !== null) events.where('e.created_at', '>=', db.raw(`now() - interval '${days} days'`));
  const q = db
    .from(events.as('e'))
    .join('tools as t', 't.id', 'e.tool_id')
    .join('packages as p', 'p.id', 't.package_id')
    .groupBy('e.tool_id')
    .select('e.tool_id', db.raw('sum(e.weight)::float8 as score'))
    .orderBy([{ column: 'score', order: 'desc' }, { column: 'e.tool_id' }])
    .limit(f.limit);
  if (f.category) q.where('p.category', f.category);
  return q;
}
