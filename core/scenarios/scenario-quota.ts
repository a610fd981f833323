/**
 * The daily scenario quota policy: free users get SCENARIO_DAILY_QUOTA units per UTC day, pro users
 * SCENARIO_DAILY_QUOTA_PRO, enterprise users are unlimited (their units are still counted). A limit of 0 allows
 * nothing. The day turns at midnight UTC, which is the `resetAt` of a refusal. A scenario run is one unit; scenario
 * generation (`scenarios.generate`) one unit per requested scenario, because both spend the operator's LLM tokens on the caller's behalf.
 */
import type { Config } from '../infra/config.js';
import { AppError, errors } from '../infra/errors.js';
import type { Db } from '../infra/db.js';
import { takeQuota, usedToday } from '../repos/scenario-quota.js';
import type { Caller, Tier } from '../types.js';

export type QuotaConfig = Pick<Config, 'SCENARIO_DAILY_QUOTA' | 'SCENARIO_DAILY_QUOTA_PRO'>;

/** Runs per day for a tier; null is unlimited. */
export function quotaLimit(config: QuotaConfig, tier: Tier): number | null {
  if (tier === 'enterprise') return null;
  return tier === 'pro' ? config.SCENARIO_DAILY_QUOTA_PRO : config.SCENARIO_DAILY_QUOTA;
}

/** The next midnight UTC after `now`, as ISO 8601. */
export function quotaResetAt(now = new Date()): string {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)).toISOString();
}

export const remainingOf = (limit: number | null, used: number): number | null => (limit === null ? null : Math.max(0, limit - used));

/**
 * Takes one run for the caller (in the caller's transaction, so that a failure later in it gives the run back);
 * returns the runs remaining today (null: unlimited), or undefined when the quota is spent.
 */
export async function tryTakeRun(db: Db, config: QuotaConfig, caller: Caller): Promise<{ remaining: number | null } | undefined> {
  const limit = quotaLimit(config, caller.tier);
  if (limit === 0) return undefined;
  const used = await takeQuota(db, caller.userId, limit);
  return used === undefined ? undefined : { remaining: remainingOf(limit, used) };
}

/**
 * Takes `count` units at once, all or none (generation: one per requested scenario), before any LLM work starts; a
 * quota with fewer left is the 429 of the contract. Not given back when the provider fails later: the tokens of the
 * rounds that did run are spent either way.
 */
export async function takeUnits(db: Db, config: QuotaConfig, caller: Caller, count: number): Promise<{ remaining: number | null }> {
  const limit = quotaLimit(config, caller.tier);
  const used = limit === 0 ? undefined : await takeQuota(db, caller.userId, limit, count);
  if (used !== undefined) return { remaining: remainingOf(limit, used) };
  const left = remainingOf(limit, await usedToday(db, caller.userId)) ?? 0;
  if (left === 0) throw errors.quotaExceeded(quotaResetAt());
  // Some left, not enough: the same 429, with the true remainder (asking for fewer would succeed).
  const message = `Daily scenario quota: ${count} needed, ${left} left`;
  throw new AppError('QUOTA_EXCEEDED', 429, message, undefined, { quotaRemaining: left, resetAt: quotaResetAt() });
}

/** As tryTakeRun, but a spent quota is the 429 of the contract (shape B: quotaRemaining 0 and resetAt). */
export async function takeRun(db: Db, config: QuotaConfig, caller: Caller): Promise<{ remaining: number | null }> {
  const taken = await tryTakeRun(db, config, caller);
  if (!taken) throw errors.quotaExceeded(quotaResetAt());
  return taken;
}

/** Runs left today for the caller (null: unlimited). */
export async function quotaRemaining(db: Db, config: QuotaConfig, caller: Caller): Promise<number | null> {
  const limit = quotaLimit(config, caller.tier);
  return limit === null ? null : remainingOf(limit, await usedToday(db, caller.userId));
}
