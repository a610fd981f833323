/**
 * A collection held on a version (issue 43 item 3) in the web app, in Chromium against the real service and a scratch
 * npm registry: its page names the change of the new version that needs review (network gained), the tool stays on
 * the version it had, and the owner's Accept moves it to the new one and clears the notice. Screenshots at 1366×900
 * and 390×844; axe on the page.
 */
import test from 'ava';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { startScratchRegistry, type ScratchRegistry } from '../helpers/npm-registry.js';
import type { Service } from '../helpers/service.js';
import { checkAccessibility, screenshot, signUpInBrowser, startWebService, watchPage, write } from './helpers.js';

let svc: Service;
let browser: Browser;
let registry: ScratchRegistry;
let root: string;
const PKG = 'held-web-tools';

async function folder(version: string, network: boolean): Promise<string> {
  const dir = await fs.mkdtemp(path.join(root, 'pkg-'));
  const tools = [{ exportName: 'echo', permissions: network ? { network: true } : {} }];
  await fs.writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: PKG, version, main: 'index.js', toolshed: { category: 'text-analysis', tools } }));
  await fs.writeFile(
    path.join(dir, 'index.js'),
    `exports.echo = { description: 'Echoes its text.', inputSchema: { type: 'object', properties: { text: { type: 'string' } } }, execute: ({ text }) => ({ text }) };\n`,
  );
  return dir;
}

test.before(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'toolshed-held-web-'));
  registry = await startScratchRegistry();
  await registry.add(PKG, '1.0.0', await folder('1.0.0', false));
  await registry.add(PKG, '2.0.0', await folder('2.0.0', true));
  ({ svc, browser } = await startWebService({ env: { NPM_USERCONFIG: registry.npmrc } }));
});
test.after.always(async () => {
  await browser?.close();
  await svc?.close();
  await registry?.close();
  if (root) await fs.rm(root, { recursive: true, force: true });
});

/** The collection's tool as the API describes it to the page's user. */
const served = (page: Page, uid: string) => page.evaluate(async (uid) => (await (await fetch(`/api/collections/${uid}`)).json()).data.tools[0], uid);

test('the collection page names the change that holds it, and the owner accepts it', async (t) => {
  const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await context.newPage();
  const problems = watchPage(page);
  await signUpInBrowser(page, svc.url, 'nina');
  const v1 = await write(page, 'POST', '/api/packages', { source: `npm:${PKG}@1.0.0` });
  t.truthy(v1.data, JSON.stringify(v1));
  const c = await write(page, 'POST', '/api/collections', { name: 'Held tools' });
  await write(page, 'POST', `/api/collections/${c.data.uid}/tools`, { toolId: `${PKG}::echo` });
  const v2 = await write(page, 'POST', '/api/packages', { source: `npm:${PKG}@2.0.0` });
  t.truthy(v2.data, JSON.stringify(v2));

  // The owner's list says it too.
  await page.goto(`${svc.url}/collections`);
  const mine = page.getByRole('region', { name: 'Your collections' }).getByTestId('collection-notice-count');
  await mine.waitFor();
  t.regex((await mine.textContent()) ?? '', /Changes to review: held-web-tools 2\.0\.0/);

  await page.goto(`${svc.url}/collections/${c.data.uid}`);
  const notice = page.getByTestId('collection-notices');
  await notice.waitFor();
  t.regex((await notice.textContent()) ?? '', /held-web-tools 2\.0\.0 changes .* stays on 1\.0\.0 until you accept it/);
  t.regex((await notice.getByRole('listitem').allTextContents()).join('\n'), /echo: network access gained/);
  t.is((await served(page, c.data.uid)).version, '1.0.0');
  await checkAccessibility(t, page, 'collection with a notice');
  await screenshot(page, 'collection-notice-1366');
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, 'collection-notice-390');
  const wide = await page.evaluate(() => document.documentElement.scrollWidth);
  t.true(wide <= 390, `the page is ${wide} px wide at 390`);
  await page.setViewportSize({ width: 1366, height: 900 });

  await notice.getByRole('button', { name: 'Accept 2.0.0 of held-web-tools' }).click();
  await notice.waitFor({ state: 'detached' });
  t.like(await served(page, c.data.uid), { version: '2.0.0', pinned: false });
  t.deepEqual(problems, []);
});
