/**
 * An MCP server's start-up rules on its package page (issue 46 item 1: "records in the import which rules fired and
 * why (shown in the import's status and the package page)"), in Chromium against the real service (process sandbox):
 * a server that starts only with its `stdio` command (fixture mode `cli-stderr`, as @pipedream/mcp) shows "How it was
 * started" with the rule `stdio-command` and its reason; a package of JS tools shows no such section.
 * Screenshot at 1366×850.
 */
import test from 'ava';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { EXAMPLES_DIR, type Service } from '../helpers/service.js';
import { mcpFixturePackage } from '../helpers/mcp-fixture.js';
import { checkAccessibility, screenshot, startWebService, watchPage } from './helpers.js';

let svc: Service;
let browser: Browser;
let root: string;
const href = (name: string) => `/packages/${name.split('/').map(encodeURIComponent).join('/')}`;

test.before(async (t) => {
  t.timeout(300_000, 'an MCP fixture and an example package imported on a loaded machine');
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'toolshed-startup-page-'));
  const server = await mcpFixturePackage(root, 'cli-stderr', { bare: true });
  ({ svc, browser } = await startWebService({ packages: [server, path.join(EXAMPLES_DIR, 'text-tools')] }));
});
test.after.always(async () => {
  await browser?.close();
  await svc?.close();
  if (root) await fs.rm(root, { recursive: true, force: true });
});

test('an MCP server started with its `stdio` command shows that rule and why on its package page; a JS package shows none', async (t) => {
  const page = await browser.newPage({ viewport: { width: 1366, height: 850 } });
  const problems = watchPage(page);

  await page.goto(`${svc.url}${href('@fixtures/mcp-cli-stderr')}`);
  const section = page.getByRole('region', { name: 'How it was started' });
  await section.waitFor();
  const rules = await section.getByTestId('startup-rules').locator('li').allTextContents();
  t.true(
    rules.some((r) => r.startsWith('stdio-command:') && r.includes('names the command stdio')),
    `the rule and its reason: ${JSON.stringify(rules)}`,
  );
  t.regex((await section.textContent()) ?? '', /in 2 starts/);
  await checkAccessibility(t, page, 'MCP package page');
  await screenshot(page, 'startup-mcp-package-1366');

  const textTools = JSON.parse(await fs.readFile(path.join(EXAMPLES_DIR, 'text-tools', 'package.json'), 'utf8')).name as string;
  await page.goto(`${svc.url}${href(textTools)}`);
  await page.getByRole('heading', { level: 1, name: textTools }).waitFor();
  await page.getByRole('heading', { name: 'README' }).waitFor();
  t.is(await page.getByTestId('startup').count(), 0, 'no start-up section for a package of JS tools');

  t.deepEqual(problems, []);
  await page.close();
});
