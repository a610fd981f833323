/** Job: import one requested package and report the outcome on its package_imports row (NOTIFY wakes the API). */
import type { Task } from 'graphile-worker';
import { enqueue, parsePayload } from '../../core/infra/jobs.js';
import { findImport, finishImport, markImportRunning } from '../../core/repos/package-imports.js';
import { isFinal } from '../../core/packages/request-import.js';
import type { WorkerDeps } from '../deps.js';
import { importPackage } from '../import/index.js';

export function importPackageTask(deps: WorkerDeps): Task {
  return async (payload) => {
    const { importId } = parsePayload('import_package', payload);
    const imp = await findImport(deps.db, importId);
    if (!imp || isFinal(imp)) return;
    await markImportRunning(deps.db, importId);
    try {
      const result = await importPackage(deps, {
        source: imp.source,
        official: imp.official,
        options: imp.options ?? undefined,
        publishedBy: imp.requested_by,
      });
      await finishImport(deps.db, importId, { ...(result.ok ? { packageId: result.packageId } : { error: result.error }), startup: result.startup });
      // npm's weekly downloads of a package new from npm are asked at once, not at the next daily run.
      if (result.ok && imp.source.startsWith('npm:') && deps.config.NPM_DOWNLOADS_URL)
        await enqueue(deps.db, 'refresh_downloads', { packageId: result.packageId }, { maxAttempts: 1, jobKey: `refresh_downloads:${result.packageId}` });
      deps.metrics?.importEnded(result.ok ? 'succeeded' : 'failed');
    } catch (err) {
      deps.logger.error({ err, importId }, 'import failed');
      await finishImport(deps.db, importId, { error: { code: 'INTERNAL', message: 'The import failed unexpectedly' } });
      deps.metrics?.importEnded('failed');
    }
  };
}
