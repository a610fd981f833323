/**
 * The operator's page in Chromium (issue 26, item 4), against the real service: a wrong admin token is refused and
 * asked for again; the right one shows the live worker with the execution it runs, the queue with a waiting job's
 * age, a failure by its code, the last hour's chart; the page follows the service by itself (a new failure appears
 * without a reload) and never meets a 429. Screenshots at desktop and phone width; nothing wider than the phone.
 */
import test from 'ava';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { FIXTURES_DIR, type Service } from '../helpers/service.js';
import { checkAccessibility, screenshot, startWebService, watchPage } from './helpers.js';

let svc: Service;
let browser: Browser;
const DESKTOP = { width: 1366, height: 900 };
const PHONE = { width: 390, height: 844 };

test.before(async () => {
  ({ svc, browser } = await startWebService({ packages: [path.join(FIXTURES_DIR, 'packages', 'echo-tools')] }));
});
test.after.always(async () => {
  await browser?.close();
  await svc?.close();
});

const execute = (tool: string, params: unknown, query = '') =>
  svc.request('POST', `/api/tools/execute/@fixtures/echo-tools/${tool}${query}`, { body: { params, env: { ECHO_SECRET: 'operator-page-secret' } } });

test('the operator signs in with the admin token and watches workers, queue, failures and the last hour live', async (t) => {
  const page = await (await browser.newContext({ viewport: DESKTOP })).newPage();
  const problems = watchPage(page);
  const refused: string[] = [];
  page.on('response', (r) => r.status() === 429 && refused.push(new URL(r.url()).pathname));

  await page.goto(`${svc.url}/operator`);
  await page.getByLabel('Admin token').fill('not-the-token');
  await page.getByRole('button', { name: 'Show operations' }).click();
  await page.getByText('That token was refused').waitFor();
  await checkAccessibility(t, page, 'operator sign-in');

  t.like((await execute('failWithSecret', {})).body, { success: false });
  await svc.api.deps.db.raw(`select graphile_worker.add_job('operator_probe', '{}'::json, run_at => now() - interval '3 minutes')`);
  t.is((await execute('sleepy', { ms: 30_000 }, '?wait=false')).status, 202);

  await page.getByLabel('Admin token').fill(svc.config.ADMIN_TOKEN!);
  await page.getByRole('button', { name: 'Show operations' }).click();
  await page.getByRole('heading', { name: 'Workers' }).waitFor();
  // The heartbeat lists the running execution within a few seconds; the page shows it on a later refresh.
  await page.getByRole('cell', { name: /execute_tool #\d+ \(attempt 1/ }).waitFor({ timeout: 60_000 });
  await t.notThrowsAsync(page.getByRole('cell', { name: 'alive' }).first().waitFor());
  const probeRow = page.getByRole('row', { name: /operator_probe/ });
  await probeRow.waitFor();
  t.regex(await probeRow.innerText(), /operator_probe\s+1\s+3 min/);
  await page
    .getByRole('cell', { name: /execution of failWithSecret/ })
    .first()
    .waitFor();
  t.regex(await page.locator('#hour-cap').innerText(), /In the last hour: \d+ executions? finished \(\d+ succeeded, [1-9]\d* failed\)/);
  await checkAccessibility(t, page, 'operator page');

  // A new failure shows up by itself.
  const before = await page.getByRole('cell', { name: /execution of failWithSecret/ }).count();
  t.like((await execute('failWithSecret', {})).body, { success: false });
  await page.waitForFunction(
    (n) =>
      document.querySelectorAll('td').length > 0 &&
      [...document.querySelectorAll('td')].filter((td) => /execution of failWithSecret/.test(td.textContent ?? '')).length > n,
    before,
    {
      timeout: 30_000,
    },
  );
  t.false((await page.content()).includes('operator-page-secret'), 'no env value on the page');

  for (const [size, label] of [
    [PHONE, '390'],
    [DESKTOP, '1366'],
  ] as const) {
    await page.setViewportSize(size);
    await screenshot(page, `operator-${label}`);
    if (size === PHONE) t.true((await page.evaluate(() => document.documentElement.scrollWidth)) <= PHONE.width + 1, 'no wider than the phone');
  }

  // The token stays in the tab only; forgetting it asks again.
  await page.getByRole('button', { name: 'Forget the token' }).click();
  await page.getByLabel('Admin token').waitFor();
  t.is(await page.evaluate(() => sessionStorage.getItem('toolshed.adminToken')), null);
  t.deepEqual(refused, [], 'the page never met a 429');
  t.deepEqual(problems, []);
  await svc.api.deps.db.raw(
    `delete from graphile_worker._private_jobs where task_id = (select id from graphile_worker._private_tasks where identifier = 'operator_probe')`,
  );
});
