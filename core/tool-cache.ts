/**
 * An in-process cache of tool rows for the hot read paths (search results, the list, trending), kept exact by the
 * `toolshed_tools` NOTIFY that a trigger sends on every change of a tool (and of its counters). It also keeps the
 * pages of the list's order (ids only), dropped on any change of any tool: a page read from the cache costs no
 * database round trip. (A package's category or official flag changes only by an import, which writes its tools.)
 */
import type { Knex } from 'knex';
import { CHANNELS, type Notifier } from './notify.js';
import { findToolsByIds, type ToolRow } from './repos/tools.js';

const MAX_ENTRIES = 20_000;
/** Distinct list pages kept (filters × offsets); past this the page cache starts over. */
const MAX_PAGES = 2_000;

export interface ToolCache {
  getMany(ids: string[]): Promise<ToolRow[]>;
  /** The ids `load` reads for `key` (one page of the list), read again only after a tool changed. */
  ids(key: string, load: () => Promise<string[]>): Promise<string[]>;
  stop(): void;
}

export async function createToolCache(db: Knex, notifier: Notifier): Promise<ToolCache> {
  const rows = new Map<string, ToolRow>();
  const pages = new Map<string, string[]>();
  // Bumped on every notification: a fetch that started before a change must not store what it read.
  let generation = 0;
  const unsubscribe = await notifier.subscribe(CHANNELS.tools, (payload) => {
    generation++;
    rows.delete(payload.startsWith('-') ? payload.slice(1) : payload);
    pages.clear();
  });
  return {
    async getMany(ids) {
      const missing = ids.filter((id) => !rows.has(id));
      if (missing.length > 0) {
        const gen = generation;
        const fetched = await findToolsByIds(db, missing);
        if (gen === generation) {
          if (rows.size + fetched.length > MAX_ENTRIES) rows.clear();
          for (const r of fetched) rows.set(r.id, r);
        } else {
          return findToolsByIds(db, ids);
        }
      }
      return ids.map((id) => rows.get(id)).filter((r): r is ToolRow => r !== undefined);
    },
    async ids(key, load) {
      const cached = pages.get(key);
      if (cached) return cached;
      const gen = generation;
      const ids = await load();
      if (gen === generation) {
        if (pages.size >= MAX_PAGES) pages.clear();
        pages.set(key, ids);
      }
      return ids;
    },
    stop: unsubscribe,
  };
}
