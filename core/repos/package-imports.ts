/** package_imports: one row per requested import; the worker job fills it in, the API waits on it. */
import type { Db } from '../db.js';

export interface PackageImportRow {
  id: string;
  source: string;
  official: boolean;
  /** What the request said beyond its source (core/packages/mcp-server.ts ImportOptions); null when nothing. */
  options: Record<string, unknown> | null;
  status: 'queued' | 'running' | 'succeeded' | 'failed';
  /** Who asked (POST /api/packages): the publisher of the package it imports; null for the admin's imports. */
  requested_by: string | null;
  package_id: string | null;
  error: { code: string; message: string; details?: { path: string; message: string }[] } | null;
  created_at: Date;
  completed_at: Date | null;
}

export async function insertImport(
  db: Db,
  source: string,
  official: boolean,
  extra: { options?: Record<string, unknown>; requestedBy?: string } = {},
): Promise<PackageImportRow> {
  const options = extra.options && Object.values(extra.options).some((v) => v !== undefined) ? JSON.stringify(extra.options) : null;
  const [row] = await db('package_imports')
    .insert({ source, official, options, requested_by: extra.requestedBy ?? null })
    .returning('*');
  return row;
}

export async function findImport(db: Db, id: string): Promise<PackageImportRow | undefined> {
  return db('package_imports').where({ id }).first();
}

export async function finishImport(db: Db, id: string, outcome: { packageId: string } | { error: NonNullable<PackageImportRow['error']> }): Promise<void> {
  const patch =
    'packageId' in outcome ? { status: 'succeeded', package_id: outcome.packageId, error: null } : { status: 'failed', error: JSON.stringify(outcome.error) };
  // From `running` only: a late attempt (its worker was taken for dead) cannot overwrite a final record.
  const n = await db('package_imports')
    .where({ id, status: 'running' })
    .update({ ...patch, completed_at: db.fn.now() });
  if (n === 0) return;
  await db.raw('select pg_notify(?, ?)', ['toolshed_jobs', JSON.stringify({ kind: 'package_import', id })]);
}

export async function markImportRunning(db: Db, id: string): Promise<void> {
  await db('package_imports').where({ id }).update({ status: 'running' });
}
