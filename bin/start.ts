/**
 * `npm start`: everything on one machine in one process group — the preflight (system programs the sandbox needs),
 * Postgres (embedded unless DATABASE_URL is set), migrations, API, worker, and the example tool packages on first
 * start. Its log tells that story in order and ends with the URL to open; it names the admin token's file, never the
 * token.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { bootProcess, closeOnSignals } from '../core/infra/bootstrap.js';
import { startTracing } from '../core/infra/tracing.js';
import { loadConfig, type Config } from '../core/infra/config.js';
import type { Logger } from '../core/infra/logger.js';
import { startApi } from '../api/server.js';
import { startWorkerProcess } from '../worker/main.js';
import type { WorkerDeps } from '../worker/deps.js';
import { importPackage } from '../worker/import/index.js';
import { runPreflight } from './preflight.js';
import { countPackages } from '../core/repos/packages.js';

// From bin/ (tsx) or dist/bin/ (built): the examples live at the project root either way.
const here = path.dirname(new URL(import.meta.url).pathname);
const EXAMPLES_DIR = path.resolve(here, here.includes(`${path.sep}dist${path.sep}`) ? '../../examples/tools' : '../examples/tools');

async function main() {
  const parsed = loadConfig(process.env);
  if (!(await runPreflight({ purpose: 'start', config: parsed })).ok) process.exit(1);
  const { config, logger, database } = await bootProcess(process.env, parsed);
  await buildWebAppIfStale(config, logger);
  // One process, two services in the traces: toolshed-api and toolshed-worker (core/infra/tracing.ts).
  const tracing = [await startTracing(config, 'toolshed-api'), await startTracing(config, 'toolshed-worker')];
  const worker = await startWorkerProcess(config, database.url, logger);
  const api = await startApi(config, database.url, logger);
  closeOnSignals(
    logger,
    database,
    () => api.close(),
    () => worker.close(),
    ...tracing.map((t) => t.close),
  );

  const url = openUrl(config);
  const adminTokenFile = parsed.ADMIN_TOKEN ? undefined : path.join(config.DATA_DIR, 'admin-token');
  const firstStart = (await countPackages(worker.deps.db)) === 0;
  const token = adminTokenFile ? `admin token in ${adminTokenFile}` : 'admin token: the ADMIN_TOKEN you set';
  logger.info({ url, adminTokenFile }, `Toolshed is up: open ${url} (${token})`);
  if (firstStart) {
    await importExamples(worker.deps, logger);
    logger.info({ url }, `Toolshed is ready: open ${url}`);
  }
}

/**
 * The browser app is built by `npm run build`; from the sources (`npm start`) it is built here when it is missing or
 * older than web/src. The module is named at run time so that the compiled server (dist/) never bundles the builder.
 */
async function buildWebAppIfStale(config: Readonly<Config>, logger: Logger): Promise<void> {
  const builder = '../web/build.js';
  const mod = (await import(builder).catch(() => undefined)) as { ensureWebBuild(outDir: string): Promise<boolean> } | undefined;
  if (!mod) return;
  const started = Date.now();
  if (await mod.ensureWebBuild(config.WEB_DIR)) logger.info({ dir: config.WEB_DIR, ms: Date.now() - started }, 'web app built');
}

/** Imports every package under examples/tools; one summary line, one error line per package that failed. */
async function importExamples(deps: WorkerDeps, logger: Logger): Promise<void> {
  const dirs = (await fs.readdir(EXAMPLES_DIR)).sort();
  logger.info(
    { packages: dirs.length, from: EXAMPLES_DIR },
    `first start: importing ${dirs.length} example packages (a minute or two; the API serves meanwhile)`,
  );
  let tools = 0;
  let imported = 0;
  for (const dir of dirs) {
    const result = await importPackage(deps, { source: `path:${path.join(EXAMPLES_DIR, dir)}`, official: true });
    if (result.ok) {
      imported += 1;
      tools += result.toolIds.length;
      logger.debug({ package: dir, tools: result.toolIds.length }, 'example package imported');
    } else logger.error({ package: dir, error: result.error.message }, `example package ${dir} failed to import`);
  }
  logger.info({ packages: imported, tools }, `example tools imported: ${tools} tools from ${imported} of ${dirs.length} packages`);
}

/** Where a person on this machine opens the app: PUBLIC_URL, else the listening host (localhost for a wildcard). */
function openUrl(config: Readonly<Config>): string {
  if (config.PUBLIC_URL) return config.PUBLIC_URL;
  const host = ['0.0.0.0', '::', ''].includes(config.HOST) ? 'localhost' : config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;
  return `http://${host}:${config.PORT}`;
}

main().catch((err) => {
  console.error('Toolshed failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
