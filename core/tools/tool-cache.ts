/**
 * An in-process cache of tool rows for the hot read paths (search results, the list, trending, the detail by id), kept
 * exact by the `toolshed_tools` NOTIFY that triggers send on every change of any column of a tool and, for each of its
 * tools, of any served column of its package (migration 20261126010001). It also keeps the pages of the list's order
 * (ids only), dropped on any change the order or its filters see (`<id>`, `-<id>`), kept on a change of another column
 * only (`~<id>`: an execution's count, a health check's time and error, …): a page read from the cache costs no
 * database round trip.
 */
import type { Knex } from 'knex';
import { CHANNELS, type Notifier } from '../infra/notify.js';
import { findToolsByIds, type ToolRow } from '../repos/tools.js';

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
  // Bumped on every notification (rows) and on those that change the list (pages): a fetch that started before a
  // change must not store what it read.
  let generation = 0;
  let pageGeneration = 0;
  const unsubscribe = await notifier.subscribe(CHANNELS.tools, (payload) => {
    generation++;
    const rowOnly = payload.startsWith('~');
    rows.delete(rowOnly || payload.startsWith('-') ? payload.slice(1) : payload);
    if (rowOnly) return;
    pageGeneration++;
    pages.clear();
  });
  return {
    async getMany(ids) {
      const missing = ids.filter((id) => !rows.has(id));
      if (missing.length > 0) {
        const gen = generation;
        const fetched = await findToolsByIds(db, missing);
        if (gen === generation) {
          if (rows.size + fetched.length > MAX_ENTRIES) {
            // Starting over keeps the rows this read answers with: it must not lose the tools it held.
            const held = ids.flatMap((id) => (rows.has(id) ? [rows.get(id)!] : []));
            rows.clear();
            for (const r of held) rows.set(r.id, r);
          }
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
      const gen = pageGeneration;
      const ids = await load();
      if (gen === pageGeneration) {
        if (pages.size >= MAX_PAGES) pages.clear();
        pages.set(key, ids);
      }
      return ids;
    },
    stop: unsubscribe,
  };
}
