/**
 * `mcp-remote` (the stdio bridge desktop clients use for remote servers; a pinned devDependency, nobody here wrote it)
 * against a PRIVATE collection with no header: it discovers the authorization server from our 401, registers, prints
 * the authorization URL and listens on its own callback port; the consent page is approved in Chromium, which sends
 * the browser to that port; then the test speaks MCP over the bridge's stdio with the TS SDK's StdioClientTransport.
 * Its config dir is a temp dir (MCP_REMOTE_CONFIG_DIR); BROWSER=true makes the `open` it bundles "open" nothing.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import test from 'ava';
import type { Browser, BrowserContext } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startWebService } from './helpers.js';
import { EXAMPLES_DIR, type Service } from '../helpers/service.js';
import { freePort } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';

const require = createRequire(import.meta.url);
const MCP_REMOTE = path.join(path.dirname(require.resolve('mcp-remote/package.json')), 'dist/proxy.js');
const TEXT = '@toolshed-examples/text-tools';

let svc: Service;
let browser: Browser;
test.before(async () => {
  ({ svc, browser } = await startWebService({ packages: [path.join(EXAMPLES_DIR, 'text-tools')] }));
});
test.after.always(async () => {
  await browser?.close();
  await svc?.close();
});

/** A browser signed up as `username` (its session cookie in the context), and an API key of theirs. */
async function signedUp(username: string): Promise<{ context: BrowserContext; key: string }> {
  const context = await browser.newContext();
  const res = await context.request.post(`${svc.url}/api/auth/signup`, { data: { username, password: 'a long enough password' } });
  if (res.status() !== 201) throw new Error(await res.text());
  const csrf = (await res.json()).data.csrfToken as string;
  const k = await context.request.post(`${svc.url}/api/keys`, { data: { name: 'setup' }, headers: { 'x-csrf-token': csrf } });
  if (k.status() !== 201) throw new Error(await k.text());
  return { context, key: (await k.json()).data.key };
}

/** mcp-remote as a desktop client starts it, with the test's callback port and a config dir of its own; its stderr kept. */
async function bridge(url: string, configDir: string, extra: string[] = []) {
  const port = await freePort();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MCP_REMOTE, url, String(port), '--host', '127.0.0.1', '--auth-timeout', '170', ...extra],
    env: {
      PATH: process.env.PATH ?? '',
      HOME: configDir,
      MCP_REMOTE_CONFIG_DIR: configDir,
      BROWSER: 'true',
      NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS ?? '',
    },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr!.on('data', (d) => (stderr += d));
  const client = new Client({ name: 'desktop-client-stand-in', version: '1.0.0' });
  // The bridge answers `initialize` only once it is connected to the server, i.e. after the sign-in.
  const connected = client.connect(transport, { timeout: 175_000 });
  connected.catch(() => undefined);
  return { client, connected, port, stderr: () => stderr };
}

test('mcp-remote signs in to a private collection through the consent page, then lists and calls its tools over stdio', async (t) => {
  const { context, key } = await signedUp('remote_user');
  const c = await svc.createCollection(key, { name: 'Remote private', isPublic: false }, [`${TEXT}::slugify`]);
  const url = `${svc.url}/api/mcp/remote_user/${c.uid}/mcp`;
  const configDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mcp-remote-'));
  const { client, connected, port, stderr } = await bridge(url, configDir);
  try {
    // It prints the authorization URL it would have a browser open (the test's BROWSER opens nothing).
    const authUrl = await waitFor(
      () => /Please authorize this client by visiting:\s*(\S+)/.exec(stderr())?.[1],
      `the authorization URL on mcp-remote's stderr; so far:\n${stderr()}`,
      { ms: 120_000 },
    );
    const auth = new URL(authUrl);
    t.is(auth.origin + auth.pathname, `${svc.url}/oauth/authorize`);
    t.is(auth.searchParams.get('code_challenge_method'), 'S256');
    t.is(auth.searchParams.get('resource'), url);
    t.is(auth.searchParams.get('redirect_uri'), `http://127.0.0.1:${port}/oauth/callback`);

    const page = await context.newPage();
    await page.goto(authUrl);
    await page.getByRole('heading', { level: 1, name: 'Sign in an MCP client' }).waitFor();
    await page.getByTestId('consent-resources').waitFor();
    t.regex(await page.locator('main').innerText(), /Remote private/);
    await page.getByRole('button', { name: 'Approve' }).click();
    // The browser lands on mcp-remote's own callback server.
    await page.getByText('Authorization successful').waitFor({ timeout: 120_000 });

    await connected;
    t.is(client.getServerVersion()?.title, 'Remote private');
    t.deepEqual(
      (await client.listTools()).tools.map((x) => x.name),
      ['slugify'],
    );
    const r = (await client.callTool({ name: 'slugify', arguments: { text: 'Through The Bridge' } })) as CallToolResult;
    t.falsy(r.isError, JSON.stringify(r));
    t.deepEqual(r.structuredContent, { slug: 'through-the-bridge', length: 18 });
    // Its tokens are in the temp config dir, not in the user's home.
    const saved = await fs.readdir(configDir, { recursive: true });
    t.true(
      saved.some((f) => f.endsWith('tokens.json')),
      saved.join(', '),
    );
    // The grant shows in the account settings' list, under the name mcp-remote registered.
    const grants = await context.request.get(`${svc.url}/api/auth/me/oauth-grants`);
    t.regex(JSON.stringify((await grants.json()).data), /MCP CLI Proxy/);
    await client.close();

    // Started again (as a desktop client does at each launch): the saved tokens are used, no sign-in is asked.
    const again = await bridge(url, configDir);
    try {
      await again.connected;
      t.deepEqual(
        (await again.client.listTools()).tools.map((x) => x.name),
        ['slugify'],
      );
      t.notRegex(again.stderr(), /Please authorize/);
    } finally {
      await again.client.close();
    }
  } finally {
    await client.close();
    await context.close();
    await fs.rm(configDir, { recursive: true, force: true });
  }
});
