/**
 * "Healthy" is a claim (issue 47 item 2): a tool that loads, describes and passes its import check but whose calls
 * fail (as server-memory's create_entities did, writing beside itself on the read-only package) is not shown
 * healthy on its page once its calls say so; a tool whose calls work still is. Chromium against the real service.
 */
import test from 'ava';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { FIXTURES_DIR, type Service } from '../helpers/service.js';
import { screenshot, startWebService, watchPage } from './helpers.js';

let svc: Service;
let browser: Browser;
const PKG = '@fixtures/call-fails';

test.before(async () => {
  ({ svc, browser } = await startWebService({ packages: [path.join(FIXTURES_DIR, 'packages', 'call-fails')] }));
});
test.after.always(async () => {
  await browser?.close();
  await svc?.close();
});

const run = (tool: string) => svc.request('POST', `/api/tools/execute/${PKG}/${tool}`, { body: { params: { text: 'a note' } } });

test('a tool whose calls fail is shown failing, not healthy; one whose calls work stays healthy', async (t) => {
  const detail = await svc.request('GET', `/api/tools/${PKG}/saveNote`);
  t.is(detail.body.data.healthStatus, 'HEALTHY', 'its import check passed: only its calls tell');
  for (let i = 0; i < 3; i++) t.regex((await run('saveNote')).text, /EACCES/, 'each call fails');
  t.is((await run('readNote')).status, 200);

  const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await context.newPage();
  const problems = watchPage(page);
  await page.goto(`${svc.url}/tools/${PKG}/saveNote`);
  const failing = page.getByTestId('calls-failing');
  await failing.waitFor();
  t.regex((await failing.textContent()) ?? '', /Failing in calls: 3 of 3 failed in 7 days \(TOOL_ERROR\)/);
  t.false(/✓\s*Healthy/.test((await page.locator('.page-head .meta').textContent()) ?? ''), 'no Healthy beside it');
  await screenshot(page, 'tool-health-failing-1366');

  await page.goto(`${svc.url}/tools/${PKG}/readNote`);
  await page.getByRole('heading', { name: 'readNote' }).waitFor();
  await page.locator('.page-head .meta .badge.health-healthy').waitFor();
  t.is(await page.getByTestId('calls-failing').count(), 0);
  t.deepEqual(problems, []);
  await context.close();
});
