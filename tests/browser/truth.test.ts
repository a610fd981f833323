/**
 * The web app tells the truth (issue 47), in Chromium against the real service (process sandbox, offline provider):
 * the batch comparison runs from the older batch to the newer; "What it may do" claims only what is declared; a new
 * collection is private and its page shows and pins each tool's version; a signed-in person browsing fast meets no
 * 429 at the tier's real limit; the curl call sends what the form holds; a failed pill is red, this batch's 100 % point
 * is not, and column headers break between words only. Screenshots at 1366×850 and 390×844.
 */
import test from 'ava';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { EXAMPLES_DIR, FIXTURES_DIR, type Service } from '../helpers/service.js';
import { checkAccessibility, shots, signUpInBrowser, startWebService, watchPage, write } from './helpers.js';

let svc: Service;
let browser: Browser;
const DESKTOP = { width: 1366, height: 850 };
const PHONE = { width: 390, height: 844 };

test.before(async () => {
  // The free tier's real limits (60 a minute): the browsing test is about them.
  ({ svc, browser } = await startWebService({
    env: { RATE_LIMIT_FREE_MINUTE: '60', RATE_LIMIT_FREE_DAY: '1000' },
    packages: [
      path.join(EXAMPLES_DIR, 'text-tools'),
      path.join(EXAMPLES_DIR, 'data-tools'),
      path.join(FIXTURES_DIR, 'packages', 'versioned-v1'),
      path.join(FIXTURES_DIR, 'packages', 'versioned-v2'),
    ],
  }));
});
test.after.always(async () => {
  await browser?.close();
  await svc?.close();
});

/** Words of the elements `selector` finds that are laid out across two lines (broken inside the word). */
function brokenWords(page: Page, selector: string): Promise<string[]> {
  return page.locator(selector).evaluateAll((els) =>
    els.flatMap((el) => {
      const out: string[] = [];
      for (let w = document.createTreeWalker(el, NodeFilter.SHOW_TEXT), n = w.nextNode(); n; n = w.nextNode()) {
        const text = n.textContent ?? '';
        for (const m of text.matchAll(/\S+/g)) {
          const range = document.createRange();
          range.setStart(n, m.index);
          range.setEnd(n, m.index + m[0].length);
          const tops = new Set([...range.getClientRects()].filter((r) => r.width > 1).map((r) => Math.round(r.top)));
          if (tops.size > 1) out.push(m[0]);
        }
      }
      return out;
    }),
  );
}

const isRed = (rgb: string) => {
  const [r, g, b] = (rgb.match(/\d+/g) ?? []).map(Number);
  return r! > g! + 60 && r! > b! + 60;
};

test.serial('the comparison runs from the older batch to the newer: an added scenario is "added", a pass turned fail a regression', async (t) => {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  const problems = watchPage(page);
  await signUpInBrowser(page, svc.url, 'comparer');
  const col = (await write(page, 'POST', '/api/collections', { name: 'Compare slugs', isPublic: false })).data;
  await write(page, 'POST', `/api/collections/${col.uid}/tools`, { toolId: '@toolshed-examples/text-tools::slugify' });
  const kept = (
    await write(page, 'POST', '/api/scenarios', {
      collectionId: col.id,
      name: 'Kept scenario',
      prompt: 'Slugify "Rainy Day" with slugify',
      assertions: [{ type: 'toolCalled', tool: 'slugify' }],
    })
  ).data;
  const first = (await write(page, 'POST', `/api/collections/${col.uid}/scenarios/run-all`, { repeat: 1 })).data.batchId;
  await page.goto(`${svc.url}/scenario-batches/${first}`);
  await page.getByTestId('batch-summary').waitFor({ timeout: 120_000 });
  t.regex(await page.getByTestId('batch-summary').innerText(), /Pass rate 100%/, 'the first batch passes');
  const point = page.locator('.trend circle.point.current');
  t.false(isRed(await point.evaluate((c) => getComputedStyle(c).fill)), 'a 100 % point is not drawn red');

  // Between the batches: a scenario is added, and the kept one now fails.
  const added = (
    await write(page, 'POST', '/api/scenarios', {
      collectionId: col.id,
      name: 'Added scenario',
      prompt: 'Make a slug of "Sunny Side Up" with slugify',
      assertions: [{ type: 'toolCalled', tool: 'slugify' }],
    })
  ).data;
  await write(page, 'PATCH', `/api/scenarios/${kept.id}`, { assertions: [{ type: 'outputContains', text: 'never in any answer' }] });
  const second = (await write(page, 'POST', `/api/collections/${col.uid}/scenarios/run-all`, { repeat: 3 })).data.batchId;
  await page.goto(`${svc.url}/scenario-batches/${second}`);
  const summary = page.getByTestId('batch-summary').filter({ hasText: /since the batch before/ });
  await summary.waitFor({ timeout: 120_000 });
  t.regex(await summary.innerText(), /1 regression since the batch before/);
  t.true(await page.locator(`tr[data-scenario="${kept.id}"]`).getByText('regressed').isVisible());
  await page.setViewportSize(PHONE);
  t.deepEqual(await brokenWords(page, 'thead th'), [], 'the matrix headers break between words only ("Run 1", not "Ru/n 1")');
  await page.setViewportSize(DESKTOP);

  await page.getByRole('link', { name: /Compare with the batch before/ }).click();
  await page.getByRole('heading', { level: 1, name: 'Two batches side by side' }).waitFor();
  const row = (id: string) => page.locator('tr[data-change]').filter({ has: page.locator(`a[href="/scenarios/${id}"]`) });
  t.is(await row(added.id).getAttribute('data-change'), 'added');
  t.is(await row(kept.id).getAttribute('data-change'), 'regression');
  const cells = await row(kept.id).locator('td').allInnerTexts();
  t.deepEqual(cells.slice(0, 2), ['100%', '0%'], 'Before holds the older batch (passed), After the newer (failed)');
  const firstAt = (await (await page.request.get(`${svc.url}/api/scenario-batches/${first}`)).json()).data.createdAt;
  const when = await page.evaluate((iso) => new Date(iso).toLocaleString(), firstAt);
  const head = await page.locator('.page-head .pkg').innerText();
  t.true(head.startsWith(`Before: ${when} (100%) · After:`), `"Before" is the first batch: ${head}`);
  t.regex(await page.getByTestId('compare-summary').innerText(), /1 regression, 0 improvements.*1 added/);
  await checkAccessibility(t, page, 'compare');
  await shots(page, 'truth-compare');
  await page.setViewportSize(PHONE);
  t.true((await page.evaluate(() => document.documentElement.scrollWidth)) <= PHONE.width, 'the comparison fits a phone');
  t.deepEqual(await brokenWords(page, 'td .badge'), [], 'a change stays one word');
  t.deepEqual(problems, []);
  await context.close();
});

test.serial('"What it may do" claims only what the package declares; otherwise "not declared"', async (t) => {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  // data-tools declares no permissions: no network is not taken to mean read-only or idempotent.
  await page.goto(`${svc.url}/tools/@toolshed-examples/data-tools/csvToJson`);
  const list = page.getByRole('list', { name: 'What it may do' });
  await list.waitFor();
  const undeclared = await list.innerText();
  t.regex(undeclared, /Network access: none/);
  t.regex(undeclared, /Read-only: not declared/);
  t.regex(undeclared, /Destructive: not declared/);
  t.regex(undeclared, /Idempotent: not declared/);
  t.notRegex(undeclared, /Read-only: yes|Idempotent: yes|^Read-only$/m);
  await shots(page, 'truth-tool-undeclared');
  // text-tools declares slugify readOnly and idempotent.
  await page.goto(`${svc.url}/tools/@toolshed-examples/text-tools/slugify`);
  await page.getByRole('heading', { level: 1, name: 'slugify' }).waitFor();
  const declared = await list.innerText();
  t.regex(declared, /Read-only: yes.*\(declared\)/);
  t.regex(declared, /Destructive: no/);
  t.regex(declared, /Idempotent: yes.*\(declared\)/);
  await context.close();
});

test.serial("a new collection is private unless ticked; its page shows each tool's version and pins one", async (t) => {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  const problems = watchPage(page);
  await signUpInBrowser(page, svc.url, 'pinner');
  await page.goto(`${svc.url}/collections`);
  const box = page.getByRole('checkbox', { name: /^Public/ });
  await box.waitFor();
  t.false(await box.isChecked(), 'the public box is not pre-ticked');
  await page.getByLabel('Name').fill('Pinned greetings');
  await page.getByRole('button', { name: 'Create collection' }).click();
  await page.getByRole('heading', { level: 1, name: 'Pinned greetings' }).waitFor();
  t.regex(await page.locator('.page-head .pkg').innerText(), /private/);
  const uid = page.url().split('/').pop()!;
  await write(page, 'POST', `/api/collections/${uid}/tools`, { toolId: 'toolshed-fixture-versioned::greet' });
  await page.reload();
  const entry = page.locator('li[data-tool="toolshed-fixture-versioned::greet"]');
  await entry.waitFor();
  t.regex(await entry.getByTestId('tool-version').innerText(), /v2\.0\.0 · follows the latest/);
  await page.getByLabel('Version of greet').selectOption('1.0.0');
  const pinned = page.locator('li[data-tool="toolshed-fixture-versioned@1.0.0::greet"]');
  await pinned.waitFor();
  t.regex(await pinned.getByTestId('tool-version').innerText(), /v1\.0\.0 · pinned/);
  const detail = (await (await page.request.get(`${svc.url}/api/collections/${uid}`)).json()).data;
  t.like(detail.tools[0], { version: '1.0.0', pinned: true });
  await checkAccessibility(t, page, 'collection with versions');
  await shots(page, 'truth-collection-pinned');
  // Back to following the latest.
  await page.getByLabel('Version of greet').selectOption('');
  await entry.waitFor();
  t.regex(await entry.getByTestId('tool-version').innerText(), /v2\.0\.0 · follows the latest/);
  t.deepEqual(problems, []);
  await context.close();
});

test.serial('a signed-in person loading five pages twenty times in quick succession meets no 429', async (t) => {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  await signUpInBrowser(page, svc.url, 'browser_fast');
  const refused: string[] = [];
  let reads = 0;
  page.on('response', (r) => {
    const u = new URL(r.url());
    if (u.pathname.startsWith('/api/')) reads++;
    if (r.status() === 429) refused.push(u.pathname + u.search);
  });
  const started = Date.now();
  for (let round = 0; round < 20; round++) {
    for (const p of ['/', '/search?q=csv', '/collections', '/settings', '/scenarios']) await page.goto(`${svc.url}${p}`, { waitUntil: 'networkidle' });
  }
  t.log(`100 page loads, ${reads} API reads in ${Math.round((Date.now() - started) / 1000)} s`);
  t.true(reads > 60, `more reads (${reads}) than the free tier's 60 a minute`);
  t.deepEqual(refused, [], 'no read of the app was refused');
  // Still signed in, and an API key's budget is the tier's (60), not the app's.
  t.true(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'browser_fast' }).isVisible());
  const user = await svc.createUser({});
  const res = await fetch(`${svc.url}/api/tools?limit=1`, { headers: { authorization: `Bearer ${user.key}` } });
  t.is(res.headers.get('x-ratelimit-limit'), '60');
  await context.close();
});

test.serial('the curl call sends what the form holds, says which headers it needs, and returns what Run returned', async (t) => {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  await page.goto(`${svc.url}/tools/@toolshed-examples/data-tools/csvToJson`);
  await page.getByRole('heading', { level: 1, name: 'csvToJson' }).waitFor();
  await page.locator('textarea[name="csv"]').fill('name,qty\nbolt,3\nnut,5');
  await page.locator('input[name="inferTypes"]').check();
  await page.getByRole('button', { name: 'Run' }).click();
  const result = page.getByTestId('execution-result');
  await result.waitFor({ timeout: 60_000 });
  t.regex(await result.locator('h3').innerText(), /succeeded/);
  const shown = JSON.parse(await result.locator('pre').first().innerText());
  t.deepEqual(shown.rows, [
    { name: 'bolt', qty: 3 },
    { name: 'nut', qty: 5 },
  ]);
  const use = page.getByRole('region', { name: 'Use it from code' });
  const snippet = await use.locator('pre').first().innerText();
  t.notRegex(snippet, /Authorization/, 'the route needs no key, so the call shows none');
  t.regex(await use.getByTestId('curl-note').innerText(), /Authorization: Bearer \$TOOLSHED_API_KEY is optional: without it the call is anonymous/);
  // Run by bash as copied, with real curl (asynchronously: the service answers from this process).
  const { stdout } = await promisify(execFile)('bash', ['-c', `${snippet} --silent`], { encoding: 'utf8', env: { PATH: process.env.PATH } });
  const out = JSON.parse(stdout);
  t.true(out.success, JSON.stringify(out));
  t.deepEqual(out.result, shown, 'curl returned what Run showed');
  await shots(page, 'truth-tool-curl');
  await context.close();
});

test.serial("a failed run's pill is red; the packages table's headers break between words only", async (t) => {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  await page.goto(`${svc.url}/tools/@toolshed-examples/data-tools/csvToJson`);
  await page.getByRole('heading', { level: 1, name: 'csvToJson' }).waitFor();
  await page.locator('textarea[name="csv"]').fill('a,b\n1');
  await page.getByRole('button', { name: 'Run' }).click();
  await page.getByTestId('execution-result').waitFor({ timeout: 60_000 });
  const pill = page.getByRole('list', { name: 'Execution status' }).getByText('failed', { exact: true });
  t.true(isRed(await pill.evaluate((el) => getComputedStyle(el).color)), 'the failed pill is red');
  await shots(page, 'truth-tool-failed');
  await page.goto(`${svc.url}/packages`);
  await page.getByRole('table').first().waitFor();
  t.deepEqual(await brokenWords(page, 'thead th'), [], 'no header breaks inside a word ("Publish/er")');
  await context.close();
});

test.serial('a tool page puts Try it within the first screen: beside the description on a desktop, after it on a phone', async (t) => {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  await page.goto(`${svc.url}/tools/@toolshed-examples/data-tools/csvToJson`);
  const heading = page.getByRole('heading', { name: 'Try it' });
  await heading.waitFor();
  const run = page.getByRole('button', { name: 'Run' });
  for (const size of [DESKTOP, PHONE]) {
    await page.setViewportSize(size);
    await page.evaluate(() => window.scrollTo(0, 0));
    const top = (await heading.boundingBox())!.y;
    t.true(top < size.height - 200, `Try it starts at y=${Math.round(top)} of a ${size.height} px screen (${size.width} wide)`);
  }
  await page.setViewportSize(DESKTOP);
  const button = (await run.boundingBox())!;
  t.true(button.y + button.height <= DESKTOP.height, `on a desktop Run is on the first screen too (y=${Math.round(button.y)})`);
  await checkAccessibility(t, page, 'tool page');
  await shots(page, 'truth-tool-first-screen');
  await context.close();
});

test.serial('Try it takes an array of objects: items added as groups of fields, run, and listed by path in the input table', async (t) => {
  // server-memory's create_entities shape: entities: [{ name, entityType, observations: string[] }].
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'nested-'));
  await fs.writeFile(
    path.join(dir, 'package.json'),
    JSON.stringify({
      name: '@fixtures/nested',
      version: '1.0.0',
      type: 'module',
      main: 'index.js',
      toolshed: { category: 'data-processing', tools: ['createEntities'] },
    }),
  );
  const schema = {
    type: 'object',
    properties: {
      entities: {
        type: 'array',
        description: 'Entities to create',
        items: {
          type: 'object',
          properties: { name: { type: 'string' }, entityType: { type: 'string' }, observations: { type: 'array', items: { type: 'string' } } },
          required: ['name', 'entityType', 'observations'],
        },
      },
    },
    required: ['entities'],
  };
  await fs.writeFile(
    path.join(dir, 'index.js'),
    `export const createEntities = { description: 'Creates entities.', inputSchema: ${JSON.stringify(schema)}, execute: async ({ entities }) => ({ created: entities }) };\n`,
  );
  const imported = await svc.importPackage(`path:${dir}`);
  t.is(imported.status, 201, imported.text);
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  const problems = watchPage(page);
  await page.goto(`${svc.url}/tools/@fixtures/nested/createEntities`);
  await page.getByRole('heading', { level: 1, name: 'createEntities' }).waitFor();
  const rows = await page.getByRole('table', { name: 'Input parameters' }).locator('tbody th').allInnerTexts();
  t.deepEqual(
    rows.map((r) => r.replace(/\s/g, '')),
    ['entities', 'entities[].name', 'entities[].entityType', 'entities[].observations'],
  );
  const first = page.getByRole('group', { name: 'entities 1' });
  await first.getByLabel(/^name/).fill('Ada');
  await first.getByLabel(/^entityType/).fill('person');
  await first.getByLabel(/^observations/).fill('wrote the first program\nliked poetry');
  await page.getByRole('button', { name: 'Add to entities' }).click();
  const second = page.getByRole('group', { name: 'entities 2' });
  await second.getByLabel(/^name/).fill('Analytical Engine');
  await second.getByLabel(/^entityType/).fill('machine');
  await second.getByLabel(/^observations/).fill('["never built"]');
  await page.getByRole('button', { name: 'Run', exact: true }).click();
  const result = page.getByTestId('execution-result');
  await result.waitFor({ timeout: 60_000 });
  t.regex(await result.locator('h3').innerText(), /succeeded/);
  t.deepEqual(JSON.parse(await result.locator('pre').first().innerText()), {
    created: [
      { name: 'Ada', entityType: 'person', observations: ['wrote the first program', 'liked poetry'] },
      { name: 'Analytical Engine', entityType: 'machine', observations: ['never built'] },
    ],
  });
  // The curl call holds the same.
  const snippet = await page.getByRole('region', { name: 'Use it from code' }).locator('pre').first().innerText();
  t.regex(snippet, /"observations":\["wrote the first program","liked poetry"\]/);
  await checkAccessibility(t, page, 'nested form');
  await shots(page, 'truth-tool-nested');
  t.deepEqual(problems, []);
  await context.close();
  await fs.rm(dir, { recursive: true, force: true });
});
