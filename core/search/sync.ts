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

  const apply = async () => {
    timer = undefined;
    const up = [...changed];
    const down = [...removed];
    changed.clear();
    removed.clear();
    if (down.length) await engine.remove(down);
    if (up.length) {
      const docs = await listSearchDocuments(db, up);
      // A tool that is not listed any more (its package hidden) leaves the index.
      const gone = up.filter((id) => !docs.some((d) => d.id === id));
      if (gone.length) await engine.remove(gone);
      await engine.upsert(docs);
    }
  };
  const schedule = () => {
    timer ??= setTimeout(() => {
      applying = applying.then(apply).catch((err) => logger.error({ err }, 'search sync failed'));
    }, BATCH_MS);
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
      unsubscribe();
      if (timer) clearTimeout(timer);
    },
  };
}
