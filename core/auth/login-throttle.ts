/**
 * Sign-in attempts are limited per account and per client address, in fixed 15-minute windows counted in the same
 * Postgres table as the API rate limits (`rate_limits`: key, points, expire), so that every API process shares them.
 * Every attempt counts, successful or not: a guesser learns nothing from which attempts were counted.
 */
import type { Db } from '../infra/db.js';

export const LOGIN_WINDOW_MS = 15 * 60_000;

const CONSUME_SQL = `
  insert into rate_limits as r (key, points, expire)
  select k, 1, ? from unnest(?::text[]) as t(k)
  on conflict (key) do update set
    points = case when r.expire <= ? then 1 else r.points + 1 end,
    expire = case when r.expire <= ? then excluded.expire else r.expire end
  returning key, points, expire`;

export interface ThrottleDecision {
  allowed: boolean;
  retryAfterSeconds: number;
}

/** Counts one attempt against each `{ key, max }` (max 0: unlimited) and says whether all are within their limit. */
export async function consumeAttempt(db: Db, buckets: { key: string; max: number }[]): Promise<ThrottleDecision> {
  const limited = buckets.filter((b) => b.max > 0);
  if (limited.length === 0) return { allowed: true, retryAfterSeconds: 0 };
  const now = Date.now();
  const keys = limited.map((b) => `login:${b.key}`);
  const { rows } = await db.raw<{ rows: { key: string; points: number; expire: string }[] }>(CONSUME_SQL, [now + LOGIN_WINDOW_MS, keys, now, now]);
  const over = rows.filter((r) => r.points > limited[keys.indexOf(r.key)].max);
  if (over.length === 0) return { allowed: true, retryAfterSeconds: 0 };
  const until = Math.max(...over.map((r) => Number(r.expire)));
  return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((until - now) / 1000)) };
}
