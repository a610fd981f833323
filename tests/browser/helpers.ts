/**
 * Browser test helpers: one Chromium per test file (Debian's headless shell, driven by playwright-core), the web app built into a
 * temporary directory for the service under test, axe-core checks, screenshots under tests/browser/screenshots/.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { ExecutionContext } from 'ava';
import { REQUIREMENTS } from '../../bin/preflight.js';
import { buildWeb } from '../../web/build.js';
import { startService, type Service } from '../helpers/service.js';

export const SCREENSHOTS = path.resolve(new URL('./screenshots', import.meta.url).pathname);
const require = createRequire(import.meta.url);

/** The web app for a test file's service: the one tests/run.ts built for the run (nothing writes to it), or its own. */
export async function buildWebForTests(): Promise<string> {
  if (process.env.TOOLSHED_TEST_WEB_DIR) return process.env.TOOLSHED_TEST_WEB_DIR;
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolshed-web-'));
  await buildWeb(path.join(dir, 'web'));
  return path.join(dir, 'web');
}

/**
 * The test file's Chromium: Debian's headless shell (bin/preflight.ts installs it), the build of Chromium that
 * Playwright itself runs headless tests in; `CHROMIUM_PATH=/usr/bin/chromium` runs the same tests in the full browser.
 */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? REQUIREMENTS.chromium.paths[0], args: ['--no-sandbox'] });
}

/**
 * A browser test file's service — the web app built for it, the process sandbox (the web app is its subject, not
 * isolation) — and its Chromium, started side by side; then each package folder imported (a failed import throws).
 */
export async function startWebService(opts: { env?: Record<string, string>; packages?: string[] } = {}): Promise<{ svc: Service; browser: Browser }> {
  const webDir = await buildWebForTests();
  const [svc, browser] = await Promise.all([startService({ sandbox: 'process', env: { WEB_DIR: webDir, ...opts.env } }), launchBrowser()]);
  for (const dir of opts.packages ?? []) {
    const res = await svc.importPackage(`path:${dir}`);
    if (res.status !== 201) throw new Error(res.text);
  }
  return { svc, browser };
}

/** Records console errors and CSP violations of a page, to be asserted empty at the end of a flow. */
export function watchPage(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  return problems;
}

let axeSource: Promise<string> | undefined;

/** Runs axe-core on the page; fails the test on serious or critical violations. */
export async function checkAccessibility(t: ExecutionContext, page: Page, label: string): Promise<void> {
  axeSource ??= fs.readFile(require.resolve('axe-core/axe.min.js'), 'utf8');
  const source = await axeSource;
  // Evaluated through the DevTools protocol, so the page's CSP (no inline script) does not apply to it; once per
  // document (the app moves between its pages without a reload, and each evaluation parses axe's 0.5 MB again).
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(source);
  const violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[] = await page.evaluate(async () => {
    const result = await (window as any).axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v: any) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n: any) => ({ target: n.target })) }));
  });
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  t.deepEqual(
    bad.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
    [],
    `axe on ${label}`,
  );
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await fs.mkdir(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** The two sizes every page is looked at in: a laptop's and a phone's. */
export const DESKTOP = { width: 1366, height: 850 };
export const PHONE = { width: 390, height: 844 };

/**
 * Full-page screenshots of the page as it is, at the phone's size then the desktop's (`<name>-390.png`,
 * `<name>-1366.png`); throws when at the phone's size the page is wider than the screen. Leaves the desktop size set.
 */
export async function shots(page: Page, name: string): Promise<void> {
  for (const [size, label] of [
    [PHONE, '390'],
    [DESKTOP, '1366'],
  ] as const) {
    await page.setViewportSize(size);
    await screenshot(page, `${name}-${label}`);
    if (size === PHONE) {
      const wide = await page.evaluate(() => document.documentElement.scrollWidth);
      if (wide > PHONE.width + 1) throw new Error(`${name}: the page is ${wide} px wide at ${PHONE.width}`);
    }
  }
}

/**
 * What the elements `selector` finds lay out on more than one line: each element's whole text, or with `by: 'text'`
 * each of its text nodes alone (a name split by <wbr> is several nodes, so only a piece broken inside a word counts).
 */
export async function onSeveralLines(page: Page, selector: string, by: 'element' | 'text' = 'element'): Promise<string[]> {
  return page.locator(selector).evaluateAll(
    (els, by) =>
      els.flatMap((el) => {
        const nodes: Node[] = [];
        if (by === 'element') nodes.push(el);
        else for (let w = document.createTreeWalker(el, NodeFilter.SHOW_TEXT), n = w.nextNode(); n; n = w.nextNode()) nodes.push(n);
        return nodes.flatMap((node) => {
          const range = document.createRange();
          range.selectNodeContents(node);
          const tops = new Set([...range.getClientRects()].filter((r) => r.width > 1).map((r) => Math.round(r.top)));
          return tops.size > 1 ? [node.textContent ?? ''] : [];
        });
      }),
    by,
  );
}

export const PASSWORD = 'a long enough password';

/** Signs up through the form and waits until the header shows the user. */
export async function signUpInBrowser(page: Page, base: string, username: string): Promise<void> {
  await page.goto(`${base}/signup`);
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Create an account' }).click();
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: username }).waitFor();
}

/**
 * The consent page of an MCP client's sign-in (`/oauth/authorize?...`, signed in already): opens it, waits for what it
 * asks for, hands `look` the page (to read or check it) and presses Approve or Deny.
 */
export async function decideOnConsentPage(page: Page, url: string, decision: 'Approve' | 'Deny', look?: () => Promise<void>): Promise<void> {
  await page.goto(url);
  await page.getByRole('heading', { level: 1, name: 'Sign in an MCP client' }).waitFor();
  await page.getByTestId('consent-resources').waitFor();
  await look?.();
  await page.getByRole('button', { name: decision }).click();
}

/** Calls the API from the page, as the app does (session cookie, the session's CSRF token), and returns the JSON. */
export async function write(page: Page, method: string, url: string, body: unknown): Promise<any> {
  return page.evaluate(
    async ({ method, url, body }) => {
      const me = await (await fetch('/api/auth/me')).json();
      const res = await fetch(url, { method, headers: { 'content-type': 'application/json', 'x-csrf-token': me.data.csrfToken }, body: JSON.stringify(body) });
      return res.json();
    },
    { method, url, body },
  );
}
