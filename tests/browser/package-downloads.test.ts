/**
 * npm's weekly downloads on a package's page (issue 47, "Beyond the fixes"): asked by the worker from npm's downloads
 * API — here a stand-in on 127.0.0.1 speaking its wire form (`GET /downloads/point/last-week/<name>` →
 * `{ downloads, start, end, package }`, 404 for a package it has no figure for), since api.npmjs.org is unreachable
 * here — after an npm import and on the daily run; shown with the week npm states, or why there is none. A figure
 * is kept when npm cannot be reached, and a package not from npm never asks.
 */
import test from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { enqueue } from '../../core/infra/jobs.js';
import { waitFor } from '../helpers/wait.js';
import { startNpmRegistry, type StandInRegistry } from '../helpers/npm-registry.js';
import { FIXTURES_DIR, type Service } from '../helpers/service.js';
import { screenshot, startWebService, watchPage } from './helpers.js';
import type { Browser } from 'playwright-core';

const PKG = 'toolshed-fixture-versioned';
let svc: Service;
let browser: Browser;
let registry: StandInRegistry;
let npmApi: http.Server;
/** What the stand-in answers for PKG: a count, 404 (no figure) or 503 (npm in trouble). */
let answer: number | 404 | 503 = 12345;
const asked: string[] = [];

test.before(async () => {
  npmApi = http.createServer((req, res) => {
    asked.push(req.url ?? '');
    const m = /^\/downloads\/point\/last-week\/(.+)$/.exec(req.url ?? '');
    const name = m ? decodeURIComponent(m[1]) : '';
    res.setHeader('content-type', 'application/json');
    if (name !== PKG || answer === 404) {
      res.writeHead(404).end(JSON.stringify({ error: `package ${name} not found` }));
    } else if (answer === 503) {
      res.writeHead(503).end(JSON.stringify({ error: 'unavailable' }));
    } else {
      res.end(JSON.stringify({ downloads: answer, start: '2026-11-24', end: '2026-11-30', package: PKG }));
    }
  });
  await new Promise<void>((r) => npmApi.listen(0, '127.0.0.1', r));
  registry = await startNpmRegistry(PKG, { '1.0.0': path.join(FIXTURES_DIR, 'packages', 'versioned-v1') });
  await registry.publish('1.0.0');
  ({ svc, browser } = await startWebService({
    env: { NPM_USERCONFIG: registry.npmrc, NPM_DOWNLOADS_URL: `http://127.0.0.1:${(npmApi.address() as AddressInfo).port}` },
  }));
});
test.after.always(async () => {
  await browser?.close();
  await svc?.close();
  await registry?.close();
  await new Promise((r) => npmApi?.close(r));
});

const detail = async (name: string) => (await svc.request('GET', `/api/packages/${name}`)).body.data;
/** Makes the package's figure due and runs the daily job; resolves once the job has ended. */
async function dailyRun(): Promise<void> {
  const db = svc.api.deps.db;
  await db('packages')
    .where({ name: PKG })
    .update({ downloads_checked_at: db.raw(`now() - interval '2 days'`) });
  await enqueue(db, 'refresh_downloads', {}, { maxAttempts: 1, jobKey: 'test-daily-downloads' });
  // Done when its job is gone (a job that failed stays, with its error: the test names it).
  const left = await waitFor(async () => {
    const job = await db('graphile_worker.jobs').where({ key: 'test-daily-downloads' }).first('attempts', 'max_attempts', 'last_error', 'locked_at');
    return !job ? 'done' : !job.locked_at && job.attempts >= job.max_attempts ? `failed: ${job.last_error}` : undefined;
  }, 'the daily run to end');
  if (left !== 'done') throw new Error(left);
}

test.serial('an npm import asks npm for its weekly downloads; the page shows the count and its week', async (t) => {
  const user = await svc.createUser();
  const res = await svc.request('POST', '/api/packages', { key: user.key, body: { source: `npm:${PKG}@1.0.0` } });
  t.is(res.status, 201, res.text);
  const d = await waitFor(async () => (await detail(PKG)).downloads, 'the figure after the import');
  t.like(d, { weekly: 12345, start: '2026-11-24', end: '2026-11-30' });
  t.true(asked.includes(`/downloads/point/last-week/${PKG}`), asked.join(', '));

  const page = await browser.newPage({ viewport: { width: 1366, height: 850 } });
  const problems = watchPage(page);
  await page.goto(`${svc.api.url}/packages/${PKG}`);
  const fact = page.getByTestId('downloads');
  await fact.waitFor();
  t.regex((await fact.textContent()) ?? '', /^12,345 on npm, 24 Nov – 30 Nov$/);
  await screenshot(page, 'package-downloads-desktop');
  t.deepEqual(problems, []);
  await page.close();
});

test.serial('npm in trouble keeps the figure; a package npm has no figure for says so, not zero', async (t) => {
  answer = 503;
  await dailyRun();
  t.like((await detail(PKG)).downloads, { weekly: 12345 }, 'kept when npm answers 503');
  answer = 404;
  await dailyRun();
  const d = (await detail(PKG)).downloads;
  t.is(d.weekly, null);
  t.truthy(d.checkedAt);
  const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
  await page.goto(`${svc.api.url}/packages/${PKG}`);
  const fact = page.getByTestId('downloads');
  await fact.waitFor();
  t.is((await fact.textContent())?.trim(), 'npm has no figure for it');
  await page.close();
  answer = 12345;
});

test.serial('a package imported from a folder is not asked about and says it is not on npm', async (t) => {
  const before = asked.length;
  const res = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'packages', 'echo-tools')}`);
  t.is(res.status, 201, res.text);
  const name = '@fixtures/echo-tools';
  await dailyRun();
  t.is((await detail(name)).downloads, null);
  t.false(
    asked.slice(before).some((u) => u.includes('echo-tools')),
    asked.slice(before).join(', '),
  );
  const page = await browser.newPage({ viewport: { width: 1366, height: 850 } });
  await page.goto(`${svc.api.url}/packages/${name}`);
  const fact = page.getByTestId('downloads');
  await fact.waitFor();
  t.is((await fact.textContent())?.trim(), 'not on npm');
  await page.close();
});
