/**
 * scenario_quota: units used per user per UTC day (a scenario run is one unit; generating scenarios is one unit per
 * requested scenario). Units are taken with ONE statement — insert the day's row or add to it, but only while the
 * result stays within the limit — so concurrent requests can never overdraw a quota: the row lock makes them queue,
 * and each sees the count left by the one before.
 */
import type { Db } from '../infra/db.js';

const TODAY_UTC = "(now() at time zone 'utc')::date";

/**
 * Takes `amount` units (all or none) of today's quota; returns the count used after it, or undefined when fewer than
 * `amount` are left. `limit` null means unlimited (counted, never refused). A limit of 0 never reaches here.
 */
export async function takeQuota(db: Db, userId: string, limit: number | null, amount = 1): Promise<number | undefined> {
  const { rows } = await db.raw(
    `insert into scenario_quota as q (user_id, day, used)
       select ?, ${TODAY_UTC}, ?::int where ?::int is null or ?::int <= ?::int
       on conflict (user_id, day) do update set used = q.used + excluded.used
       where ?::int is null or q.used + excluded.used <= ?::int
     returning used`,
    [userId, amount, limit, amount, limit, limit, limit],
  );
  return rows[0]?.used;
}

/** Units used today. */
export async function usedToday(db: Db, userId: string): Promise<number> {
  const row = await db('scenario_quota').where({ user_id: userId }).whereRaw(`day = ${TODAY_UTC}`).first('used');
  return row?.used ?? 0;
}
