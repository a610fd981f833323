/**
 * A tool flagged for possible poisoning (issue 43 item 4) in the web app, in Chromium against the real service: its
 * page warns with each finding, its search card carries the badge, a clean tool shows neither; nothing overflows a
 * phone's width. Screenshots at 1366×900 and 390×844; axe on the page.
 */
import test from 'ava';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { FIXTURES_DIR, type Service } from '../helpers/service.js';
import { checkAccessibility, screenshot, startWebService, watchPage } from './helpers.js';

let svc: Service;
let browser: Browser;
const PKG = '@fixtures/poisoned-tools';

test.before(async () => {
  ({ svc, browser } = await startWebService({ packages: [path.join(FIXTURES_DIR, 'packages', 'poisoned-tools')] }));
});
test.after.always(async () => {
  await browser?.close();
  await svc?.close();
});

test('a flagged tool is shown with a warning on its page and its card; a clean one without', async (t) => {
  const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await context.newPage();
  const problems = watchPage(page);
  await page.goto(`${svc.url}/tools/${PKG}/addNumbers`);
  const warning = page.getByRole('alert').filter({ hasText: 'may be poisoned' });
  await warning.waitFor();
  t.regex((await warning.textContent()) ?? '', /instructions aimed at the model, asks for sensitive data/);
  t.regex((await warning.getByRole('listitem').allTextContents()).join('\n'), /secret-files: description: .*~\/\.ssh\/id_rsa/);
  await checkAccessibility(t, page, 'flagged tool page');
  await screenshot(page, 'tool-risks-1366');
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, 'tool-risks-390');
  const wide = await page.evaluate(() => document.documentElement.scrollWidth);
  t.true(wide <= 390, `the page is ${wide} px wide at 390`);
  await page.setViewportSize({ width: 1366, height: 900 });

  await page.goto(`${svc.url}/tools/${PKG}/countVowels`);
  await page.getByRole('heading', { name: 'countVowels' }).waitFor();
  t.is(await page.getByTestId('tool-risks').count(), 0);

  await page.goto(`${svc.url}/search?q=${encodeURIComponent('add numbers count vowels')}`);
  const cards = page.getByRole('list', { name: 'Tools, best match first' }).getByRole('listitem');
  await cards.first().waitFor();
  const flagged = cards.filter({ has: page.getByRole('link', { name: 'addNumbers' }) });
  t.regex((await flagged.getByTestId('risk-badge').textContent()) ?? '', /Possible poisoning/);
  const order = await cards.getByRole('heading').allTextContents();
  t.true(order.indexOf('countVowels') < order.indexOf('addNumbers'), `ranked lower: ${order.join(', ')}`);
  t.is(
    await cards
      .filter({ has: page.getByRole('link', { name: 'countVowels' }) })
      .getByTestId('risk-badge')
      .count(),
    0,
  );
  await screenshot(page, 'tool-risks-search-1366');
  t.deepEqual(problems, []);
  await context.close();
});
