/**
 * npm's weekly download count of a package (issue 47, "Beyond the fixes"), from npm's downloads API
 * (`GET <NPM_DOWNLOADS_URL>/downloads/point/last-week/<name>`, answering `{ downloads, start, end, package }`, or 404
 * for a package it has no figure for). Asked by the worker (worker/tasks/refresh-downloads.ts), never by the API while
 * it answers a request; the count and the week npm states are stored on the package, with when npm was last asked.
 */
import { z } from 'zod';
import type { Db } from '../infra/db.js';

const FETCH_TIMEOUT_MS = 15_000;
/** A package's figure is asked again once it is older than this (npm updates its counts daily). */
export const DOWNLOADS_MAX_AGE_HOURS = 20;
/** At most this many packages are asked in one run of the job (the rest wait for the next day's run). */
export const DOWNLOADS_PER_RUN = 2000;

const pointSchema = z.object({
  downloads: z.number().int().nonnegative(),
  start: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  end: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
});

export interface WeeklyDownloads {
  count: number;
  start: string;
  end: string;
}

/** The week's count; null when npm has no figure for the package (404). Any other answer, or none, throws. */
export async function fetchWeeklyDownloads(base: string, name: string, signal?: AbortSignal): Promise<WeeklyDownloads | null> {
  // A scoped name keeps its `@scope/` path, as npm's point API takes it.
  const url = new URL(`downloads/point/last-week/${name.split('/').map(encodeURIComponent).join('/')}`, base.endsWith('/') ? base : `${base}/`);
  const timeout = AbortSignal.timeout(FETCH_TIMEOUT_MS);
  const res = await fetch(url, { headers: { accept: 'application/json' }, signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
  if (res.status === 404) return null;
  if (!res.ok) throw new Error(`npm's downloads API answered ${res.status}`);
  const body = pointSchema.safeParse(await res.json());
  if (!body.success) throw new Error("npm's downloads API answered in an unknown shape");
  return { count: body.data.downloads, start: body.data.start, end: body.data.end };
}

/** `npm:` packages whose figure is missing or older than DOWNLOADS_MAX_AGE_HOURS, the oldest first. */
export async function packagesDueForDownloads(db: Db, limit = DOWNLOADS_PER_RUN): Promise<{ id: string; name: string }[]> {
  return db('packages')
    .whereLike('source', 'npm:%')
    .where((q) =>
      q.whereNull('downloads_checked_at').orWhere('downloads_checked_at', '<', db.raw(`now() - make_interval(hours => ?)`, [DOWNLOADS_MAX_AGE_HOURS])),
    )
    .orderByRaw('downloads_checked_at asc nulls first')
    .limit(limit)
    .select('id', 'name');
}

/** Stores what npm said (null: no figure); the time is stored either way, so a package npm does not know waits a day. */
export async function saveWeeklyDownloads(db: Db, packageId: string, figure: WeeklyDownloads | null): Promise<void> {
  await db('packages')
    .where({ id: packageId })
    .update({
      weekly_downloads: figure?.count ?? null,
      downloads_start: figure?.start ?? null,
      downloads_end: figure?.end ?? null,
      downloads_checked_at: db.fn.now(),
    });
}
