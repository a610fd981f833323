/**
 * Learning from use (docs/search.md): each identified caller's latest search (its analysed terms) and the votes a
 * run after it leaves, one per (term, tool, caller). Callers are stored as an opaque hash (`usageCallerKey`).
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { UsageAggregate } from '../search/usage.js';

export const USAGE_CHANNEL = 'toolshed_search_usage';

/** The caller as stored: a hash of the user id, not reversible to the user without the users table. */
export function usageCallerKey(userId: string): string {
  return createHash('sha256').update(`toolshed-search-usage:${userId}`).digest('hex').slice(0, 32);
}

/** Keeps each caller's terms as their latest search (one row per caller, at most one entry per caller). One upsert. */
export async function rememberSearches(db: Knex, searches: { caller: string; terms: string[] }[]): Promise<void> {
  if (searches.length === 0) return;
  await db.raw(
    `insert into search_last (caller, terms, at)
     select s->>'caller', array(select jsonb_array_elements_text(s->'terms')), now() from jsonb_array_elements(?::jsonb) s
     on conflict (caller) do update set terms = excluded.terms, at = excluded.at`,
    [JSON.stringify(searches)],
  );
}

/**
 * The caller's latest search, if it was less than `windowSeconds` ago, becomes one vote per term for the tool (a vote
 * already there only moves to now). Notifies the API processes when it recorded anything. Returns the terms voted.
 */
export async function creditSearch(db: Knex, caller: string, toolId: string, windowSeconds: number): Promise<number> {
  const { rows } = await db.raw(
    `with voted as (
       insert into search_usage (term, tool_id, caller, at)
       select unnest(s.terms), ?::uuid, s.caller, now() from search_last s
        where s.caller = ? and s.at > now() - make_interval(secs => ?)
       on conflict (term, tool_id, caller) do update set at = excluded.at
       returning 1)
     select count(*)::int as n, case when count(*) > 0 then pg_notify(?, '') end as notified from voted`,
    [toolId, caller, windowSeconds, USAGE_CHANNEL],
  );
  return rows[0].n as number;
}

/** Per (term, tool): its distinct callers and Σ 2^(−age / half-life), for pairs with at least `minCallers`. */
export async function usageAggregates(db: Knex, o: { minCallers: number; halfLifeDays: number }): Promise<UsageAggregate[]> {
  const { rows } = await db.raw(
    `select term, tool_id::text as "toolId", count(*)::int as callers,
            sum(power(2, -extract(epoch from now() - at) / (? * 86400.0)))::float8 as weight
       from search_usage
      where at > now() - make_interval(days => ?)
      group by term, tool_id
     having count(*) >= ?`,
    [o.halfLifeDays, o.halfLifeDays * 4, o.minCallers],
  );
  return rows as UsageAggregate[];
}

/** Deletes votes older than four half-lives and searches older than the window. */
export async function pruneUsage(db: Knex, o: { halfLifeDays: number; windowSeconds: number }): Promise<void> {
  await db.raw('delete from search_usage where at < now() - make_interval(days => ?)', [o.halfLifeDays * 4]);
  await db.raw('delete from search_last where at < now() - make_interval(secs => ?)', [o.windowSeconds]);
}
