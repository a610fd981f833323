/**
 * Publishing from the web app (issue 24, items 2 and 4), in Chromium against the real service (Postgres, worker,
 * sandbox, the real npm registry path): a user publishes @agentic/calculator from the "Publish a package" page, watches
 * the import's progress end in its tools (with how each was found), opens a tool page and runs the tool; a bad source
 * shows its error next to the field; a double submit sends one request; leaving mid-poll stops the polling and coming
 * back shows the failure in full; the daily quota is said in words; "Your packages" hides and shows a package; a
 * package page and a tool page say a version's compatibility ("2.0.0 … breaking") and its deprecation. The free
 * tier's real limit (60 calls a minute) is on, and the page meets no 429. Screenshots at desktop and phone width.
 */
import test from 'ava';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { FIXTURES_DIR, startService, type Service } from '../helpers/service.js';
import { until } from '../helpers/processes.js';
import { buildWebForTests, checkAccessibility, launchBrowser, shots, signUpInBrowser, watchPage } from './helpers.js';

let svc: Service;
let browser: Browser;

/** `${NAME}`, as an import's arguments name a caller's variable. */
const variable = (name: string) => `$\{${name}}`;

const DESKTOP = { width: 1366, height: 900 };
const PHONE = { width: 390, height: 844 };

test.before(async () => {
  const webDir = await buildWebForTests();
  // The contract's free-tier limits (the test runner's default lifts them): publishing and polling must fit in them.
  const env = { WEB_DIR: webDir, RATE_LIMIT_FREE_MINUTE: '60', RATE_LIMIT_FREE_DAY: '1000', PUBLISH_DAILY_QUOTA: '2' };
  [svc, browser] = await Promise.all([startService({ sandbox: 'process', env }), launchBrowser()]);
  // Two versions of a package, the second breaking for `geocode` (the admin's import: the real comparison).
  for (const n of [1, 2]) {
    const res = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'packages', `compat-v${n}`)}`);
    if (res.status !== 201) throw new Error(res.text);
  }
});
test.after.always(async () => {
  await browser?.close();
  await svc?.close();
});

/** Every API call the page makes, with its status; 429s listed apart. */
function watchApi(page: Page) {
  const calls: { method: string; path: string; status: number; at: number }[] = [];
  page.on('response', (r) => {
    const u = new URL(r.url());
    // `at`: when the browser started the request (its own clock, not when this process heard of it).
    if (u.pathname.startsWith('/api/'))
      calls.push({ method: r.request().method(), path: u.pathname + u.search, status: r.status(), at: r.request().timing().startTime });
  });
  return {
    calls,
    refused: () => calls.filter((c) => c.status === 429).map((c) => `${c.method} ${c.path}`),
    polls: () => calls.filter((c) => c.path.startsWith('/api/package-imports/')).length,
    publishes: () => calls.filter((c) => c.method === 'POST' && c.path.startsWith('/api/packages')).length,
  };
}

const nav = (page: Page) => page.getByRole('navigation', { name: 'Main' });
const importRow = (id: string) => svc.api.deps.db('package_imports').where({ id }).first();

test.serial('publish @agentic/calculator from the page: progress, its tools and how they were found, the tool page runs it', async (t) => {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  const problems = watchPage(page);
  const api = watchApi(page);
  await signUpInBrowser(page, svc.url, 'publisher1');
  await nav(page).getByRole('link', { name: 'Publish', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'Publish a package' }).waitFor();
  await checkAccessibility(t, page, 'publish form');

  // A source that is not an npm name: refused (400), the field says why, nothing is imported.
  const source = page.getByLabel('npm package');
  await source.fill('Not A Name');
  await page.getByRole('button', { name: 'Publish' }).click();
  const fieldError = page.locator('#err-source');
  await fieldError.waitFor();
  t.regex(await fieldError.innerText(), /not a valid npm package name/);
  t.is(await source.getAttribute('aria-invalid'), 'true');
  t.is(await source.getAttribute('aria-describedby'), 'err-source');
  await shots(page, 'publish-bad-source');
  t.is(Number((await svc.api.deps.db('package_imports').whereNotNull('requested_by').count('* as n').first())!.n), 0, 'nothing was queued');

  // A variable that is not a variable name: the message is by that row's name field.
  await source.fill('@agentic/calculator@7.6.9');
  await page.getByRole('button', { name: 'Add a variable' }).click();
  await page.getByLabel('Name', { exact: true }).fill('1BAD');
  await page.getByRole('button', { name: 'Publish' }).click();
  await page.locator('#err-env-0-name').waitFor();
  t.regex(await page.locator('#err-env-0-name').innerText(), /must be an environment variable name/);
  t.true(await page.locator('#err-source').isHidden(), 'the source is fine');
  await shots(page, 'publish-bad-env');
  await page.getByRole('button', { name: 'Remove variable 1BAD' }).click();

  // A bare name with a version is published as npm:<name>@<version>; submitting twice at once sends one request.
  await page.getByLabel('Category (used when the package names none)').selectOption('data-processing');
  const before = api.publishes();
  await page.evaluate(() => {
    const form = document.querySelector('form.publish-form') as HTMLFormElement;
    form.requestSubmit();
    form.requestSubmit();
  });
  await page.getByTestId('import-progress').waitFor();
  t.is(api.publishes() - before, 1, 'one publish request for two submits');
  t.true(await page.locator('#err-source').isHidden(), 'the old field error is gone');
  await page.waitForURL(/\/publish\?import=[0-9a-f-]+$/);
  await checkAccessibility(t, page, 'import in progress');
  await shots(page, 'publish-progress');

  // The progress ends in the package's tools, each saying how it was found.
  const result = page.getByTestId('publish-result');
  await result.waitFor({ timeout: 240_000 });
  t.is(await page.getByTestId('import-status').innerText(), 'Published.');
  const text = await result.innerText();
  t.regex(text, /@agentic\/calculator@7\.6\.9/);
  t.regex(text, /1 tool · data-processing/);
  t.regex(text, /calculator[\s\S]*found as an Agentic AIFunction \(export calculator\)/);
  await checkAccessibility(t, page, 'published');
  await shots(page, 'publish-published');
  const polls = api.calls.filter((c) => c.path.startsWith('/api/package-imports/'));
  t.true(polls.length >= 1);
  const gaps = polls.slice(1).map((p, i) => p.at - polls[i].at);
  t.true(
    gaps.every((g) => g >= 900),
    `polls are at least a second apart: ${gaps.join(', ')} ms (${polls.map((p) => p.status).join(' ')})`,
  );

  // Through to the tool page, and run it from there.
  await result.getByRole('link', { name: 'calculator', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'calculator' }).waitFor();
  t.is(await page.getByRole('link', { name: '@agentic/calculator@7.6.9' }).count(), 1, 'the tool page links its package');
  await page.getByLabel(/^expr/).fill('1.5 * (2 + 4)');
  await page.getByRole('button', { name: 'Run' }).click();
  const out = page.getByTestId('execution-result');
  await out.waitFor({ timeout: 120_000 });
  t.regex(await out.innerText(), /Result: succeeded[\s\S]*\b9\b/);
  t.is(await page.getByTestId('version-notes').count(), 0, 'a first version, not deprecated: no version note');
  await shots(page, 'publish-tool-run');

  t.deepEqual(api.refused(), [], 'the page met no 429');
  t.deepEqual(problems, []);
  await context.close();
});

test.serial(
  'a toolkit made with arguments: arguments that are not JSON are said by their field; @supermemory/tools publishes with its key as a variable',
  async (t) => {
    const context = await browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    const problems = watchPage(page);
    const api = watchApi(page);
    await signUpInBrowser(page, svc.url, 'toolkit1');
    await nav(page).getByRole('link', { name: 'Publish', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Publish a package' }).waitFor();
    await page.getByLabel('npm package').fill('@supermemory/tools@2.3.0');
    await page.getByLabel('Its tools are made with arguments').check();
    const options = page.getByLabel('Arguments, as a JSON array');
    await options.fill(`["${variable('SUPERMEMORY_API_KEY')}"`);
    const before = api.publishes();
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.locator('#err-options').waitFor();
    t.regex(await page.locator('#err-options').innerText(), /^not JSON/);
    t.is(await options.getAttribute('aria-invalid'), 'true');
    t.is(api.publishes(), before, 'nothing was sent');
    await checkAccessibility(t, page, 'toolkit form');
    await shots(page, 'publish-toolkit-bad-options');

    await options.fill(`["${variable('SUPERMEMORY_API_KEY')}"]`);
    await page.getByRole('button', { name: 'Publish' }).click();
    const result = page.getByTestId('publish-result');
    await result.waitFor({ timeout: 240_000 });
    const text = await result.innerText();
    t.regex(text, /7 tools/);
    t.regex(text, /searchMemories[\s\S]*found as a toolkit made with the import’s arguments \(export supermemoryTools#searchMemories in \.\/ai-sdk\)/);
    t.is(api.publishes() - before, 1);
    await shots(page, 'publish-toolkit-published');
    t.deepEqual(api.refused(), [], 'the page met no 429');
    t.deepEqual(problems, []);
    await context.close();
  },
);

test.serial('leaving mid-poll stops the polling and coming back shows the result; a failure shows in full; the quota is said in words', async (t) => {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  const problems = watchPage(page);
  const api = watchApi(page);
  await signUpInBrowser(page, svc.url, 'publisher2');
  await page.goto(`${svc.url}/publish`);
  // An MCP server (installed with its SDK, started in a sandbox and asked for its tools: time enough to leave).
  await page.getByLabel('npm package').fill('@modelcontextprotocol/server-sequential-thinking@2026.8.31');
  await page.getByLabel('It is an MCP server').check();
  await page.getByLabel('Arguments, one per line').waitFor();
  await page.getByRole('button', { name: 'Publish' }).click();
  await page.waitForURL(/\/publish\?import=[0-9a-f-]+$/);
  const id = new URL(page.url()).searchParams.get('import')!;
  await page.getByTestId('import-status').waitFor();

  // Away while the import runs: until it is final no poll is made from the page left (one may have been in flight).
  await nav(page).getByRole('link', { name: 'Packages' }).click();
  await page.getByRole('heading', { level: 1, name: 'Packages' }).waitFor();
  const away = api.polls();
  const left = Date.now();
  // A poller left running asks at most 5 s apart until it sees the import final.
  await until(async () => ['succeeded', 'failed'].includes((await importRow(id)).status), 180_000, 'the import to end');
  t.log(`the import ran ${Date.now() - left} ms after the page was left`);
  t.true(api.polls() - away <= 1, `${api.polls() - away} polls after leaving the page (one may have been in flight)`);
  await page.goBack();
  const result = page.getByTestId('publish-result');
  await result.waitFor();
  t.regex(await result.innerText(), /sequentialthinking/);
  await shots(page, 'publish-mcp-published');

  // A failing import (an unknown package), watched to its end: the reason in full.
  await page.getByLabel('npm package').fill('@toolshed-no-such-scope/no-such-package-xyz@1.0.0');
  await page.getByLabel('It is an MCP server').uncheck();
  await page.getByRole('button', { name: 'Publish' }).click();
  await page.waitForURL((u) => u.searchParams.get('import') !== id);
  const failed = new URL(page.url()).searchParams.get('import')!;
  const failure = page.getByTestId('import-error');
  await failure.waitFor({ timeout: 120_000 });
  const message = (await importRow(failed)).error.message as string;
  t.true(message.length > 0);
  t.true((await failure.innerText()).includes(message.split('\n')[0]), `the whole message is shown: ${message}`);
  t.is(await page.getByTestId('import-status').innerText(), 'The import failed.');
  t.regex(await page.locator('#err-source').innerText(), /The import of npm:@toolshed-no-such-scope\/no-such-package-xyz@1\.0\.0 failed: /);
  await checkAccessibility(t, page, 'failed import');
  await shots(page, 'publish-failed');

  // Both imports used the quota (2): the third publish is refused and says so.
  await page.getByLabel('npm package').fill('is-number@7.0.0');
  await page.getByRole('button', { name: 'Publish' }).click();
  const quota = page.getByTestId('quota');
  await quota.waitFor();
  t.regex(await quota.innerText(), /daily publishing quota is used up[\s\S]*\(2\)[\s\S]*Nothing was queued/);
  await shots(page, 'publish-quota');
  t.deepEqual(api.refused(), ['POST /api/packages?wait=false'], 'the only 429 is the quota, none from the rate limit');
  t.deepEqual(problems, []);
  await context.close();
});

test.serial('your packages: hide and show; a package page and a tool page say compatibility and deprecation in words', async (t) => {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  const problems = watchPage(page);
  const api = watchApi(page);
  await page.goto(`${svc.url}/login`);
  await page.getByLabel('Username').fill('publisher1');
  await page.getByLabel('Password').fill('a long enough password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await nav(page).getByRole('link', { name: 'publisher1' }).waitFor();
  await nav(page).getByRole('link', { name: 'Packages' }).click();
  const mine = page.getByRole('table', { name: 'Your packages' });
  await mine.waitFor();
  t.regex(await mine.innerText(), /@agentic\/calculator[\s\S]*7\.6\.9[\s\S]*Listed/);
  await checkAccessibility(t, page, 'packages');

  // Hide: it leaves the list of all packages, stays in yours as Hidden; Show brings it back.
  await mine.getByRole('button', { name: 'Hide @agentic/calculator' }).click();
  await mine.getByRole('button', { name: 'Show @agentic/calculator' }).waitFor();
  const all = page.getByRole('table', { name: 'All packages' });
  await until(async () => !(await all.innerText()).includes('@agentic/calculator'), 15_000, 'the hidden package to leave the list');
  t.regex(await all.innerText(), /@fixtures\/compat/);
  await shots(page, 'publish-packages-hidden');
  await mine.getByRole('button', { name: 'Show @agentic/calculator' }).click();
  await mine.getByRole('button', { name: 'Hide @agentic/calculator' }).waitFor();
  await until(async () => (await all.innerText()).includes('@agentic/calculator'), 15_000, 'the shown package to be listed again');
  t.false((await svc.api.deps.db('packages').where({ name: '@agentic/calculator' }).first()).hidden);

  // The package page: publisher, version, tools; its publisher deprecates the version.
  await mine.getByRole('link', { name: '@agentic/calculator' }).click();
  await page.getByRole('heading', { level: 1, name: '@agentic/calculator' }).waitFor();
  t.regex(await page.locator('dl.facts').innerText(), /Publisher\s*publisher1[\s\S]*7\.6\.9/);
  t.regex(await page.getByTestId('version-7.6.9').innerText(), /first version imported[\s\S]*1 tool[\s\S]*calculator/);
  await page.getByLabel('Deprecate 7.6.9:').fill('Use 8.x');
  await page.getByRole('button', { name: 'Deprecate' }).click();
  await page.getByTestId('deprecated').waitFor();
  t.regex(await page.getByTestId('deprecated').innerText(), /Deprecated: Use 8\.x/);
  await checkAccessibility(t, page, 'package page');
  await shots(page, 'publish-package');
  await page.getByRole('link', { name: 'calculator', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'calculator' }).waitFor();
  const notes = page.getByTestId('version-notes');
  await notes.waitFor();
  t.regex(await notes.innerText(), /Deprecated by its publisher: Use 8\.x/);

  // A breaking second version: the package page lists each change, the tool page the ones of its tool.
  await page.goto(`${svc.url}/packages/@fixtures/compat`);
  await page.getByRole('heading', { level: 1, name: '@fixtures/compat' }).waitFor();
  const compat = page.getByTestId('compatibility');
  t.regex(await compat.innerText(), /2\.0\.0 against 1\.0\.0:\s*✗\s*breaking/);
  t.regex(await compat.innerText(), /required property country added to geocode \(breaking\)/);
  t.regex(await compat.innerText(), /tool reverse removed \(breaking\)/);
  t.regex(await compat.innerText(), /tool suggest added \(needs review\)/);
  t.regex(await page.locator('dl.facts').innerText(), /the operator/);
  await shots(page, 'publish-package-compat');
  // The older version's tools link their pinned reference (it runs that version).
  t.is(
    await page.getByTestId('version-1.0.0').getByRole('link', { name: 'geocode', exact: true }).getAttribute('href'),
    '/tools/@fixtures/compat@1.0.0/geocode',
  );
  await page.getByTestId('version-2.0.0').getByRole('link', { name: 'geocode', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'geocode' }).waitFor();
  await notes.waitFor();
  const note = await notes.innerText();
  t.regex(note, /2\.0\.0 against 1\.0\.0:\s*✗\s*breaking/);
  t.regex(note, /required property country added to geocode/);
  t.regex(note, /2 changes to other tools of the package/);
  await checkAccessibility(t, page, 'tool page with a compatibility note');
  await shots(page, 'publish-tool-compat');

  t.deepEqual(api.refused(), []);
  t.deepEqual(problems, []);
  await context.close();
});

test('the publish page and packages pages are app routes; signed out, publishing asks to sign in', async (t) => {
  for (const p of ['/publish', '/packages', '/packages/@agentic/calculator']) t.is((await fetch(`${svc.url}${p}`)).status, 200, p);
  const context = await browser.newContext({ viewport: PHONE });
  const page = await context.newPage();
  await page.goto(`${svc.url}/publish`);
  await page.getByRole('link', { name: 'Sign in' }).first().waitFor();
  t.regex(await page.locator('main').innerText(), /Sign in to publish a package/);
  t.is(await nav(page).getByRole('link', { name: 'Publish', exact: true }).count(), 0, 'no Publish link signed out');
  await context.close();
});
