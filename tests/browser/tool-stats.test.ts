/**
 * A tool's reliability on its page (issue 26, item 3), in Chromium against the real service (Postgres, worker,
 * gVisor): after real calls that succeed and throw, the panel shows calls, success rate, run times and the top error
 * code for 24 h / 7 d / 30 d, and the chart of calls per day; nothing overflows a phone's width. Screenshots at
 * 1366×900 and 390×844; axe on the page.
 */
import test from 'ava';
import path from 'node:path';
import crypto from 'node:crypto';
import { finishExecution } from '../../core/repos/executions.js';
import type { Browser } from 'playwright-core';
import { EXAMPLES_DIR, type Service } from '../helpers/service.js';
import { checkAccessibility, screenshot, SCREENSHOTS, startWebService, watchPage } from './helpers.js';

let svc: Service;
let browser: Browser;
const DESKTOP = { width: 1366, height: 900 };
const PHONE = { width: 390, height: 844 };
const COLOR = '@toolshed-examples/color-tools/convertColor';

test.before(async () => {
  ({ svc, browser } = await startWebService({ packages: [path.join(EXAMPLES_DIR, 'color-tools')] }));
});
test.after.always(async () => {
  await browser?.close();
  await svc?.close();
});

test.serial('the tool page shows its calls, success rate, run times and top error over 24 h, 7 d and 30 d, with a chart', async (t) => {
  for (const color of ['#1e90ff', 'not a colour', 'rgb(1, 2, 3)', 'nor this', 'dodgerblue']) {
    const res = await svc.request('POST', `/api/tools/execute/${COLOR}`, { body: { params: { color } } });
    t.is(res.status, 200, res.text);
  }
  // And one call the platform failed (its worker lost): a call, but not the tool's failure.
  const db = svc.api.deps.db;
  const tool = (await svc.request('GET', `/api/tools/${COLOR}`)).body.data;
  const [worker] = await db('workers').select('id').orderBy('started_at', 'desc').limit(1);
  const lost = crypto.randomUUID();
  await db('executions').insert({
    id: lost,
    tool_id: tool.id,
    origin: 'api',
    status: 'running',
    worker_id: worker!.id,
    heartbeat_at: db.fn.now(),
    attempts: 1,
  });
  t.true(await finishExecution(db, lost, { status: 'failed', executionTimeMs: null, error: { code: 'WORKER_LOST', message: 'x' } }));
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  const problems = watchPage(page);
  await page.goto(`${svc.url}/tools/${COLOR}`);
  const panel = page.getByRole('region', { name: 'Reliability' });
  const table = panel.getByRole('table', { name: /Calls, success rate/ });
  await table.waitFor();
  for (const label of ['24 hours', '7 days', '30 days']) {
    const cells = await table
      .getByRole('row', { name: new RegExp(`^${label}`) })
      .getByRole('cell')
      .allTextContents();
    t.is(cells[0], '6', `${label}: calls`);
    t.is(cells[1], '60% (1 platform failure left out)', `${label}: success of the 5 calls the tool decided`);
    t.regex(cells[2]!, /^\d+(\.\d)?\u00a0m?s \/ \d+(\.\d)?\u00a0m?s$/, `${label}: p50 / p95 (a figure and its unit on one line)`);
    t.is(cells[3], 'TOOL_ERROR\u00a0×2, WORKER_LOST\u00a0×1', `${label}: top errors`);
  }
  const chart = panel.getByRole('img', { name: /Calls per day over the last 30 days/ });
  t.regex((await chart.getAttribute('aria-labelledby')) ?? '', /daily-cap/);
  t.regex((await panel.locator('figcaption').textContent()) ?? '', /6 calls in all, at most 6 on \d{4}-\d{2}-\d{2}/);
  t.is(await chart.locator('rect.failed').count(), 30, 'a bar for each of thirty days');
  await checkAccessibility(t, page, 'tool page with reliability');
  await screenshot(page, 'tool-stats-1366');
  await panel.screenshot({ path: path.join(SCREENSHOTS, 'tool-stats-panel-1366.png') });
  await page.setViewportSize(PHONE);
  await screenshot(page, 'tool-stats-390');
  await panel.screenshot({ path: path.join(SCREENSHOTS, 'tool-stats-panel-390.png') });
  const wide = await page.evaluate(() => document.documentElement.scrollWidth);
  t.true(wide <= PHONE.width, `the page is ${wide} px wide at ${PHONE.width}`);
  t.deepEqual(problems, []);
  await context.close();
});

test.serial('tool cards in trending and in the list say how many calls each had in 7 days and how many succeeded', async (t) => {
  const page = await browser.newPage({ viewport: DESKTOP });
  const problems = watchPage(page);
  const card = (scope: ReturnType<typeof page.locator>) => scope.locator('li.card', { has: page.getByRole('link', { name: 'convertColor', exact: true }) });
  await page.goto(`${svc.url}/`);
  const trending = card(page.getByRole('region', { name: 'Trending tools' }));
  await trending.waitFor();
  // The six calls of the test before: three succeeded of the five the tool decided (the platform's failure left out).
  t.is((await trending.getByTestId('calls-note').textContent())?.trim(), '· 6 calls in 7 days, 60% succeeded');
  // A tool nobody called says so, instead of the same card as every other.
  const quiet = page
    .getByRole('region', { name: 'Trending tools' })
    .locator('li.card', { hasNot: page.getByRole('link', { name: 'convertColor', exact: true }) });
  if ((await quiet.count()) > 0) t.is((await quiet.first().getByTestId('calls-note').textContent())?.trim(), '· no calls in 7 days');
  await page.goto(`${svc.url}/search?category=${encodeURIComponent((await svc.request('GET', `/api/tools/${COLOR}`)).body.data.package.category)}`);
  const listed = card(page.getByRole('list', { name: 'Tools' }));
  await listed.waitFor();
  t.is((await listed.getByTestId('calls-note').textContent())?.trim(), '· 6 calls in 7 days, 60% succeeded');
  await screenshot(page, 'tool-cards-calls-1366');
  // The figures' request takes tool ids only: anything else is a 400 in the contract's shape.
  for (const ids of ['', 'not-an-id', Array.from({ length: 101 }, () => crypto.randomUUID()).join(',')]) {
    const bad = await svc.request('GET', `/api/tools/reliability?ids=${ids}`);
    t.is(bad.status, 400, `ids=${ids.slice(0, 40)}: ${bad.text}`);
    t.is(bad.body.success, false);
  }
  t.deepEqual(problems, []);
  await page.close();
});
