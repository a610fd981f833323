/**
 * The tool cache (core/tools/tool-cache.ts) is exact for every column it serves: each change made the way the service makes
 * it (an execution, a health check, a re-import, an admin flag, a rating) shows in the detail, the list and search
 * (where the field appears there) without a restart. Each view is read once before the change, so that a cached
 * copy exists to go stale.
 */
import test from 'ava';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { enqueue } from '../core/infra/jobs.js';
import { until } from './helpers/processes.js';
import { startService, type Service } from './helpers/service.js';

let svc: Service;
let dir: string;
let toolId: string;
const PKG = '@fixtures/cache-probe';
const WAIT_MS = 60_000;

/** Writes version `version` of a one-tool package whose declarations differ by version. */
async function writePackage(version: string, v: { description: string; extraParam?: boolean; env?: unknown[]; permissions?: unknown; outputSchema?: unknown }) {
  await fs.writeFile(
    path.join(dir, 'package.json'),
    JSON.stringify({
      name: PKG,
      version,
      type: 'module',
      main: 'index.js',
      toolshed: {
        category: 'automation',
        env: v.env ?? [],
        tools: [{ exportName: 'cacheProbe', healthExample: { params: { n: 2 }, expect: { doubled: 4 } }, permissions: v.permissions }],
      },
    }),
  );
  const properties: Record<string, unknown> = { n: { type: 'integer', description: 'a number' } };
  if (v.extraParam) properties.label = { type: 'string', description: 'a label' };
  await fs.writeFile(
    path.join(dir, 'index.js'),
    `export const cacheProbe = {
      description: ${JSON.stringify(v.description)},
      inputSchema: ${JSON.stringify({ type: 'object', properties, required: ['n'] })},
      ${v.outputSchema ? `outputSchema: ${JSON.stringify(v.outputSchema)},` : ''}
      execute: async ({ n }) => ({ doubled: n * 2 }),
    };\n`,
  );
}

test.before(async () => {
  svc = await startService({ sandbox: 'process' });
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolshed-cache-probe-'));
  await fs.chmod(dir, 0o755);
  await writePackage('1.0.0', { description: 'Doubles a number for the cache probe (first wording).' });
  const res = await svc.importPackage(`path:${dir}`);
  if (res.status !== 201 && res.status !== 200) throw new Error(`import: ${res.text}`);
  toolId = res.body.data.tools.find((x: { name: string }) => x.name === 'cacheProbe').id;
});
test.after.always(async () => {
  await svc?.close();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

const db = () => svc.api.deps.db;
const row = async () => db()('tools').where({ id: toolId }).first();

async function detail() {
  const res = await svc.request('GET', `/api/tools/${toolId}`);
  if (res.status !== 200) throw new Error(`detail: ${res.text}`);
  return res.body.data;
}
/** The tool as a list item, on a page of the list filtered by `query`. */
async function listItem(query = 'q=cache%20probe') {
  const res = await svc.request('GET', `/api/tools?${query}`);
  return res.body.data.find((x: { id: string }) => x.id === toolId);
}
async function searchItem(q = 'cache probe doubles') {
  const res = await svc.request('GET', `/api/tools/search?q=${encodeURIComponent(q)}`);
  return res.body.results.tools.find((x: { id: string }) => x.id === toolId);
}
/** Reads every view once, so that each is cached before a change. */
async function warm() {
  await detail();
  await listItem();
  await listItem('official=true&q=cache%20probe');
  await searchItem();
}

/** Runs a health check job on the real worker (as the periodic sweep does) and waits until its row is written. */
async function checkNow(): Promise<{ passed: boolean }> {
  const count = async () => Number((await db()('health_checks').where({ tool_id: toolId }).count('* as n').first())!.n);
  const before = await count();
  await enqueue(db(), 'health_check', { toolId });
  await until(async () => (await count()) > before, WAIT_MS, 'the health check');
  return db()('health_checks').where({ tool_id: toolId }).orderBy('id', 'desc').first();
}

test.serial('executionCount: an execution shows in the detail without a restart', async (t) => {
  await warm();
  const before = (await detail()).executionCount;
  const exec = await svc.request('POST', `/api/tools/execute/${PKG}/cacheProbe`, { body: { params: { n: 3 } } });
  t.is(exec.status, 200, exec.text);
  t.deepEqual(exec.body.result, { doubled: 6 });
  t.is((await row()).execution_count, before + 1);
  await until(async () => (await detail()).executionCount === before + 1, WAIT_MS, 'the detail to show the new executionCount');
  t.is((await detail()).executionCount, before + 1);
});

test.serial('lastHealthCheckAt: a passing health check shows its time in the detail', async (t) => {
  await warm();
  const before = (await detail()).lastHealthCheckAt;
  t.true((await checkNow()).passed);
  const at = new Date((await row()).last_health_check_at).toISOString();
  t.not(at, before);
  await until(async () => (await detail()).lastHealthCheckAt === at, WAIT_MS, 'the detail to show the new lastHealthCheckAt');
  t.is((await detail()).healthStatus, 'HEALTHY');
});

test.serial('healthStatus and healthError: failing checks show in the detail, list and search; a new failure replaces the error', async (t) => {
  await db()('tools')
    .where({ id: toolId })
    .update({ health_example: JSON.stringify({ params: { n: 2 }, expect: { doubled: 5 } }) });
  for (let i = 0; i < 3; i++) t.false((await checkNow()).passed);
  await until(async () => (await detail()).healthStatus === 'BROKEN', WAIT_MS, 'BROKEN in the detail');
  t.regex((await detail()).healthError, /"doubled":5/);
  await until(async () => (await listItem())?.healthStatus === 'BROKEN', WAIT_MS, 'BROKEN in the list');
  await until(async () => (await searchItem()) === undefined, WAIT_MS, 'BROKEN tools to leave search');

  // Still BROKEN, another failure: only the error (and the check's time) change.
  await warm();
  await db()('tools')
    .where({ id: toolId })
    .update({ health_example: JSON.stringify({ params: { n: 2 }, expect: { doubled: 7 } }) });
  t.false((await checkNow()).passed);
  const at = new Date((await row()).last_health_check_at).toISOString();
  await until(async () => /"doubled":7/.test((await detail()).healthError ?? ''), WAIT_MS, 'the detail to show the new healthError');
  t.is((await detail()).lastHealthCheckAt, at);

  // Fixed: the next passing check brings it back everywhere.
  await db()('tools')
    .where({ id: toolId })
    .update({ health_example: JSON.stringify({ params: { n: 2 }, expect: { doubled: 4 } }) });
  t.true((await checkNow()).passed);
  await until(async () => (await detail()).healthStatus === 'HEALTHY', WAIT_MS, 'HEALTHY in the detail');
  t.is((await detail()).healthError, null);
  await until(async () => (await listItem())?.healthStatus === 'HEALTHY', WAIT_MS, 'HEALTHY in the list');
  await until(async () => (await searchItem())?.healthStatus === 'HEALTHY', WAIT_MS, 'back in search');
});

test.serial('rating: averageRating and ratingCount show in the detail, list and search', async (t) => {
  await warm();
  // A search answer made from the same rows is served again as it was (api/operations/tools.ts keeps it): same bytes.
  const search = () => svc.request('GET', `/api/tools/search?q=${encodeURIComponent('cache probe doubles')}`).then((r) => r.text);
  t.is(await search(), await search());
  const user = await svc.createUser();
  const rated = await svc.request('POST', `/api/tools/${toolId}/rate`, { key: user.key, body: { rating: 4 } });
  t.is(rated.status, 200, rated.text);
  const { qualityScore } = await row().then((r) => ({ qualityScore: r.quality_score }));
  const fresh = (x: { averageRating: number | null; ratingCount: number; qualityScore: number } | undefined) =>
    x?.averageRating === 4 && x.ratingCount === 1 && x.qualityScore === qualityScore;
  await until(async () => fresh(await detail()), WAIT_MS, 'the rating in the detail');
  await until(async () => fresh(await listItem()), WAIT_MS, 'the rating in the list');
  await until(async () => fresh(await searchItem()), WAIT_MS, 'the rating in search');
  t.true(fresh(await detail()) && fresh(await listItem()) && fresh(await searchItem()));
});

test.serial('a new version: description, schemas, permissions, env and version show in the detail, list and search', async (t) => {
  await warm();
  // Search's `match` (the share of the query's words the tool has) is worked out once per cached row: 2 of 4 now.
  const wordsOfTheNewVersion = 'cache probe label second';
  t.is((await searchItem(wordsOfTheNewVersion)).match, 0.5);
  const outputSchema = { type: 'object', properties: { doubled: { type: 'integer' } }, required: ['doubled'] };
  await writePackage('1.1.0', {
    description: 'Doubles a number for the cache probe (second wording).',
    extraParam: true,
    env: [{ name: 'PROBE_TOKEN', required: true, description: 'a token' }],
    permissions: { readOnly: true, idempotent: true, secrets: ['PROBE_TOKEN'] },
    outputSchema,
  });
  const res = await svc.importPackage(`path:${dir}`);
  t.true(res.status === 200 || res.status === 201, res.text);
  await until(async () => (await detail()).package.version === '1.1.0', WAIT_MS, 'the new version in the detail');
  const d = await detail();
  t.is(d.description, 'Doubles a number for the cache probe (second wording).');
  t.truthy(d.inputSchema.properties.label);
  t.deepEqual(d.outputSchema, outputSchema);
  t.deepEqual(d.permissions, { readOnly: true, idempotent: true, secrets: ['PROBE_TOKEN'] });
  t.deepEqual(d.package.envVars, [{ name: 'PROBE_TOKEN', required: true, description: 'a token' }]);
  t.deepEqual(d.package.env, ['PROBE_TOKEN']);
  const fresh = (x: { description: string; package: { env: string[] } } | undefined) =>
    x !== undefined && x.description === d.description && x.package.env.join() === 'PROBE_TOKEN';
  await until(async () => fresh(await listItem()), WAIT_MS, 'the new version in the list');
  await until(async () => fresh(await searchItem()), WAIT_MS, 'the new version in search');
  t.true(fresh(await listItem()) && fresh(await searchItem()));
  t.is((await searchItem(wordsOfTheNewVersion)).match, 1, "the new version's description and parameter count in match");
});

test.serial('official: an admin flag on a package shows in the detail and the official filter of the list', async (t) => {
  await warm();
  t.false((await detail()).package.official);
  t.is(await listItem('official=true&q=cache%20probe'), undefined);
  const res = await svc.importPackage(`path:${dir}`, { official: true });
  t.true(res.status === 200 || res.status === 201, res.text);
  await until(async () => (await detail()).package.official === true, WAIT_MS, 'official in the detail');
  await until(async () => (await listItem('official=true&q=cache%20probe')) !== undefined, WAIT_MS, 'the tool in the official list');
  t.true((await detail()).package.official);
});
