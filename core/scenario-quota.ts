/**
 * The daily scenario-run quota policy: free users get SCENARIO_DAILY_QUOTA runs per UTC day, pro users
 * SCENARIO_DAILY_QUOTA_PRO, enterprise users are unlimited (their runs are still counted). A limit of 0 allows no
 * runs. The day turns at midnight UTC, which is the `resetAt` of a refusal.
 */
import type { Config } from './config.js';
import { errors } from './errors.js';
import type { Db } from './db.js';
import { takeQuota, usedToday } from './repos/scenario-quota.js';
import type { Caller, Tier } from './types.js';

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
