/**
 * Job (recurring, every NPM_POLL_INTERVAL_MINUTES; off at 0): asks the npm registry (npm's own configured address)
 * for new versions of every `npm:` package and queues their imports, each like the package's last import (its
 * options, its publisher, its official flag). The job schedules its next run itself (one job, keyed `npm_poll`), so
 * any interval works, fractions of a minute included; a worker starting schedules it unless it is scheduled already.
 */
import type { Task } from 'graphile-worker';
import { enqueue, parsePayload } from '../../core/infra/jobs.js';
import type { Db } from '../../core/infra/db.js';
import { requestPolledImport, versionsToImport } from '../../core/packages/npm-poll.js';
import { knownVersions, listNpmPackages } from '../../core/repos/package-imports.js';
import { fetchPublishedVersions, npmRegistryUrl } from '../../sandbox/npm-registry.js';
import type { WorkerDeps } from '../deps.js';

const JOB_KEY = 'npm_poll';

export function npmPollTask(deps: WorkerDeps): Task {
  return async (payload, helpers) => {
    parsePayload('npm_poll', payload);
    try {
      await pollOnce(deps, helpers.abortSignal);
    } finally {
      await scheduleNpmPoll(deps, 'replace');
    }
  };
}

/**
 * One poll: returns the sources it queued. `signal` (the job's, aborted when the worker stops) ends it between
 * requests and cuts the one in flight: a worker stopping does not wait for a slow registry; the next poll is
 * scheduled as after any poll.
 */
export async function pollOnce(deps: WorkerDeps, signal?: AbortSignal): Promise<string[]> {
  const registry = await npmRegistryUrl({ userconfig: deps.config.NPM_USERCONFIG }, signal);
  const queued: string[] = [];
  for (const p of await listNpmPackages(deps.db)) {
    if (signal?.aborted) break;
    try {
      const published = await fetchPublishedVersions(registry, p.name, signal);
      if (!published) continue;
      const next = versionsToImport(published.versions, published.latest, p.version, await knownVersions(deps.db, p.id, p.name));
      for (const version of next) {
        const source = `npm:${p.name}@${version}`;
        await requestPolledImport(deps.db, { source, official: p.official, options: p.options, publishedBy: p.published_by });
        queued.push(source);
      }
    } catch (err) {
      if (signal?.aborted) break;
      // One package's registry trouble does not stop the others.
      deps.logger.warn({ err: (err as Error).message, package: p.name }, 'npm poll failed for a package');
    }
  }
  if (queued.length) deps.logger.info({ queued }, 'npm poll queued new versions');
  return queued;
}

/** Schedules the next poll (`preserve_run_at`: a poll already scheduled keeps its time); nothing when polling is off. */
export async function scheduleNpmPoll(deps: { db: Db; config: WorkerDeps['config'] }, mode: 'replace' | 'preserve_run_at'): Promise<void> {
  const minutes = deps.config.NPM_POLL_INTERVAL_MINUTES;
  if (minutes <= 0) return;
  const runAt = new Date(Date.now() + (mode === 'replace' ? minutes * 60_000 : 0));
  await enqueue(deps.db, 'npm_poll', {}, { jobKey: JOB_KEY, jobKeyMode: mode, runAt, maxAttempts: 1 });
}
