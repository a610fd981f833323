/**
 * The npm poller's decisions (issue 24, item 3): which published versions of a package to import, and the import
 * request for one (queued like a publish, with the options of the package's last import and its publisher).
 */
import semver from 'semver';
import type { Knex } from 'knex';
import { insertImport } from '../repos/package-imports.js';
import { enqueue } from '../infra/jobs.js';

/** At most this many new versions of one package are queued per poll (the highest ones). */
export const MAX_NEW_VERSIONS_PER_POLL = 3;

/**
 * Released versions above the latest imported one, up to the `latest` dist-tag (a version published under another
 * tag, or a prerelease, is not followed), not already imported or requested; lowest first.
 */
export function versionsToImport(published: string[], latestTag: string | null, latestImported: string, known: Set<string>): string[] {
  const floor = semver.valid(latestImported);
  return published
    .filter((v) => semver.valid(v) && !semver.prerelease(v) && !known.has(v))
    .filter((v) => (floor ? semver.gt(v, floor) : true))
    .filter((v) => (latestTag && semver.valid(latestTag) ? semver.lte(v, latestTag) : true))
    .sort(semver.compare)
    .slice(-MAX_NEW_VERSIONS_PER_POLL);
}

/** Queues the import of one version, in one transaction with its job (the imports queue runs them in order). */
export async function requestPolledImport(
  db: Knex,
  req: { source: string; official: boolean; options: Record<string, unknown> | null; publishedBy: string | null },
): Promise<void> {
  await db.transaction(async (trx) => {
    const row = await insertImport(trx, req.source, req.official, { options: req.options ?? undefined, requestedBy: req.publishedBy, polled: true });
    await enqueue(trx, 'import_package', { importId: row.id }, { maxAttempts: 3, queueName: 'imports' });
  });
}
