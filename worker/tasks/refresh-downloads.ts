/**
 * Job (on the crontab, daily; and queued for one package after each import of an `npm:` package): asks npm's downloads
 * API (NPM_DOWNLOADS_URL; empty: off) for the weekly download count of every `npm:` package whose figure is due
 * (core/packages/downloads.ts), one at a time, and stores it. A package npm has no figure for is stored as none, with
 * the time, so it waits a day. When npm cannot be reached the run stops at that package and keeps every figure it had:
 * an unreachable API costs one timeout a day, not one per package.
 */
import type { Task } from 'graphile-worker';
import { parsePayload } from '../../core/infra/jobs.js';
import { fetchWeeklyDownloads, packagesDueForDownloads, saveWeeklyDownloads } from '../../core/packages/downloads.js';
import type { WorkerDeps } from '../deps.js';

export function refreshDownloadsTask(deps: WorkerDeps): Task {
  return async (payload, helpers) => {
    const { packageId } = parsePayload('refresh_downloads', payload ?? {});
    await refreshDownloads(deps, packageId, helpers.abortSignal);
  };
}

/** Returns how many packages got an answer from npm (a figure or "none"). */
export async function refreshDownloads(deps: WorkerDeps, packageId?: string, signal?: AbortSignal): Promise<number> {
  const base = deps.config.NPM_DOWNLOADS_URL;
  if (!base) return 0;
  const due = packageId
    ? await deps.db('packages').where({ id: packageId }).whereLike('source', 'npm:%').select('id', 'name')
    : await packagesDueForDownloads(deps.db);
  let answered = 0;
  for (const p of due as { id: string; name: string }[]) {
    if (signal?.aborted) break;
    let figure: Awaited<ReturnType<typeof fetchWeeklyDownloads>>;
    try {
      figure = await fetchWeeklyDownloads(base, p.name, signal);
    } catch (err) {
      deps.logger.warn({ err: (err as Error).message, package: p.name }, "npm's downloads API could not be read; the run stops, figures kept");
      break;
    }
    await saveWeeklyDownloads(deps.db, p.id, figure);
    answered++;
  }
  return answered;
}
