/**
 * Search hits' reliability signal (docs/search.md): each tool's calls and success rate over 7 days from the hourly
 * rollup (core/repos/tool-stats.ts), kept a minute per app so that search costs no query on most requests.
 */
import type { AppDeps } from '../deps.js';
import { type CallTotals, toolCallTotals } from '../../core/repos/tool-stats.js';

/** How long search reuses a tool's 7-day totals: a week's figures move little in a minute, and search stays one query lighter. */
export const RELIABILITY_TTL_MS = 60_000;
const reliabilityCaches = new WeakMap<AppDeps, Map<string, CallTotals & { at: number }>>();

/** Each tool's calls and successes over 7 days, for search hits: from this app's cache when under a minute old, else one query for the rest. */
export async function sevenDayTotals(deps: AppDeps, toolIds: string[]): Promise<Map<string, CallTotals>> {
  let cache = reliabilityCaches.get(deps);
  if (!cache) reliabilityCaches.set(deps, (cache = new Map()));
  const now = Date.now();
  const stale = toolIds.filter((id) => !(now - (cache.get(id)?.at ?? -Infinity) < RELIABILITY_TTL_MS));
  if (stale.length > 0) {
    const fresh = await toolCallTotals(deps.db, stale, '7d');
    if (cache.size > 10_000) cache.clear();
    for (const id of stale) cache.set(id, { at: now, ...(fresh.get(id) ?? { calls: 0, succeeded: 0, platformFailed: 0 }) });
  }
  return new Map(toolIds.map((id) => [id, cache.get(id)!]));
}
