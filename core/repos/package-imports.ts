/** package_imports: one row per requested import; the worker job fills it in, the API waits on it. */
import type { Db } from '../db.js';
import type { Category, EnvVarSpec } from '../types.js';

export interface PackageImportRow {
  id: string;
  source: string;
  official: boolean;
  status: 'queued' | 'running' | 'succeeded' | 'failed';
  /** What the request says about a package that does not (category, env): see manifest.ts ManifestDefaults. */
  options: ImportOptions;
  requested_by: string | null;
  package_id: string | null;
  error: { code: string; message: string; details?: { path: string; message: string }[] } | null;
  created_at: Date;
  completed_at: Date | null;
}

export interface ImportOptions {
  category?: Category;
  env?: EnvVarSpec[];
}

export async function insertImport(
  db: Db,
  source: string,
  official: boolean,
  extra: { options?: ImportOptions; requestedBy?: string } = {},
): Promise<PackageImportRow> {
  const [row] = await db('package_imports')
    .insert({ source, official, options: JSON.stringify(extra.options ?? {}), requested_by: extra.requestedBy ?? null })
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
