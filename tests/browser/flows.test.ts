/**
 * The web app end to end, in Chromium, against the real service (Postgres, worker, sandbox, offline LLM):
 * sign up → create a key → search → open a tool → Try it → result; collection → add tools → copy the MCP URL → the MCP
 * SDK client lists the tools; scenario → run → live verdict; revoke the key → the API refuses it; a second user cannot
 * see or change the first user's private collection; an agent over a collection → chat → a tool call card and the
 * streamed answer. axe-core on every page; no CSP violations.
 */
import test from 'ava';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { EXAMPLES_DIR, type Service } from '../helpers/service.js';
import { checkAccessibility, PASSWORD, screenshot, signUpInBrowser, startWebService, watchPage } from './helpers.js';
import { rawRequest } from '../security/raw-http.js';

let svc: Service;
let browser: Browser;

test.before(async () => {
  ({ svc, browser } = await startWebService({ packages: [path.join(EXAMPLES_DIR, 'text-tools')] }));
});
test.after.always(async () => {
  await browser?.close();
  await svc?.close();
});

test('pages carry a strict CSP; hashed assets are cached for a year; the first page is under 150 KB of compressed JS', async (t) => {
  const home = await fetch(`${svc.url}/`);
  const csp = home.headers.get('content-security-policy')!;
  t.regex(csp, /script-src 'self'(;|$)/);
  t.notRegex(csp, /unsafe-inline|unsafe-eval|https?:/);
  t.is(home.headers.get('cache-control'), 'no-cache');
  const html = await home.text();
  t.notRegex(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
  const js = /src="(\/assets\/app-[A-Z0-9]+\.js)"/.exec(html)![1];
  const asset = await fetch(svc.url + js, { headers: { 'accept-encoding': 'gzip' } });
  t.regex(asset.headers.get('cache-control')!, /max-age=31536000.*immutable/);
  t.is(asset.headers.get('content-encoding'), 'gzip');
  const compressed = Number(asset.headers.get('content-length'));
  t.true(compressed > 0 && compressed < 150 * 1024, `${compressed} bytes`);
  t.is((await fetch(`${svc.url}/tools/x/y`)).status, 200, 'client routes answer with the app');
  t.is((await fetch(`${svc.url}/api/nope`)).status, 404, 'API paths are not the app');
});

test('no spelling of an /assets/ path reaches a file outside the assets folder or makes the file server fail', async (t) => {
  for (const p of [
    '/assets/..%2f..%2fpackage.json',
    '/assets/%2e%2e%2f%2e%2e%2fpackage.json',
    '/assets/..%2fbuild-info.json',
    '/assets/..%2findex.html',
    '/assets/../index.html',
    '/assets/%2e%2e/build-info.json',
    '/assets//etc/passwd',
    '/assets/..\\build-info.json',
    '/assets/missing-ABC.js',
  ]) {
    const res = await rawRequest(svc.url, 'GET', p);
    t.is(res.status, 404, p);
    t.deepEqual(res.body?.error?.code, 'NOT_FOUND', p);
    t.notRegex(res.text, /"name"|buildId|<html/i, p);
  }
  t.is(svc.logs().match(/"level":50/g), null, 'nothing was logged as an error');
});

test('sign up, create a key, search, open a tool, Try it, revoke the key', async (t) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems = watchPage(page);
  const t0 = Date.now();
  const lap = (what: string) => t.log(`${what}: ${Date.now() - t0} ms`);
  await signUpInBrowser(page, svc.url, 'ada');
  lap('signed up');
  await checkAccessibility(t, page, 'home');
  await screenshot(page, 'home');
  lap('home checked');

  await page.getByRole('link', { name: 'ada' }).click();
  await page.getByLabel('Key name').fill('laptop');
  await page.getByRole('button', { name: 'Create key' }).click();
  const key = await page.getByTestId('new-key').inputValue();
  t.regex(key, /^tsk_[0-9A-Za-z]{40}$/);
  t.is((await svc.request('GET', '/api/keys', { key })).status, 200, 'the new key works');
  await checkAccessibility(t, page, 'settings');
  await screenshot(page, 'settings');
  lap('key made');

  await page.getByRole('link', { name: 'Toolshed' }).click();
  await page.getByLabel('Search tools').fill('slug from a title');
  await page.getByLabel('Search tools').press('Enter');
  await page.waitForURL(/\/search\?q=/);
  await page.getByRole('link', { name: 'slugify', exact: true }).waitFor();
  await checkAccessibility(t, page, 'search');
  await page.getByRole('link', { name: 'slugify', exact: true }).click();
  await page.getByRole('heading', { name: 'slugify', level: 1 }).waitFor();
  t.regex(await page.getByRole('list', { name: 'What it may do' }).innerText(), /Network access: none[\s\S]*Read-only[\s\S]*costs \d+ tokens/);
  await page.getByLabel(/^text/).fill('Hello Web App');
  await page.getByRole('button', { name: 'Run' }).click();
  const result = page.getByTestId('execution-result');
  await result.waitFor({ timeout: 30_000 });
  lap('tried');
  t.regex(await result.innerText(), /succeeded[\s\S]*hello-web-app/);
  await checkAccessibility(t, page, 'tool');
  await screenshot(page, 'tool-try-it');

  // Revoke the key in the UI: the API refuses it at once.
  await page.getByRole('link', { name: 'ada' }).click();
  page.once('dialog', (d) => void d.accept()); // revoking asks first
  await page.getByRole('button', { name: /^Revoke/ }).click();
  await page.getByText(/^revoked /).waitFor();
  lap('revoked');
  const refused = await svc.request('GET', '/api/keys', { key });
  t.is(refused.status, 401);
  t.deepEqual(problems, []);
  await context.close();
});

test('collection, tools, MCP URL, a scenario with a live verdict; a second user cannot see it', async (t) => {
  const context = await browser.newContext();
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: svc.url });
  const page = await context.newPage();
  const problems = watchPage(page);
  await signUpInBrowser(page, svc.url, 'grace');
  await page.getByRole('link', { name: 'Collections' }).click();
  await checkAccessibility(t, page, 'collections');
  await page.getByLabel('Name').fill('Writing helpers');
  await page.getByRole('checkbox', { name: /^Public/ }).uncheck();
  await page.getByRole('button', { name: 'Create collection' }).click();
  await page.waitForURL(/\/collections\/writing-helpers$/);
  await page.getByLabel('Find tools to add').fill('slug text');
  await page.getByRole('button', { name: 'Find' }).click();
  await page.getByRole('button', { name: 'Add slugify' }).click();
  await page.getByRole('button', { name: 'Remove slugify' }).waitFor();
  await page.getByLabel('Find tools to add').fill('word count');
  await page.getByRole('button', { name: 'Find' }).click();
  await page.getByRole('list', { name: 'Tools to add' }).getByRole('button').first().click();
  await page.getByText(/· 2 tools ·/).waitFor();

  await page.getByRole('button', { name: 'Copy URL' }).click();
  const url = await page.evaluate(() => navigator.clipboard.readText());
  t.is(url, `${svc.url}/api/mcp/grace/writing-helpers/mcp`);
  await page.getByText('Cursor (.cursor/mcp.json)').click();
  await checkAccessibility(t, page, 'collection');
  await screenshot(page, 'collection');

  // The official MCP client, with a key of grace's (the collection is private), lists the tools.
  const key = (await page.evaluate(async () => {
    const me = await (await fetch('/api/auth/me')).json();
    const res = await fetch('/api/keys', { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': me.data.csrfToken }, body: '{}' });
    return (await res.json()).data.key;
  })) as string;
  const client = new Client({ name: 'browser-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  const listed = await client.listTools();
  t.is(listed.tools.length, 2);
  t.true(listed.tools.some((x) => x.name === 'slugify'));
  await client.close();

  // A scenario: create, run, the verdict arrives live.
  await page.getByLabel('Task for the agent').fill('Slugify "Hello World" with slugify');
  await page.getByLabel('Assert that this tool is called (optional)').selectOption('slugify');
  await page.getByRole('button', { name: 'Create scenario' }).click();
  await page.waitForURL(/\/scenarios\/[0-9a-f-]+$/);
  await page.getByRole('button', { name: 'Run scenario' }).click();
  const verdict = page.getByTestId('verdict');
  await verdict.waitFor({ timeout: 45_000 });
  t.regex(await verdict.innerText(), /Verdict:\W*pass/);
  await page.getByRole('cell', { name: 'pass' }).waitFor();
  await checkAccessibility(t, page, 'scenario');
  await screenshot(page, 'scenario');

  // A second user sees a 404 and no controls, and cannot change it through the API the page uses.
  const other = await browser.newContext();
  const page2 = await other.newPage();
  await signUpInBrowser(page2, svc.url, 'mallory');
  await page2.goto(`${svc.url}/collections/writing-helpers`);
  await page2.getByRole('alert').waitFor();
  t.regex(await page2.getByRole('alert').innerText(), /not found/i);
  t.is(await page2.getByRole('button', { name: 'Save changes' }).count(), 0);
  const attempt = await page2.evaluate(async () => {
    const me = await (await fetch('/api/auth/me')).json();
    const res = await fetch('/api/collections/writing-helpers', {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', 'x-csrf-token': me.data.csrfToken },
      body: JSON.stringify({ isPublic: true }),
    });
    return res.status;
  });
  t.true([403, 404].includes(attempt));
  t.false((await svc.request('GET', '/api/collections/writing-helpers')).status === 200, 'still private');
  t.deepEqual(problems, []);
  await other.close();
  await context.close();
});

test('agents: create one over a collection, chat, see the tool call as a card and the answer stream in', async (t) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems = watchPage(page);
  await signUpInBrowser(page, svc.url, 'hopper');
  // The collection through the API the app uses (its UI has its own flow above).
  await page.evaluate(async () => {
    const me = await (await fetch('/api/auth/me')).json();
    const headers = { 'content-type': 'application/json', 'x-csrf-token': me.data.csrfToken };
    await fetch('/api/collections', { method: 'POST', headers, body: JSON.stringify({ name: 'Slug tools', isPublic: false }) });
    await fetch('/api/collections/slug-tools/tools', { method: 'POST', headers, body: JSON.stringify({ toolId: '@toolshed-examples/text-tools::slugify' }) });
  });

  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Agents' }).click();
  await page.getByRole('heading', { name: 'Agents', level: 1 }).waitFor();
  await page.getByText('You have none yet.').waitFor();
  await page.getByLabel('Name').fill('Slugger');
  await page.getByLabel('Description').fill('Turns titles into URL slugs');
  await page.getByLabel('System prompt').fill('You make URL slugs with the slugify tool.');
  await page.getByRole('checkbox', { name: /^Slug tools/ }).check();
  await checkAccessibility(t, page, 'agents');
  await page.getByRole('button', { name: 'Create agent' }).click();
  await page.waitForURL(/\/agents\/[0-9a-f-]{36}$/);
  await page.getByRole('heading', { name: 'Slugger', level: 1 }).waitFor();
  t.true(await page.getByRole('link', { name: 'Slug tools' }).isVisible());

  await page.getByLabel('Message').fill('Make a URL slug of "Hello Agent World"');
  await page.getByRole('button', { name: 'Send' }).click();
  const card = page.getByTestId('tool-call');
  await card.getByText(/succeeded/).waitFor({ timeout: 45_000 });
  t.regex(await card.innerText(), /slugify[\s\S]*hello-agent-world/);
  await page.getByText('The answer is complete').waitFor({ timeout: 30_000 });
  t.regex(await page.locator('.answer').last().innerText(), /hello-agent-world/);
  t.is(await page.getByRole('button', { name: 'Send' }).isEnabled(), true);
  await checkAccessibility(t, page, 'agent chat');
  await screenshot(page, 'agent-chat');

  // The list shows the agent with its collection.
  await page.getByRole('link', { name: 'Agents', exact: true }).first().click();
  await page.getByRole('link', { name: 'Slugger' }).waitFor();
  t.deepEqual(problems, []);
  await context.close();
});

test('after signing up, ?next= leads to a page of this site only: another site is home, a path of ours is kept', async (t) => {
  for (const [i, [next, landing]] of [
    ['//evil.example/x', '/'],
    ['/\\evil.example/x', '/'],
    ['https://evil.example/', '/'],
    ['/collections?tab=mine', '/collections?tab=mine'],
  ].entries()) {
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems = watchPage(page);
    await page.goto(`${svc.url}/signup?next=${encodeURIComponent(next)}`);
    await page.getByLabel('Username').fill(`next${i}`);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create an account' }).click();
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: `next${i}` })
      .waitFor();
    await page.waitForURL(`${svc.url}${landing}`);
    t.is(page.url(), `${svc.url}${landing}`, next);
    t.deepEqual(problems, [], next);
    await context.close();
  }
});
