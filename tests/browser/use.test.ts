/**
 * The web app as a person uses it (issue 22), in Chromium against the real service (Postgres, worker, sandbox,
 * offline LLM): browsing fast stays within the rate limit and a refusal never looks like a sign-out; a run shows
 * what happened; the offline provider is said; search says when nothing matches well; nothing overflows a phone's
 * width; and the smaller things (not-found page, scenario record, featured needs passes, key revocation, plurals,
 * line breaks, pills, "Added", focus, schema labels). Screenshots at 1366×900 and 390×844; axe on every page.
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { EXAMPLES_DIR, startService, type Service } from '../helpers/service.js';
import { buildWebForTests, checkAccessibility, launchBrowser, onSeveralLines, screenshot, signUpInBrowser, watchPage, write } from './helpers.js';

let svc: Service;
let browser: Browser;
let owner: { id: string; username: string; key: string };

const DESKTOP = { width: 1366, height: 900 };
const PHONE = { width: 390, height: 844 };

test.before(async () => {
  const webDir = await buildWebForTests();
  // The contract's free-tier limits (the test runner's default lifts them): browsing must fit in them.
  const env = { WEB_DIR: webDir, RATE_LIMIT_FREE_MINUTE: '60', RATE_LIMIT_FREE_DAY: '1000' };
  [svc, browser] = await Promise.all([startService({ sandbox: 'process', env }), launchBrowser()]);
  for (const pkg of ['text-tools', 'data-tools', 'message-tools', 'webhook-signer', 'monitoring-tools']) {
    const res = await svc.importPackage(`path:${path.join(EXAMPLES_DIR, pkg)}`);
    if (res.status !== 201) throw new Error(res.text);
  }
  // Public data to browse, made by another user (their calls are not the browsing user's budget).
  owner = await svc.createUser({ tier: 'pro' });
  const col = await svc.createCollection(owner.key, { name: 'Text basics', description: 'Slugs and counts', isPublic: true }, [
    '@toolshed-examples/text-tools::slugify',
    '@toolshed-examples/text-tools::textStatistics',
  ]);
  const sc = await svc.request('POST', '/api/scenarios', {
    key: owner.key,
    body: { collectionId: col.id, prompt: 'Slugify "Browse Me" with slugify', name: 'Browse slug' },
  });
  if (sc.status !== 201) throw new Error(sc.text);
});
test.after.always(async () => {
  await browser?.close();
  await svc?.close();
});

/** Full-page screenshots at both widths; the page is left at desktop width. */
async function shots(page: Page, name: string) {
  await page.setViewportSize(DESKTOP);
  await screenshot(page, `${name}-1366`);
  await page.setViewportSize(PHONE);
  await screenshot(page, `${name}-390`);
  await page.setViewportSize(DESKTOP);
}

/** A same-origin write from the page, with the session's CSRF token (as the app sends it). */
const nav = (page: Page) => page.getByRole('navigation', { name: 'Main' });
const heading = (page: Page, name: string | RegExp) => page.getByRole('heading', { level: 1, name }).waitFor();

test('a free user browsing 30 pages fast never meets a 429 and stays signed in; a reached limit says so and is not a sign-out', async (t) => {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  const problems = watchPage(page);
  const refused: string[] = [];
  let calls = 0;
  page.on('response', (r) => {
    const u = new URL(r.url());
    if (!u.pathname.startsWith('/api/')) return;
    calls++;
    if (r.status() === 429) refused.push(u.pathname);
  });
  await signUpInBrowser(page, svc.url, 'browser1');
  const before = calls;
  let views = 0;
  const view = async (what: () => Promise<void>, h1: string | RegExp) => {
    await what();
    await heading(page, h1);
    views++;
  };
  const home = () => view(() => page.getByRole('link', { name: 'Toolshed', exact: true }).click(), /Tools for AI agents/);
  const search = (q: string) =>
    view(async () => {
      await page.getByLabel('Search tools').fill(q);
      await page.getByLabel('Search tools').press('Enter');
    }, `Tools for “${q}”`);
  const openTool = (name: string) => view(() => page.getByRole('link', { name, exact: true }).first().click(), name);
  const back = (h1: string | RegExp) => view(async () => void (await page.goBack()), h1);
  for (let round = 0; round < 3; round++) {
    await home();
    await search('slug from a title');
    await openTool('slugify');
    await back('Tools for “slug from a title”');
    // convertCase shares one word of three: it waits below the divider of weaker results, one click away.
    await view(async () => {
      // The heading shows before the results: wait for the results (the divider's button, or the link when the weaker
      // results are already open), not only for the page (the headless shell got here first and found no button).
      const show = page.getByRole('button', { name: 'Show them' });
      const link = page.getByRole('link', { name: 'convertCase', exact: true }).first();
      await show.or(link).first().waitFor();
      if (await show.isVisible()) await show.click();
      await link.click();
    }, 'convertCase');
    await view(() => nav(page).getByRole('link', { name: 'Tools' }).click(), 'All tools');
    await view(() => nav(page).getByRole('link', { name: 'Collections' }).click(), 'Collections');
    await view(() => page.getByRole('link', { name: 'Text basics' }).first().click(), 'Text basics');
    await view(() => page.getByRole('link', { name: 'Browse slug' }).click(), 'Browse slug');
    await view(() => page.getByRole('link', { name: `${owner.username}/text-basics` }).click(), 'Text basics');
  }
  t.true(views >= 30, `${views} page views`);
  t.log(`${views} page views, ${calls - before} API calls (${((calls - before) / views).toFixed(2)} per page)`);
  t.deepEqual(refused, [], 'no call was refused');
  t.true(await nav(page).getByRole('link', { name: 'browser1' }).isVisible(), 'still signed in');
  await shots(page, 'use-browsing');

  // Spend the rest of this user's minute of the app's own reads (as a script of theirs in the tab would: 600, apart
  // from the API's 60), then go on clicking.
  await page.evaluate(async () => {
    for (let i = 0; i < 2000; i++) if ((await fetch('/api/auth/me/collections?limit=1')).status === 429) break;
  });
  await nav(page).getByRole('link', { name: 'Agents' }).click();
  const notice = page.getByTestId('rate-limited');
  await notice.waitFor();
  t.regex(await notice.innerText(), /Too many requests[\s\S]*still signed in[\s\S]*Try again in \d+ seconds/);
  t.true(await nav(page).getByRole('link', { name: 'browser1' }).isVisible(), 'a refusal is not a sign-out');
  await checkAccessibility(t, page, 'rate limited');
  await shots(page, 'use-rate-limited');
  // A reload while refused: the session cannot be read, and the header does not pretend the user signed out.
  await page.reload();
  await page.getByTestId('rate-limited').waitFor();
  t.is(await nav(page).getByRole('link', { name: 'Sign in' }).count(), 0, 'no "Sign in" as if signed out');
  t.deepEqual(problems, []);
  await context.close();
});

/** Follows an in-app path without reloading (as a link would). */
async function go(page: Page, to: string) {
  await page.evaluate((p) => {
    history.pushState(null, '', p);
    dispatchEvent(new PopStateEvent('popstate'));
  }, to);
}

const LONG_TITLE = 'A very long title for a page about slugs and the many ways to make them well';

/** A public collection with slugify and two scenarios: one that passes, one that asks for what never comes. */
async function collectionWithScenarios(page: Page, name: string) {
  const col = (await write(page, 'POST', '/api/collections', { name, isPublic: true })).data;
  await write(page, 'POST', `/api/collections/${col.uid}/tools`, { toolId: '@toolshed-examples/text-tools::slugify' });
  const pass = (
    await write(page, 'POST', '/api/scenarios', {
      collectionId: col.id,
      name: `${name} pass`,
      prompt: `Slugify "${LONG_TITLE}"\nwith slugify`,
      assertions: [
        { type: 'toolCalled', tool: 'slugify' },
        { type: 'outputContains', text: 'a-very-long-title' },
      ],
    })
  ).data;
  const fail = (
    await write(page, 'POST', '/api/scenarios', {
      collectionId: col.id,
      name: `${name} fail`,
      prompt: 'Slugify "Rainy Day" with slugify',
      assertions: [{ type: 'outputContains', text: 'sunny' }],
    })
  ).data;
  return { col, pass, fail };
}

test('a run shows the task, each tool call’s input and output, the answer, the judge’s reasoning and each assertion; history rows open it; featured needs passes', async (t) => {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  const problems = watchPage(page);
  await signUpInBrowser(page, svc.url, 'runner');
  const { col, pass, fail } = await collectionWithScenarios(page, 'Run detail');

  // The failing one: its answer is there to see why "sunny" was not in it.
  await go(page, `/scenarios/${fail.id}`);
  await heading(page, 'Run detail fail');
  await page.getByRole('button', { name: 'Run scenario' }).click();
  const assertions = page.getByTestId('assertions');
  await assertions.waitFor({ timeout: 60_000 });
  t.regex(await assertions.innerText(), /✗\s*fail\s*answer contains “sunny”/);
  t.regex(await page.getByTestId('run-answer').innerText(), /rainy-day/);

  // The passing one: the prompt keeps its line break; every part of the run is shown.
  await go(page, `/scenarios/${pass.id}`);
  await heading(page, 'Run detail pass');
  t.true(await page.getByTestId('offline-notice').isVisible(), 'the offline provider is said');
  t.regex(await page.getByTestId('offline-notice').innerText(), /No language model is configured[\s\S]*LLM_BASE_URL[\s\S]*docs\/scenarios\.md/);
  t.regex(await page.locator('.prompt').innerText(), /"\nwith slugify/, 'the line break is kept');
  await page.getByRole('button', { name: 'Run scenario' }).click();
  await page.getByTestId('judge-reason').waitFor({ timeout: 60_000 });
  const step = page.getByTestId('run-step').first();
  const stepText = await step.innerText();
  t.regex(stepText, /slugify[\s\S]*succeeded[\s\S]*Input[\s\S]*A very long title[\s\S]*Output[\s\S]*a-very-long-title-for-a-page/);
  t.regex(await page.getByTestId('run-answer').innerText(), /a-very-long-title/);
  t.regex(await page.getByTestId('judge-reason').innerText(), /Why: \S+/);
  t.regex(await page.getByTestId('assertions').innerText(), /✓\s*pass\s*calls slugify[\s\S]*✓\s*pass\s*answer contains “a-very-long-title”/);
  t.regex(await page.getByTestId('verdict').innerText(), /Verdict:\s*✓\s*pass/);
  // Nothing of a tool call sticks out of its panel on a desktop.
  const overflow = await page.evaluate(() => {
    const panel = document.querySelector('section.panel')!.getBoundingClientRect();
    return [...document.querySelectorAll('[data-testid="run-step"], [data-testid="run-step"] *')].filter(
      (e) => e.getBoundingClientRect().right > panel.right + 0.5,
    ).length;
  });
  t.is(overflow, 0, 'the tool call stays inside its panel');
  await checkAccessibility(t, page, 'scenario run');
  await shots(page, 'use-scenario-run');

  // History rows open the run: the same story on the run's own page, with the task.
  await page.getByRole('table', { name: 'Recent runs' }).getByRole('link').first().click();
  await heading(page, /^Run of/);
  t.regex(await page.locator('.prompt').innerText(), /Slugify "A very long title[\s\S]*with slugify/);
  t.regex(await page.getByTestId('run-step').first().innerText(), /Input[\s\S]*Output/);
  t.regex(await page.getByTestId('judge-reason').innerText(), /Why: \S+/);
  t.true(await page.getByTestId('offline-notice').isVisible());
  await checkAccessibility(t, page, 'run page');
  await shots(page, 'use-run-page');

  // The collection's list: a record in words (not a bare 50 %), pills with marks.
  await go(page, `/collections/${col.uid}`);
  await heading(page, 'Run detail');
  const rows = page.getByRole('table', { name: 'Scenarios of this collection' });
  t.regex(await rows.getByRole('row', { name: /Run detail pass/ }).innerText(), /1 of 1 run passed · quality score 67%\s*✓\s*pass/);
  t.regex(await rows.getByRole('row', { name: /Run detail fail/ }).innerText(), /0 of 1 run passed · quality score 33%\s*✗\s*fail/);

  // Featured means proven: the passing scenario is, the failing one is not.
  await page.getByRole('link', { name: 'Toolshed', exact: true }).click();
  const featured = page.getByRole('region', { name: 'Featured scenarios' });
  await featured.getByRole('link', { name: 'Run detail pass' }).waitFor();
  t.is(await featured.getByRole('link', { name: 'Run detail fail' }).count(), 0);
  t.is(await featured.getByRole('link', { name: 'Browse slug' }).count(), 0, 'a scenario never run is not featured');
  t.deepEqual(problems, []);
  await context.close();
});

test('chat says the provider is offline, sends the conversation so far and keeps line breaks', async (t) => {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  const problems = watchPage(page);
  await signUpInBrowser(page, svc.url, 'chatter');
  const col = (await write(page, 'POST', '/api/collections', { name: 'Chat tools', isPublic: false })).data;
  await write(page, 'POST', `/api/collections/${col.uid}/tools`, { toolId: '@toolshed-examples/text-tools::slugify' });
  const agent = (await write(page, 'POST', '/api/agents', { name: 'Slugger', collectionIds: [col.id] })).data;
  const bodies: any[] = [];
  page.on('request', (r) => {
    if (r.url().endsWith('/chat')) bodies.push(r.postDataJSON());
  });
  await go(page, `/agents/${agent.id}`);
  await heading(page, 'Slugger');
  t.regex(await page.getByTestId('offline-notice').innerText(), /rule-based[\s\S]*LLM_BASE_URL/);
  const box = page.getByLabel('Message');
  await box.fill('Make a URL slug of "First Try"');
  await box.press('Enter');
  await page.getByText('The answer is complete').waitFor({ timeout: 60_000 });
  await box.click();
  await page.keyboard.type('Now slugify "Second Go"');
  await page.keyboard.press('Shift+Enter');
  await page.keyboard.type('please');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.locator('.answer').nth(1).waitFor({ timeout: 60_000 });
  await page.getByText('The answer is complete').waitFor({ timeout: 60_000 });
  t.is(bodies.length, 2);
  t.is(bodies[0].history, undefined);
  t.is(bodies[1].history[0].role, 'user');
  t.is(bodies[1].history[0].content, 'Make a URL slug of "First Try"');
  t.is(bodies[1].history[1].role, 'assistant');
  t.regex(bodies[1].history[1].content, /first-try/);
  t.regex(await page.locator('.bubble.you').nth(1).innerText(), /Now slugify "Second Go"\nplease$/, 'the line break is kept');
  await checkAccessibility(t, page, 'agent chat');
  await shots(page, 'use-chat');
  t.deepEqual(problems, []);
  await context.close();
});

test('search lists tools best first and says when no tool does the job well', async (t) => {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  const problems = watchPage(page);
  await page.goto(`${svc.url}/search?q=${encodeURIComponent('slug from a title')}`);
  const ranked = page.getByRole('list', { name: 'Tools, best match first' });
  await ranked.waitFor();
  t.regex(await ranked.getByRole('listitem').first().innerText(), /^1\s+slugify/);
  t.is(await page.getByTestId('no-good-match').count(), 0, 'slugify does this well');
  for (const [q, name] of [
    ['check if a website is up', 'website'],
    ['send a slack message', 'slack'],
  ]) {
    await page.getByLabel('Search tools').fill(q);
    await page.getByLabel('Search tools').press('Enter');
    await heading(page, `Tools for “${q}”`);
    const notice = page.getByTestId('no-good-match');
    await notice.waitFor();
    t.regex(await notice.innerText(), /No tool does this well/);
    t.true((await ranked.getByRole('listitem').count()) > 0, 'the closest matches are below');
    await checkAccessibility(t, page, `search ${q}`);
    await shots(page, `use-search-${name}`);
  }
  t.deepEqual(problems, []);
  await context.close();
});

/** The input table's header words and parameter-name pieces laid out on two lines (none should be). */
async function brokenInsideAWord(page: Page): Promise<string[]> {
  await page.getByRole('table', { name: 'Input parameters' }).waitFor();
  return onSeveralLines(page, 'table.schema thead th, table.schema tbody th', 'text');
}

test('no page is wider than a phone (390 px): tool input table, keys table, run, chat; on a wide screen the input table breaks no word', async (t) => {
  const context = await browser.newContext({ viewport: PHONE });
  const page = await context.newPage();
  const problems = watchPage(page);
  await signUpInBrowser(page, svc.url, 'phoneuser');
  // Three keys in the table, one with a long name (the Revoke buttons beside it are checked at 1366 below).
  for (const name of ['laptop', 'ci runner', 'production-deployment-key-for-the-nightly-scheduler']) await write(page, 'POST', '/api/keys', { name });
  const { col, pass } = await collectionWithScenarios(page, 'Phone');
  const run = (await write(page, 'POST', `/api/scenarios/${pass.id}/run`, {})).data;
  const agent = (await write(page, 'POST', '/api/agents', { name: 'Pocket', collectionIds: [col.id] })).data;
  const pages: [string, string | RegExp][] = [
    ['/', /Tools for AI agents/],
    ['/search?q=csv', 'Tools for “csv”'],
    ['/tools/@toolshed-examples/data-tools/jsonToCsv', 'jsonToCsv'],
    ['/collections', 'Collections'],
    [`/collections/${col.uid}`, 'Phone'],
    [`/scenarios/${pass.id}`, 'Phone pass'],
    [`/scenario-runs/${run.runId}`, /^Run of/],
    ['/settings', 'Account'],
    ['/agents', 'Agents'],
    [`/agents/${agent.id}`, 'Pocket'],
    ['/no-such-page', 'Not found'],
  ];
  const wide: string[] = [];
  for (const [path, h1] of pages) {
    await go(page, path);
    await heading(page, h1);
    await page.waitForFunction(() => ![...document.querySelectorAll('[role=status]')].some((e) => e.textContent?.startsWith('Loading')));
    const { scroll, inner } = await page.evaluate(() => ({ scroll: document.scrollingElement!.scrollWidth, inner: window.innerWidth }));
    if (scroll > inner) wide.push(`${path}: ${scroll} > ${inner}`);
  }
  t.deepEqual(wide, [], 'no horizontal overflow at 390 px');

  // The schema's labels: jsonToCsv's rows take any JSON value (objects or arrays), not strings.
  await go(page, '/tools/@toolshed-examples/data-tools/jsonToCsv');
  await heading(page, 'jsonToCsv');
  const rowsRow = page.getByRole('table', { name: 'Input parameters' }).getByRole('row', { name: /rows/ });
  t.regex(await rowsRow.innerText(), /array of any JSON value/);
  t.notRegex(await rowsRow.innerText(), /array of string/);
  await checkAccessibility(t, page, 'tool at 390');
  await screenshot(page, 'use-phone-tool-390');
  await page.setViewportSize(DESKTOP);
  await screenshot(page, 'use-phone-tool-1366');
  // Wider than a phone the table is a table: its header words and parameter names stay whole ("Nam e", "paylo ad" were).
  const broken = await brokenInsideAWord(page);
  for (const [tool, width] of [
    ['monitoring-tools/slaDowntime', 1366],
    ['monitoring-tools/slaDowntime', 800],
    ['webhook-signer/signPayload', 800],
  ] as const) {
    await page.setViewportSize({ width, height: 900 });
    await go(page, `/tools/@toolshed-examples/${tool}`);
    await heading(page, tool.split('/')[1]!);
    broken.push(...(await brokenInsideAWord(page)).map((piece) => `${tool} at ${width}: ${piece}`));
  }
  t.deepEqual(broken, [], 'no header word or name piece on two lines');
  await page.setViewportSize(PHONE);

  await go(page, '/settings');
  await heading(page, 'Account');
  const revoke = page.getByRole('button', { name: /^Revoke key laptop/ });
  const box = await revoke.boundingBox();
  t.true(box !== null && box.x + box.width <= PHONE.width, 'Revoke is on screen');
  await checkAccessibility(t, page, 'settings at 390');
  await screenshot(page, 'use-phone-settings-390');
  await page.setViewportSize(DESKTOP);
  await screenshot(page, 'use-phone-settings-1366');
  // Beside a long key name, each Revoke button still reads as one word ("Revok / e" was), and a key's prefix keeps its "…".
  t.deepEqual(await onSeveralLines(page, 'table button, td[data-label="Key"]'), [], 'Revoke and the key on one line at 1366');
  t.deepEqual(problems, []);
  await context.close();
});

test('smaller things: not-found page, key names and revoke confirmation, plurals, "Added", focus after a card link', async (t) => {
  // An unknown page is the app's not-found page for a browser; the API keeps its JSON 404.
  const html = await fetch(`${svc.url}/tools`, { headers: { accept: 'text/html,application/xhtml+xml' } });
  t.is(html.status, 404);
  t.regex(html.headers.get('content-type')!, /text\/html/);
  const json = await fetch(`${svc.url}/api/nope`, { headers: { accept: 'text/html' } });
  t.is(json.status, 404);
  t.is((await json.json()).error.code, 'NOT_FOUND');
  t.is((await fetch(`${svc.url}/tools`)).status, 404, 'a client that takes JSON still gets JSON');

  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  const problems = watchPage(page);
  await page.goto(`${svc.url}/tools`);
  await heading(page, 'Not found');
  await shots(page, 'use-not-found');

  // Focus follows a card link to the new page's heading.
  await page.goto(`${svc.url}/`);
  const card = page.getByRole('region', { name: 'Trending tools' }).getByRole('link').first();
  const name = (await card.innerText()).trim();
  await card.focus();
  await page.keyboard.press('Enter');
  await heading(page, name);
  await page.waitForFunction((n) => document.activeElement?.tagName === 'H1' && document.activeElement.textContent === n, name);
  t.is(await page.evaluate(() => document.activeElement?.tagName), 'H1');

  await signUpInBrowser(page, svc.url, 'smallthings');
  // An empty key name gets a name, not "—"; revoking asks first.
  await nav(page).getByRole('link', { name: 'smallthings' }).click();
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByTestId('new-key').waitFor();
  const keyRow = page.getByRole('table', { name: 'Your API keys' }).getByRole('row').nth(1);
  t.regex(await keyRow.getByRole('rowheader').innerText(), /^Key made /);
  const dialogs: string[] = [];
  page.once('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  await keyRow.getByRole('button', { name: /^Revoke/ }).click();
  t.is(dialogs.length, 1);
  t.regex(dialogs[0]!, /Revoke the key “Key made .*”.*cannot be undone/);
  t.true(await keyRow.getByRole('button', { name: /^Revoke/ }).isVisible(), 'dismissed: still active');
  page.once('dialog', (d) => void d.accept());
  await keyRow.getByRole('button', { name: /^Revoke/ }).click();
  await keyRow.getByText(/^revoked /).waitFor();
  await shots(page, 'use-settings');

  // One tool: "1 tool"; a tool already in the collection cannot be added again.
  await write(page, 'POST', '/api/collections', { name: 'Single', isPublic: false });
  await write(page, 'POST', '/api/collections/single/tools', { toolId: '@toolshed-examples/text-tools::slugify' });
  await go(page, '/collections/single');
  await heading(page, 'Single');
  t.regex(await page.locator('.page-head .pkg').innerText(), /· 1 tool · 0 likes/);
  await page.getByLabel('Find tools to add').fill('slug');
  await page.getByRole('button', { name: 'Find' }).click();
  const added = page.getByRole('button', { name: /^Added slugify/ });
  await added.waitFor();
  t.true(await added.isDisabled());
  await checkAccessibility(t, page, 'collection with Added');
  await shots(page, 'use-collection-added');
  t.deepEqual(problems, []);
  await context.close();
});

test("a tool page's curl call runs as copied: a variable the tool needs comes from the caller's shell, a quote in the example survives", async (t) => {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  const problems = watchPage(page);
  await page.goto(`${svc.url}/tools/@toolshed-examples/webhook-signer/signPayload`);
  await heading(page, 'signPayload');
  const use = page.getByRole('region', { name: 'Use it from code' });
  t.regex(await use.innerText(), /It needs WEBHOOK_SECRET with each call: set it in your shell first/);
  const snippet = await use.locator('pre').first().innerText();
  await shots(page, 'use-tool-curl');

  // The snippet as bash reads it, with `curl` standing in to hand its arguments back (curl itself need not be here);
  // the request is then made as curl would make it.
  const shell = (secret: string) =>
    execFileSync('bash', ['-c', `curl() { printf '%s\\0' "$@"; }\n${snippet}`], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, TOOLSHED_API_KEY: owner.key, WEBHOOK_SECRET: secret },
      encoding: 'utf8',
    }).split('\0');
  const args = shell("it's a secret");
  const url = args[args.indexOf('-X') + 2]!;
  const headers = Object.fromEntries(args.flatMap((a, i) => (args[i - 1] === '-H' ? [a.split(/:\s*/, 2) as [string, string]] : [])));
  const body = args[args.indexOf('-d') + 1]!;
  t.deepEqual(JSON.parse(body).env, { WEBHOOK_SECRET: "it's a secret" }, 'the shell put the secret in, quote and all');
  t.false('Authorization' in headers, 'the route runs anonymous calls: the snippet sends no key (the page says it is optional)');
  const res = await fetch(url, { method: 'POST', headers, body });
  const json = (await res.json()) as any;
  t.is(res.status, 200, JSON.stringify(json));
  t.true(json.success, JSON.stringify(json));
  // The secret reached the tool: another secret signs differently.
  const again = await fetch(url, { method: 'POST', headers, body: shell('another')[args.indexOf('-d') + 1] });
  const other = (await again.json()) as any;
  t.true(other.success, JSON.stringify(other));
  t.notDeepEqual(other.result, json.result);

  // An example value of the package's own, with quotes and shell syntax, reaches the tool as written: the shell puts
  // none of the caller's variables (nor a command's output) into the call.
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'quoting-'));
  const tricky = `it's $(echo pwned) $HOME "'$TOOLSHED_API_KEY'" \\n`;
  await fs.writeFile(
    path.join(dir, 'package.json'),
    JSON.stringify({
      name: '@fixtures/quoting',
      version: '1.0.0',
      type: 'module',
      main: 'index.js',
      toolshed: { category: 'text-analysis', env: [{ name: 'QUOTE_KEY', required: true }], tools: ['say'] },
    }),
  );
  await fs.writeFile(
    path.join(dir, 'index.js'),
    `export const say = { description: 'Says the text back.', inputSchema: { type: 'object', properties: { text: { type: 'string', default: ${JSON.stringify(tricky)} } }, required: ['text'] }, execute: async ({ text }) => ({ text, keyLength: process.env.QUOTE_KEY.length }) };\n`,
  );
  const imported = await svc.importPackage(`path:${dir}`);
  t.is(imported.status, 201, imported.text);
  await page.goto(`${svc.url}/tools/@fixtures/quoting/say`);
  await heading(page, 'say');
  const trickySnippet = await use.locator('pre').first().innerText();
  const trickyArgs = execFileSync('bash', ['-c', `curl() { printf '%s\\0' "$@"; }\n${trickySnippet}`], {
    env: { PATH: process.env.PATH, HOME: '/home/someone', TOOLSHED_API_KEY: owner.key, QUOTE_KEY: 'abc' },
    encoding: 'utf8',
  }).split('\0');
  const sent = JSON.parse(trickyArgs[trickyArgs.indexOf('-d') + 1]!);
  t.deepEqual(sent, { params: { text: tricky }, env: { QUOTE_KEY: 'abc' } });
  await fs.rm(dir, { recursive: true, force: true });

  // A tool that needs nothing sends no env.
  await page.goto(`${svc.url}/tools/@toolshed-examples/text-tools/slugify`);
  await heading(page, 'slugify');
  t.notRegex(await use.innerText(), /It needs/);
  t.notRegex(await use.locator('pre').first().innerText(), /"env"/);
  t.deepEqual(problems, []);
  await context.close();
});
