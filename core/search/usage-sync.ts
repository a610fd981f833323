/**
 * Keeps an API process's usage table (usage.ts) current: loaded at start, rebuilt after new votes (the
 * `toolshed_search_usage` NOTIFY; at most once per SEARCH_LEARNING_REFRESH_MS) and hourly (ages decay, old votes are
 * deleted). A search reads the table in memory and never queries the database for it.
 */
import type { Knex } from 'knex';
import type { Config } from '../infra/config.js';
import type { Logger } from '../infra/logger.js';
import type { Notifier } from '../infra/notify.js';
import { pruneUsage, USAGE_CHANNEL, usageAggregates } from '../repos/search-usage.js';
import { buildUsageTable, DEFAULT_USAGE, UsageTable, type UsageSource } from './usage.js';

const HOURLY_MS = 3_600_000;

export type LearningConfig = Pick<
  Config,
  'SEARCH_LEARNING' | 'SEARCH_LEARNING_MIN_CALLERS' | 'SEARCH_LEARNING_HALF_LIFE_DAYS' | 'SEARCH_LEARNING_REFRESH_MS' | 'SEARCH_LEARNING_WINDOW_SECONDS'
>;

export interface UsageSync extends UsageSource {
  /** Rebuilds the table now. */
  refresh(): Promise<void>;
  stop(): void;
}

/** A holder whose table stays empty (SEARCH_LEARNING=off). */
export function noUsage(): UsageSync {
  return { current: () => UsageTable.empty, refresh: async () => {}, stop() {} };
}

export async function startUsageSync(db: Knex, notifier: Notifier, config: LearningConfig, logger: Logger): Promise<UsageSync> {
  if (config.SEARCH_LEARNING === 'off') return noUsage();
  let table = UsageTable.empty;
  let running: Promise<void> | undefined;
  let again = false;
  let timer: NodeJS.Timeout | undefined;
  let lastRun = 0;
  let stopped = false;

  const rebuild = async () => {
    const rows = await usageAggregates(db, { minCallers: config.SEARCH_LEARNING_MIN_CALLERS, halfLifeDays: config.SEARCH_LEARNING_HALF_LIFE_DAYS });
    table = buildUsageTable(rows, { ...DEFAULT_USAGE, minCallers: config.SEARCH_LEARNING_MIN_CALLERS });
  };
  const refresh = (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    lastRun = Date.now();
    running = rebuild()
      .catch((err) => logger.error({ err }, 'search usage refresh failed'))
      .finally(() => {
        running = undefined;
        if (again && !stopped) {
          again = false;
          schedule();
        }
      });
    return running;
  };
  const schedule = () => {
    if (timer || stopped) return;
    const wait = Math.max(0, lastRun + config.SEARCH_LEARNING_REFRESH_MS - Date.now());
    timer = setTimeout(() => {
      timer = undefined;
      void refresh();
    }, wait);
  };
  const unsubscribe = await notifier.subscribe(USAGE_CHANNEL, schedule);
  const hourly = setInterval(() => {
    void pruneUsage(db, { halfLifeDays: config.SEARCH_LEARNING_HALF_LIFE_DAYS, windowSeconds: config.SEARCH_LEARNING_WINDOW_SECONDS })
      .catch((err) => logger.error({ err }, 'search usage prune failed'))
      .then(refresh);
  }, HOURLY_MS);
  hourly.unref();
  await refresh();

  return {
    current: () => table,
    refresh,
    stop() {
      stopped = true;
      unsubscribe();
      clearInterval(hourly);
      if (timer) clearTimeout(timer);
    },
  };
}
