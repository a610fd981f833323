/**
 * Single sign-on in Chromium: the sign-in page's link goes to a real OpenID provider (oidc-provider on a loopback
 * port, its development sign-in and consent pages), and comes back signed in, with the username in the header.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import Provider from 'oidc-provider';
import type { Browser } from 'playwright-core';
import { startService, type Service } from '../helpers/service.js';
import { buildWebForTests, checkAccessibility, launchBrowser, watchPage } from './helpers.js';

const CLIENT = { client_id: 'toolshed', client_secret: 'a-client-secret-for-tests' };
let server: http.Server;
let svc: Service;
let browser: Browser;

test.before(async () => {
  server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const webDir = await buildWebForTests();
  const env = { WEB_DIR: webDir, OIDC_ISSUER: issuer, OIDC_CLIENT_ID: CLIENT.client_id, OIDC_CLIENT_SECRET: CLIENT.client_secret, OIDC_LABEL: 'Company SSO' };
  [svc, browser] = await Promise.all([startService({ worker: false, env }), launchBrowser()]);
  const provider = new Provider(issuer, {
    clients: [{ ...CLIENT, redirect_uris: [`${svc.url}/api/auth/oidc/callback`] }],
    cookies: { keys: ['cookie-key-for-tests'] },
    features: { devInteractions: { enabled: true } },
    claims: { openid: ['sub'], profile: ['name', 'preferred_username'] },
    findAccount: async (_ctx: unknown, sub: string) => ({ accountId: sub, claims: async () => ({ sub, preferred_username: sub, name: 'Barbara Liskov' }) }),
  });
  server.on('request', provider.callback());
});
test.after.always(async () => {
  await browser?.close();
  await svc?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

test("the sign-in page's single sign-on link leads through the provider to a signed-in session", async (t) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems = watchPage(page);
  await page.goto(`${svc.url}/login`);
  const link = page.getByRole('link', { name: 'Sign in with Company SSO' });
  await link.waitFor();
  await checkAccessibility(t, page, 'login with SSO');
  await link.click();
  // The provider's development pages: sign in (any login), then consent.
  await page.locator('input[name="login"]').fill('barbara');
  await page.locator('input[name="password"]').fill('anything');
  await page.locator('button[type="submit"]').click();
  await page.locator('button[type="submit"]', { hasText: /continue/i }).click();
  await page.waitForURL(`${svc.url}/`);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'barbara' }).waitFor();
  const me = await page.evaluate(async () => (await (await fetch('/api/auth/me')).json()).data);
  t.like(me, { via: 'session', user: { username: 'barbara', name: 'Barbara Liskov' } });
  t.deepEqual(problems, []);

  // A refusal comes back to the sign-in page with the reason in words.
  await page.goto(`${svc.url}/login?sso=expired`);
  await page
    .getByRole('alert')
    .getByText(/took too long/)
    .waitFor();
  await context.close();
});
