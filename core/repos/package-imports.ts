/** package_imports: one row per requested import; the worker job fills it in, the API waits on it. */
import type { Db } from '../infra/db.js';

/**
 * How an MCP server import got its server to start (worker/import/mcp-startup.ts): how many starts, the start-up rules
 * that fired and why, and the refusal's code when it was refused. Null for other imports.
 */
export interface ImportStartup {
  starts: number;
  rules: { rule: string; why: string; declared?: string[] }[];
  refusal?: string;
  /** The budget of starts ran out while a rule still had an answer. */
  budgetSpent?: boolean;
  /**
   * Whether the server runs from the one-file bundle made at import, and why (worker/import/bundle-choice.ts);
   * `computedLoads`: its files that load a module by a computed name (at most 10 named).
   */
  bundle?: { used: boolean; why: string; computedLoads?: string[] };
}

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
  startup: ImportStartup | null;
  created_at: Date;
  completed_at: Date | null;
}

export async function insertImport(
  db: Db,
  source: string,
  official: boolean,
  extra: { options?: Record<string, unknown>; requestedBy?: string | null; polled?: boolean } = {},
): Promise<PackageImportRow> {
  const options = extra.options && Object.values(extra.options).some((v) => v !== undefined) ? JSON.stringify(extra.options) : null;
  const [row] = await db('package_imports')
    .insert({ source, official, options, requested_by: extra.requestedBy ?? null, polled: extra.polled ?? false })
    .returning('*');
  return row;
}

export async function findImport(db: Db, id: string): Promise<PackageImportRow | undefined> {
  return db('package_imports').where({ id }).first();
}

export async function finishImport(
  db: Db,
  id: string,
  outcome: ({ packageId: string } | { error: NonNullable<PackageImportRow['error']> }) & { startup?: ImportStartup },
): Promise<void> {
  const startup = outcome.startup ? JSON.stringify(outcome.startup) : null;
  const patch =
    'packageId' in outcome
      ? { status: 'succeeded', package_id: outcome.packageId, error: null, startup }
      : { status: 'failed', error: JSON.stringify(outcome.error), startup };
  // From `running` only: a late attempt (its worker was taken for dead) cannot overwrite a final record.
  const n = await db('package_imports')
    .where({ id, status: 'running' })
    .update({ ...patch, completed_at: db.fn.now() });
  if (n === 0) return;
  await db.raw('select pg_notify(?, ?)', ['toolshed_jobs', JSON.stringify({ kind: 'package_import', id })]);
}

/**
 * The start-up record of the latest successful import of a package since `since` (its current version's recording)
 * that did not import another exact version: how the current version's MCP server was started. Null when none kept one.
 */
export async function latestImportStartup(db: Db, packageId: string, since: Date, version: string): Promise<ImportStartup | null> {
  const rows: { source: string; startup: ImportStartup | null }[] = await db('package_imports')
    .where({ package_id: packageId, status: 'succeeded' })
    .where('completed_at', '>=', since)
    .orderBy('completed_at', 'desc')
    .limit(20)
    .select('source', 'startup');
  // `npm:<name>@<exact>` of another version imported that one (an older version), not the current one.
  const exact = (source: string) => /^npm:(?:@[^/]+\/)?[^@]+@(\d+\.\d+\.\d+[^\s]*)$/.exec(source)?.[1];
  const row = rows.find((r) => {
    const v = exact(r.source);
    return v === undefined || v === version;
  });
  return row?.startup ?? null;
}

export async function markImportRunning(db: Db, id: string): Promise<void> {
  await db('package_imports').where({ id }).update({ status: 'running' });
}

/** Packages imported from npm, with what the poller needs to import their next versions like their last one. */
export async function listNpmPackages(
  db: Db,
): Promise<{ id: string; name: string; version: string; official: boolean; published_by: string | null; options: Record<string, unknown> | null }[]> {
  return db('packages as p')
    .whereLike('p.source', 'npm:%')
    .select(
      'p.id',
      'p.name',
      'p.version',
      'p.official',
      'p.published_by',
      // The options of the package's last successful import (category, env, args… for an MCP server).
      db.raw(`(select i.options from package_imports i where i.package_id = p.id and i.status = 'succeeded' order by i.created_at desc limit 1) as options`),
    )
    .orderBy('p.name');
}

/** Versions of the package imported, or requested by the poller already (a failed one is not retried every poll). */
export async function knownVersions(db: Db, packageId: string, name: string): Promise<Set<string>> {
  const imported: { version: string }[] = await db('package_versions').where({ package_id: packageId }).select('version');
  const prefix = `npm:${name}@`;
  const requested: { source: string }[] = await db('package_imports')
    .where('polled', true)
    .whereLike('source', `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`)
    .select('source');
  return new Set([...imported.map((r) => r.version), ...requested.map((r) => r.source.slice(prefix.length))]);
}
