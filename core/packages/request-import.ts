/**
 * The API side of an import: record the request and enqueue its job in one transaction, then wait for the worker's
 * NOTIFY (no polling) up to a bound.
 */
import type { Knex } from 'knex';
import { enqueue } from '../jobs.js';
import { CHANNELS, type Notifier } from '../notify.js';
import { findImport, insertImport, type PackageImportRow } from '../repos/package-imports.js';

export async function requestImport(
  deps: { db: Knex; notifier: Notifier },
  req: { source: string; official: boolean },
  waitMs: number,
): Promise<PackageImportRow> {
  const row = await deps.db.transaction(async (trx) => {
    const r = await insertImport(trx, req.source, req.official);
    await enqueue(trx, 'import_package', { importId: r.id }, { maxAttempts: 1, queueName: 'imports' });
    return r;
  });
  const waiter = await deps.notifier.waiter(CHANNELS.jobs, (p) => p.includes(row.id));
  try {
    const current = await findImport(deps.db, row.id);
    if (current && isFinal(current)) return current;
    await waiter.wait(waitMs);
    return (await findImport(deps.db, row.id))!;
  } finally {
    waiter.cancel();
  }
}

export function isFinal(r: PackageImportRow): boolean {
  return r.status === 'succeeded' || r.status === 'failed';
}
