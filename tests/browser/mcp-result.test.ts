/**
 * Try it on a real MCP server's tool (@modelcontextprotocol/server-everything, pinned in devDependencies): the result
 * reads as the server meant it, its text blocks as text and its images as images, not as a base64 blob cut off inside
 * JSON; the raw JSON stays one click away. And real packages' long tool names and descriptions (the shape of
 * @wonderwhy-er/desktop-commander's, in tests/fixtures/packages/long-names) neither widen a phone's page nor fill
 * screens in a list; a collection's MCP URL field is readable on a phone. Screenshots at 1366×900 and 390×844.
 */
import test from 'ava';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { FIXTURES_DIR, type Service } from '../helpers/service.js';
import { onSeveralLines, screenshot, signUpInBrowser, startWebService, watchPage } from './helpers.js';

const MODULES = path.resolve(new URL('../../node_modules', import.meta.url).pathname);
let svc: Service;
let browser: Browser;

test.before(async () => {
  ({ svc, browser } = await startWebService({
    packages: [path.join(MODULES, '@modelcontextprotocol/server-everything'), path.join(FIXTURES_DIR, 'packages/long-names')],
  }));
});
test.after.always(async () => {
  await browser?.close();
  await svc?.close();
});

test("an MCP tool's image result shows as an image and its text as text, the raw JSON behind a click", async (t) => {
  const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
  const problems = watchPage(page);
  await signUpInBrowser(page, svc.url, 'imagefan');
  await page.goto(`${svc.url}/tools/@modelcontextprotocol/server-everything/get-tiny-image`);
  const tryIt = page.getByRole('region', { name: 'Try it' });
  await tryIt.getByRole('button', { name: 'Run' }).click();
  const result = tryIt.getByTestId('execution-result');
  await result.getByRole('heading', { name: /Result: succeeded/ }).waitFor({ timeout: 120_000 });

  // The image is drawn (decoded by the browser), with a text alternative.
  const image = result.getByRole('img', { name: /Block 2 of the result \(image\/png\)/ });
  await image.waitFor();
  t.true(await image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0), 'the PNG decodes');
  // The text blocks read as text, not as JSON strings.
  await result.getByText("Here's the image you requested:", { exact: true }).waitFor();
  await result.getByText('The image above is the MCP logo.', { exact: true }).waitFor();
  // No base64 and no JSON in sight until the person asks for the raw result.
  t.false(await result.getByText('iVBORw0KGgo').isVisible());
  t.false(await result.getByText('"mimeType"').isVisible());
  await result.getByText('Raw result (JSON)').click();
  t.true(await result.getByText(/"mimeType": "image\/png"/).isVisible());
  await screenshot(page, 'mcp-image-result-1366');

  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, 'mcp-image-result-390');
  t.is(await page.evaluate(() => document.documentElement.scrollWidth), 390, 'nothing overflows a phone');
  t.deepEqual(problems, []);
});

test("an MCP tool's text result reads as the text, on a phone too", async (t) => {
  const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
  await signUpInBrowser(page, svc.url, 'echofan');
  await page.goto(`${svc.url}/tools/@modelcontextprotocol/server-everything/echo`);
  const tryIt = page.getByRole('region', { name: 'Try it' });
  const long = `hello ${'x'.repeat(200)}`;
  await tryIt.getByLabel(/^message/).fill(long);
  await tryIt.getByRole('button', { name: 'Run' }).click();
  const result = tryIt.getByTestId('execution-result');
  await result.getByRole('heading', { name: /Result: succeeded/ }).waitFor({ timeout: 120_000 });
  const text = result.getByText(`Echo: ${long}`, { exact: true });
  await text.waitFor();
  // The long line wraps within the page instead of hiding behind a horizontal scroll.
  t.true(await text.evaluate((el) => el.scrollWidth <= el.clientWidth), 'the text wraps');
  t.is(await page.evaluate(() => document.documentElement.scrollWidth), 390);
});

test("a tool's long name and long description fit a phone: the name breaks, a list shows the description's first lines, the tool page all of it", async (t) => {
  const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
  const name = 'give_feedback_to_the_desktop_commander_team_about_reading_files';
  await page.goto(`${svc.url}/search?q=${encodeURIComponent('read a file')}`);
  const hit = page
    .getByTestId('ranked')
    .getByRole('listitem')
    .filter({ has: page.getByRole('link', { name }) });
  await hit.waitFor();
  await screenshot(page, 'long-names-search-390');
  t.is(await page.evaluate(() => document.documentElement.scrollWidth), 390, 'the search page is no wider than the phone');
  const desc = hit.locator('p.desc');
  const box = await desc.evaluate((el) => ({ shown: el.clientHeight, whole: el.scrollHeight, lineHeight: Number.parseFloat(getComputedStyle(el).lineHeight) }));
  t.true(box.whole > box.shown, 'the list shows part of the description');
  t.true(box.shown <= 5 * box.lineHeight, `at most a few lines (${box.shown}px)`);

  await hit.getByRole('link', { name }).click();
  await page.getByRole('heading', { level: 1, name }).waitFor();
  await page.getByText('THE LAST LINE OF THE DESCRIPTION.').waitFor();
  await screenshot(page, 'long-names-tool-390');
  t.is(await page.evaluate(() => document.documentElement.scrollWidth), 390, 'the tool page is no wider than the phone');
});

test('the packages list on a wide screen: a version stays whole beside a long package name', async (t) => {
  const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
  const broken: string[] = [];
  for (const width of [1366, 1100, 900, 700]) {
    await page.setViewportSize({ width, height: 900 });
    await page.goto(`${svc.url}/packages`);
    const table = page.getByRole('table', { name: 'All packages' });
    await table.getByRole('link', { name: '@modelcontextprotocol/server-everything' }).waitFor();
    // server-everything's calendar version broke as "2026.8.3 / 1" when any cell could break anywhere.
    broken.push(...(await onSeveralLines(page, 'td[data-label="Version"]')).map((v) => `${v} at ${width}`));
    const scroll = await page.evaluate(() => document.documentElement.scrollWidth);
    if (scroll > width) broken.push(`the page is ${scroll} px wide at ${width}`);
  }
  t.deepEqual(broken, []);
  await page.close();
});

test("a collection's MCP endpoint URL gets a phone's whole width, not a sliver beside its label", async (t) => {
  const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
  await signUpInBrowser(page, svc.url, 'collector');
  await page.goto(`${svc.url}/collections`);
  await page.getByLabel('Name').fill('Real tools');
  await page.getByRole('button', { name: 'Create collection' }).click();
  const field = page.getByLabel('Endpoint URL');
  await field.waitFor();
  const url = await field.inputValue();
  t.regex(url, /^http:\/\/127\.0\.0\.1:\d+\/.+/);
  const { input, panel } = await field.evaluate((el) => ({
    input: el.getBoundingClientRect().width,
    panel: (el.closest('section') as HTMLElement).getBoundingClientRect().width,
  }));
  t.true(input >= 0.8 * panel, `the URL field is ${Math.round(input)} px of a ${Math.round(panel)} px panel`);
  await screenshot(page, 'collection-endpoint-390');
  t.is(await page.evaluate(() => document.documentElement.scrollWidth), 390);
});
