/**
 * What a user says about a tool, each in one transaction: a rating (`tools.rate`: counts as a trending event the
 * first time only, and moves the quality score) and a review (`reviews.create`: one per user and tool, an event when
 * new).
 */
import type { Db } from '../infra/db.js';
import { ratingEventWeight, TRENDING_WEIGHTS } from './scoring.js';
import { recordToolEvent, upsertRating, upsertReview, type ReviewRow } from '../repos/feedback.js';
import { refreshQualityScore } from '../repos/tools.js';

/** Records the user's rating (a second replaces the first) and returns the tool's new totals. */
export async function rateTool(db: Db, toolId: string, userId: string, rating: number): Promise<{ ratingSum: number; ratingCount: number }> {
  return db.transaction(async (trx) => {
    const { created, ...totals } = await upsertRating(trx, toolId, userId, rating);
    if (created) await recordToolEvent(trx, toolId, 'rating', ratingEventWeight(rating));
    await refreshQualityScore(trx, toolId);
    return totals;
  });
}

/** Inserts or replaces the user's review; `created` tells which. */
export async function reviewTool(
  db: Db,
  r: { toolId: string; userId: string; rating: number; title: string | null; body: string },
): Promise<{ review: ReviewRow; created: boolean }> {
  return db.transaction(async (trx) => {
    const result = await upsertReview(trx, r);
    if (result.created) await recordToolEvent(trx, r.toolId, 'review', TRENDING_WEIGHTS.review);
    return result;
  });
}
