/**
 * An in-process cache of tool rows for the hot read paths (search results, detail by id), kept exact by the
 * `toolshed_tools` NOTIFY that a trigger sends on every change of a tool (and of its counters).
 */
import type { Knex } from 'knex';
import { CHANNELS, type Notifier } from './notify.js';
import { findToolsByIds, type ToolRow } from './repos/tools.js';

const MAX_ENTRIES = 20_000;

export interface ToolCache {
  getMany(ids: string[]): Promise<ToolRow[]>;
  stop(): void;
}

export async function createToolCache(db: Knex, notifier: Notifier): Promise<ToolCache> {
  const rows = new Map<string, ToolRow>();
  // Bumped on every notification: a fetch that started before a change must not store what it read.
  let generation = 0;
  const unsubscribe = await notifier.subscribe(CHANNELS.tools, (payload) => {
    generation++;
    rows.delete(payload.startsWith('-') ? payload.slice(1) : payload);
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
    stop: unsubscribe,
  };
}
