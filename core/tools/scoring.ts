/**
 * Scores: a tool's qualityScore (0..1) and the weights of trending events. Kept in one place so that the README's
 * description of them stays true.
 */
import type { HealthStatus } from '../types.js';

export interface QualityInputs {
  description: string;
  inputSchema: Record<string, unknown>;
  healthStatus: HealthStatus;
  ratingSum: number;
  ratingCount: number;
  executionCount: number;
}

/** Prior for the Bayesian rating average: as if every tool had two 3-star ratings. */
const PRIOR_COUNT = 2;
const PRIOR_MEAN = 3;

export function bayesianRating(sum: number, count: number): number {
  return (sum + PRIOR_COUNT * PRIOR_MEAN) / (count + PRIOR_COUNT);
}

/** How well the tool documents itself: a real description, and a description on every input property. */
export function documentationScore(description: string, schema: Record<string, unknown>): number {
  const descScore = Math.min(1, description.trim().length / 80);
  const props = (schema.properties ?? {}) as Record<string, { description?: unknown }>;
  const names = Object.keys(props);
  const described = names.filter((n) => typeof props[n]?.description === 'string' && String(props[n].description).length > 0);
  const propScore = names.length === 0 ? 1 : described.length / names.length;
  return 0.5 * descScore + 0.5 * propScore;
}

/**
 * qualityScore = 0.35 documentation + 0.25 rating (Bayesian, /5) + 0.2 usage (log-scaled executions, saturating at
 * 10,000) + 0.2 health (HEALTHY 1, UNKNOWN 0.5, BROKEN 0). Rounded to 4 decimals.
 */
export function qualityScore(q: QualityInputs): number {
  const health = q.healthStatus === 'HEALTHY' ? 1 : q.healthStatus === 'UNKNOWN' ? 0.5 : 0;
  const usage = Math.min(1, Math.log10(1 + q.executionCount) / 4);
  const rating = bayesianRating(q.ratingSum, q.ratingCount) / 5;
  const score = 0.35 * documentationScore(q.description, q.inputSchema) + 0.25 * rating + 0.2 * usage + 0.2 * health;
  return Math.round(score * 10000) / 10000;
}

/** Trending event weights (`tools.trending`): successful executions 1, failed 0.25, ratings by stars, reviews, collection adds. */
export const TRENDING_WEIGHTS = {
  executionSucceeded: 1,
  executionFailed: 0.25,
  /** A rating of n stars weighs n / 5 * this. */
  ratingPerFiveStars: 3,
  review: 2,
  collectionAdd: 3,
} as const;

export function ratingEventWeight(stars: number): number {
  return (stars / 5) * TRENDING_WEIGHTS.ratingPerFiveStars;
}

export const TRENDING_PERIODS = { day: 1, week: 7, month: 30, all: null } as const;
export type TrendingPeriod = keyof typeof TRENDING_PERIODS;
