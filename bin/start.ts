/**
 * `npm start`: everything on one machine in one process group — Postgres (embedded unless DATABASE_URL is set),
 * migrations, API, worker, and the example tool packages on first start.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { bootProcess, closeOnSignals } from '../core/bootstrap.js';
import { startApi } from '../api/server.js';
import { startWorkerProcess } from '../worker/main.js';
import { importPackage } from '../worker/import.js';

// From bin/ (tsx) or dist/bin/ (built): the examples live at the project root either way.
const here = path.dirname(new URL(import.meta.url).pathname);
const EXAMPLES_DIR = path.resolve(here, here.includes(`${path.sep}dist${path.sep}`) ? '../../examples/tools' : '../examples/tools');

async function main() {
  const { config, logger, database } = await bootProcess(process.env);
  const worker = await startWorkerProcess(config, database.url, logger);
  const api = await startApi(config, database.url, logger);
  closeOnSignals(logger, database, () => api.close(), () => worker.close());
  logger.info({ url: `http://localhost:${config.PORT}`, adminTokenFile: config.DATA_DIR + '/admin-token' }, 'Toolshed is up');

  const imported = await worker.deps.db('packages').count('* as n').first();
  if (Number(imported?.n ?? 0) === 0) {
    for (const dir of (await fs.readdir(EXAMPLES_DIR)).sort()) {
      const result = await importPackage(worker.deps, { source: `path:${path.join(EXAMPLES_DIR, dir)}`, official: true });
      if (result.ok) logger.info({ package: dir, tools: result.toolIds.length }, 'example package imported');
      else logger.error({ package: dir, error: result.error.message }, 'example package failed to import');
    }
  }
}

main().catch((err) => {
  console.error('Toolshed failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
