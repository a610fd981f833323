/** tool_ratings, tool_reviews and tool_events: what users say about tools, and the events trending sums. */
import type { Db, Knex } from '../infra/db.js';
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
 * Tool ids with their summed event weight over the period, best first (limit rows). A user's collection adds of
 * one tool count once per period (the heaviest), however often they were removed and added again; so do a caller's
 * executions of one tool (1 if any succeeded, else 0.25), however often they were repeated: trending counts callers,
 * not calls. A period is whole UTC hours, the current one included (day: 24, week: 168, month: 720; all: every hour).
 * Read from the rollups the tool_events trigger keeps, never the events: for `all` trending_totals (one row per tool,
 * by its score index); for a day, a week or a month trending_period_scores (migrations/20261207050001), whose windows
 * are first advanced to the current hour (trending_advance: a no-op within the hour), then `limit` rows of its
 * (period, score) index, whatever the history and the number of tools. `at` (tests) ends the period at another hour,
 * as if time had passed with no new event: the window's scores corrected by the hours between (trending_hourly),
 * without moving the window.
 */
export async function trendingScores(
  db: Db,
  f: { period: TrendingPeriod; category?: Category; limit: number; at?: Date },
): Promise<{ tool_id: string; score: number }[]> {
  const days = TRENDING_PERIODS[f.period];
  let q: Knex.QueryBuilder;
  if (days === null) {
    q = db('trending_totals as x').select('x.tool_id', db.raw('x.score::float8 as score')).where('x.score', '>', 0);
  } else if (!f.at) {
    await db.raw('select trending_advance(now())');
    q = db('trending_period_scores as x').select('x.tool_id', db.raw('x.score::float8 as score')).where('x.period', f.period).where('x.score', '>', 0);
  } else {
    // The window's scores (hours start…now), less its hours before the period's start or after `at`'s hour, plus the
    // period's hours before the window's start.
    const b = db.raw(
      `(select w.start as wstart, h - make_interval(hours => w.hours - 1) as start, h
          from trending_windows w, (select date_trunc('hour', ?::timestamptz, 'UTC') as h) b0 where w.period = ?) as b`,
      [f.at.toISOString(), f.period],
    );
    const parts = db
      .select('x.tool_id', 'x.score')
      .from('trending_period_scores as x')
      .where('x.period', f.period)
      .unionAll((u) =>
        u
          .select('x.tool_id', db.raw('-x.score'))
          .from('trending_hourly as x')
          .join(b, (j) => j.on(db.raw('x.hour >= b.wstart and (x.hour < b.start or x.hour > b.h)'))),
      )
      .unionAll((u) =>
        u
          .select('x.tool_id', 'x.score')
          .from('trending_hourly as x')
          .join(b, (j) => j.on(db.raw('x.hour >= b.start and x.hour < b.wstart and x.hour <= b.h'))),
      );
    q = db.from(parts.as('x')).select('x.tool_id', db.raw('sum(x.score)::float8 as score')).groupBy('x.tool_id').havingRaw('sum(x.score) > 0');
  }
  q.join('tools as t', 't.id', 'x.tool_id')
    .join('packages as p', 'p.id', 't.package_id')
    // By the numeric score itself where the rows are a table's (its (score desc, tool_id) index: `limit` rows read),
    // not the float8 alias, which no index has.
    .orderBy([{ column: days === null || !f.at ? 'x.score' : 'score', order: 'desc' }, { column: 'x.tool_id' }])
    .limit(f.limit);
  if (f.category) q.where('p.category', f.category);
  return q;
}

/** Deletes trending hours older than the longest period (30 days) and a day of margin; answers how many. */
export async function deleteTrendingHoursBefore(db: Db, hours: number): Promise<number> {
  const { rowCount } = await db.raw(`delete from trending_hourly where hour < date_trunc('hour', now(), 'UTC') - make_interval(hours => ?)`, [hours]);
  return rowCount ?? 0;
}
