/**
 * The API side of an import: record the request and enqueue its job in one transaction, then wait for the worker's
 * NOTIFY (re-reading the row now and then, in case a NOTIFY was lost) up to a bound. A publish takes its daily quota
 * in that same transaction.
 */
import type { Knex } from 'knex';
import { enqueue } from '../infra/jobs.js';
import type { Notifier } from '../infra/notify.js';
import { waitForFinal } from '../infra/wait-final.js';
import { findImport, insertImport, type PackageImportRow } from '../repos/package-imports.js';
import { countImportsSince, lockImportQuota } from '../repos/published-packages.js';
import { AppError } from '../infra/errors.js';

export async function requestImport(
  deps: { db: Knex; notifier: Notifier },
  req: {
    source: string;
    official: boolean;
    options?: Record<string, unknown>;
    requestedBy?: string;
    /** The requester's imports since `since` may number at most `limit` (this one included): else 429 QUOTA_EXCEEDED. */
    quota?: { limit: number; since: Date };
  },
  waitMs: number,
): Promise<PackageImportRow> {
  const row = await deps.db.transaction(async (trx) => {
    if (req.quota && req.requestedBy) {
      // Counted and taken under the user's lock, in the transaction that records the import.
      await lockImportQuota(trx, req.requestedBy);
      if ((await countImportsSince(trx, req.requestedBy, req.quota.since)) >= req.quota.limit) {
        throw new AppError('QUOTA_EXCEEDED', 429, `Daily package import quota (${req.quota.limit}) exhausted`);
      }
    }
    const r = await insertImport(trx, req.source, req.official, { options: req.options, requestedBy: req.requestedBy });
    // The task records every failure itself and never throws one, so further attempts happen only when the worker
    // running it died (the reaper frees the job).
    await enqueue(trx, 'import_package', { importId: r.id }, { maxAttempts: 3, queueName: 'imports' });
    return r;
  });
  return waitForFinal(deps.notifier, {
    match: (p) => p.includes(row.id),
    read: async () => (await findImport(deps.db, row.id))!,
    isFinal,
    waitMs,
  });
}

export function isFinal(r: PackageImportRow): boolean {
  return r.status === 'succeeded' || r.status === 'failed';
}
