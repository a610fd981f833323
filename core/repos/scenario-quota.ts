/**
 * scenario_quota: runs used per user per UTC day. A run is taken with ONE statement — insert the day's row or add one
 * to it, but only while it is under the limit — so concurrent requests can never overdraw a quota: the row lock
 * makes them queue, and each sees the count left by the one before.
 */
import type { Db } from '../db.js';

const TODAY_UTC = "(now() at time zone 'utc')::date";

/**
 * Takes one run of today's quota; returns the count used after it, or undefined when the quota is spent.
 * `limit` null means unlimited (counted, never refused). A limit of 0 never reaches here (nothing to take).
 */
export async function takeQuota(db: Db, userId: string, limit: number | null): Promise<number | undefined> {
  const { rows } = await db.raw(
    `insert into scenario_quota as q (user_id, day, used) values (?, ${TODAY_UTC}, 1)
       on conflict (user_id, day) do update set used = q.used + 1
       where ?::int is null or q.used < ?::int
     returning used`,
    [userId, limit, limit],
  );
  return rows[0]?.used;
}

/** Runs used today. */
export async function usedToday(db: Db, userId: string): Promise<number> {
  const row = await db('scenario_quota').where({ user_id: userId }).whereRaw(`day = ${TODAY_UTC}`).first('used');
  return row?.used ?? 0;
}
