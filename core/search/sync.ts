/**
 * Keeps a search engine current with Postgres: a full load at start, then the `toolshed_tools` NOTIFY (fired by a
 * trigger on tools) tells every process which tools changed; changes are batched briefly and re-read.
 */
import type { Knex } from 'knex';
import type { Logger } from '../infra/logger.js';
import { CHANNELS, type Notifier } from '../infra/notify.js';
import { listSearchDocuments } from '../repos/tools.js';
import type { SearchEngine } from './engine.js';

const BATCH_MS = 20;
/** After a failed re-read (the database unreachable), the changes are kept and tried again this much later. */
const RETRY_MS = 1000;

export interface SearchSync {
  /** Resolves when every change notified so far has been applied. */
  flush(): Promise<void>;
  stop(): void;
}

export async function startSearchSync(db: Knex, notifier: Notifier, engine: SearchEngine, logger: Logger): Promise<SearchSync> {
  const changed = new Set<string>();
  const removed = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let applying: Promise<void> = Promise.resolve();

  let stopped = false;
  const apply = async () => {
    timer = undefined;
    const up = [...changed];
    const down = [...removed];
    changed.clear();
    removed.clear();
    try {
      if (down.length) await engine.remove(down);
      if (up.length) {
        const docs = await listSearchDocuments(db, up);
        // A tool that is not listed any more (its package hidden) leaves the index.
        const listed = new Set(docs.map((d) => d.id));
        const gone = up.filter((id) => !listed.has(id));
        if (gone.length) await engine.remove(gone);
        await engine.upsert(docs);
      }
    } catch (err) {
      // Nothing notified is dropped: what this batch held is applied with the next one, unless a newer notice of the
      // same tool came meanwhile (it decides).
      for (const id of up) if (!removed.has(id)) changed.add(id);
      for (const id of down) if (!changed.has(id)) removed.add(id);
      logger.error({ err, tools: up.length + down.length }, 'search sync failed; retrying');
      schedule(RETRY_MS);
    }
  };
  const schedule = (ms = BATCH_MS) => {
    if (stopped) return;
    timer ??= setTimeout(() => {
      applying = applying.then(apply);
    }, ms);
  };

  const unsubscribe = await notifier.subscribe(CHANNELS.tools, (payload) => {
    // `~<id>`: a column the index does not hold changed (a counter, the last health check, …).
    if (payload.startsWith('~')) return;
    if (payload.startsWith('-')) {
      removed.add(payload.slice(1));
      changed.delete(payload.slice(1));
    } else changed.add(payload);
    schedule();
  });
  await engine.replaceAll(await listSearchDocuments(db));

  return {
    async flush() {
      if (timer) {
        clearTimeout(timer);
        timer = undefined;
        applying = applying.then(apply);
      }
      await applying;
    },
    stop() {
      stopped = true;
      unsubscribe();
      if (timer) clearTimeout(timer);
    },
  };
}
