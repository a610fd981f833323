/**
 * Batch evaluation in the browser (issue 25, item 7), in Chromium against the real service (Postgres, worker, gVisor,
 * the offline provider): a collection's owner generates scenarios from its page, runs them all three times, follows
 * the batch live to its report — the matrix of verdicts (scenarios × runs, the failing scenario's three ✗), the pass
 * rate, tokens — runs them again and sees the pass rate across both batches, then opens the comparison. At the free
 * tier's real limit (60 calls a minute): the live batch follows one event stream, so the page meets no 429.
 * Screenshots at desktop and phone width.
 */
import test from 'ava';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { EXAMPLES_DIR, type Service } from '../helpers/service.js';
import { checkAccessibility, shots, signUpInBrowser, startWebService, watchPage, write } from './helpers.js';

let svc: Service;
let browser: Browser;
const DESKTOP = { width: 1366, height: 900 };

test.before(async () => {
  ({ svc, browser } = await startWebService({
    env: { RATE_LIMIT_FREE_MINUTE: '60', RATE_LIMIT_FREE_DAY: '1000' },
    packages: [path.join(EXAMPLES_DIR, 'text-tools')],
  }));
});
test.after.always(async () => {
  await browser?.close();
  await svc?.close();
});

test('generate scenarios, run them all three times, follow the batch to its matrix and pass rate, run again, see the trend and compare', async (t) => {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  const problems = watchPage(page);
  const refused: string[] = [];
  page.on('response', (r) => r.status() === 429 && refused.push(new URL(r.url()).pathname));
  await signUpInBrowser(page, svc.url, 'evaluator');
  const col = (await write(page, 'POST', '/api/collections', { name: 'Slug checks', isPublic: true })).data;
  await write(page, 'POST', `/api/collections/${col.uid}/tools`, { toolId: '@toolshed-examples/text-tools::slugify' });
  // One scenario that always fails (its answer never contains "sunny"): the matrix must show its three ✗.
  const failing = (
    await write(page, 'POST', '/api/scenarios', {
      collectionId: col.id,
      name: 'Always sunny',
      prompt: 'Slugify "Rainy Day" with slugify',
      assertions: [{ type: 'outputContains', text: 'sunny' }],
    })
  ).data;

  await page.goto(`${svc.url}/collections/${col.uid}`);
  await page.getByRole('heading', { level: 1, name: 'Slug checks' }).waitFor();
  await page.getByLabel('Scenarios to generate').fill('2');
  await page.getByRole('button', { name: 'Generate scenarios' }).click();
  const note = page.getByRole('status').filter({ hasText: /generated/ });
  await note.waitFor({ timeout: 60_000 }).catch(async (e) => {
    await page.screenshot({ path: '/tmp/batches-debug.png', fullPage: true });
    throw e;
  });
  const scenarioRows = page.getByRole('table', { name: 'Scenarios of this collection' }).locator('tbody tr');
  await t.notThrowsAsync(() => page.waitForFunction(() => document.querySelectorAll('table tbody tr').length >= 2));
  const listed = await scenarioRows.count();
  t.true(listed >= 2, `the generated scenarios are listed (${listed})`);

  await page.getByLabel('Runs of each scenario').selectOption('3');
  await page.getByRole('button', { name: 'Run all' }).click();
  await page.waitForURL(/\/scenario-batches\/[0-9a-f-]+$/);
  const firstBatch = page.url().split('/').pop()!;
  const summary = page.getByTestId('batch-summary');
  await summary.waitFor({ timeout: 180_000 });
  t.regex(await summary.innerText(), /Pass rate \d+%/);
  const matrix = page.getByRole('table', { name: /Each scenario's runs/ });
  t.is(await matrix.locator('thead th').count(), 1 + 3 + 1, 'a column per run of the three, beside the scenario and its pass rate');
  const failingRow = matrix.locator(`tr[data-scenario="${failing.id}"]`);
  t.is(await failingRow.locator('td .cell').count(), 3);
  t.regex(await failingRow.innerText(), /Always sunny[\s\S]*fail[\s\S]*fail[\s\S]*fail[\s\S]*0%/);
  t.true(await page.getByRole('heading', { name: 'Tokens and cost' }).isVisible());
  await checkAccessibility(t, page, 'batch');
  await shots(page, 'batches-report');

  // A second batch: the trend has two points, and the comparison opens from the page.
  await page.goto(`${svc.url}/collections/${col.uid}`);
  await page.getByRole('heading', { level: 1, name: 'Slug checks' }).waitFor();
  await page.getByRole('button', { name: 'Run all' }).click();
  await page.waitForURL((u) => /\/scenario-batches\/[0-9a-f-]+$/.test(u.pathname) && !u.pathname.endsWith(firstBatch));
  await page.getByTestId('batch-summary').waitFor({ timeout: 180_000 });
  // The trend is read again once the batch is done; until that answer arrives the page still shows the one before.
  const caption = page.locator('#trend-cap', { hasText: /last 2 finished batches/ });
  await caption.waitFor({ timeout: 30_000 });
  t.regex(await caption.innerText(), /last 2 finished batches/);
  await page.getByRole('link', { name: /Compare with the batch before/ }).click();
  await page.getByRole('heading', { level: 1, name: 'Two batches side by side' }).waitFor();
  t.regex(await page.getByTestId('compare-summary').innerText(), /\d+ regressions?, \d+ improvements?/);
  t.is(await page.locator(`tr[data-change]`).count(), listed, 'every scenario is compared');
  await checkAccessibility(t, page, 'compare');
  await shots(page, 'batches-compare');

  t.deepEqual(refused, [], 'no request was refused by the rate limit');
  t.deepEqual(problems, []);
  await context.close();
});
