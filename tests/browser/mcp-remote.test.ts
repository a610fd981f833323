/**
 * `mcp-remote` (the stdio bridge desktop clients use for remote servers; a pinned devDependency, nobody here wrote it)
 * against a PRIVATE collection with no header: it discovers the authorization server from our 401, registers, prints
 * the authorization URL and listens on its own callback port; the consent page is approved in Chromium, which sends
 * the browser to that port; then the test speaks MCP over the bridge's stdio with the TS SDK's StdioClientTransport.
 * Its config dir is a temp dir (MCP_REMOTE_CONFIG_DIR); BROWSER=true makes the `open` it bundles "open" nothing.
 * Started again with `--protocol auto` it reuses its tokens and bridges to the 2026-07-28 era; a second test signs it
 * in with a client ID metadata document.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import test from 'ava';
import type { Browser, BrowserContext } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { decideOnConsentPage, startWebService } from './helpers.js';
import { EXAMPLES_DIR, type Service } from '../helpers/service.js';
import { freePort, killAll, serviceEnv, spawnProcess, until } from '../helpers/processes.js';
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
  await killAll();
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
async function bridge(url: string, configDir: string, extra: string[] = [], port?: number) {
  port ??= await freePort();
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
  let failed: Error | undefined;
  connected.catch((e: Error) => (failed = e));
  /** Its stderr so far; throws once the bridge has given up (a wait on its output ends then, not at its bound). */
  const output = () => {
    if (failed) throw new Error(`mcp-remote gave up (${failed.message}); its stderr:\n${stderr}`);
    return stderr;
  };
  return { client, connected, port, stderr: output };
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
      "the authorization URL on mcp-remote's stderr",
      { ms: 120_000 },
    );
    const auth = new URL(authUrl);
    t.is(auth.origin + auth.pathname, `${svc.url}/oauth/authorize`);
    t.is(auth.searchParams.get('code_challenge_method'), 'S256');
    t.is(auth.searchParams.get('resource'), url);
    t.is(auth.searchParams.get('redirect_uri'), `http://127.0.0.1:${port}/oauth/callback`);

    const page = await context.newPage();
    await decideOnConsentPage(page, authUrl, 'Approve', async () => {
      t.regex(await page.locator('main').innerText(), /Remote private/);
    });
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

    // Started again (as a desktop client does at each launch): the saved tokens are used, no sign-in is asked. This
    // time with `--protocol auto`: the bridge probes server/discover and speaks 2026-07-28 to the collection.
    const again = await bridge(url, configDir, ['--protocol', 'auto'], port);
    try {
      await again.connected;
      t.deepEqual(
        (await again.client.listTools()).tools.map((x) => x.name),
        ['slugify'],
      );
      const modern = (await again.client.callTool({ name: 'slugify', arguments: { text: 'Modern Bridge' } })) as CallToolResult;
      t.deepEqual(modern.structuredContent, { slug: 'modern-bridge', length: 13 });
      t.notRegex(again.stderr(), /Please authorize/);
      t.regex(again.stderr(), /Remote server speaks MCP 2026-07-28/);
    } finally {
      await again.client.close();
    }
  } finally {
    await client.close();
    await context.close();
    await fs.rm(configDir, { recursive: true, force: true });
  }
});

/** A self-signed certificate for 127.0.0.1 (openssl), and an https server on loopback serving `document` at /client.json. */
async function metadataHost(dir: string, document: (url: string) => object) {
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  await promisify(execFile)('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
    '-keyout',
    key,
    '-out',
    cert,
  ]);
  const fetched: string[] = [];
  const server = https.createServer({ key: await fs.readFile(key), cert: await fs.readFile(cert) }, (req, res) => {
    fetched.push(req.url ?? '');
    if (req.url !== '/client.json') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(document(docUrl)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const docUrl = `https://127.0.0.1:${(server.address() as AddressInfo).port}/client.json`;
  return { cert, docUrl, fetched, close: () => new Promise((resolve) => server.close(resolve)) };
}

test('mcp-remote signs in with a client ID metadata document (served over https, its CA given the API by NODE_EXTRA_CA_CERTS, its loopback host allowed by OAUTH_CLIENT_METADATA_HOSTS)', async (t) => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mcp-cimd-'));
  const callbackPort = await freePort();
  const redirect = `http://127.0.0.1:${callbackPort}/oauth/callback`;
  const host = await metadataHost(dir, (clientId) => ({
    client_id: clientId,
    client_name: 'Metadata document client',
    redirect_uris: [redirect],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  }));
  // Without the allowance (the test's own service) a loopback document is never fetched.
  const refused = await fetch(
    `${svc.url}/oauth/authorize?${new URLSearchParams({ client_id: host.docUrl, response_type: 'code', redirect_uri: redirect, code_challenge: 'x'.repeat(43), code_challenge_method: 'S256', scope: 'mcp' })}`,
    { redirect: 'manual' },
  );
  t.regex(await refused.text(), /invalid_client/);
  t.deepEqual(host.fetched, []);
  // An API process of its own (the same database), started as an operator would with an internal CA.
  const apiPort = await freePort();
  const api = spawnProcess(
    'api/server.ts',
    serviceEnv(svc.config, svc.databaseUrl, {
      PORT: String(apiPort),
      HOST: '127.0.0.1',
      WEB_DIR: svc.config.WEB_DIR,
      NODE_EXTRA_CA_CERTS: host.cert,
      OAUTH_CLIENT_METADATA_HOSTS: '127.0.0.1',
    }),
  );
  const base = `http://127.0.0.1:${apiPort}`;
  let client: Client | undefined;
  let context: BrowserContext | undefined;
  try {
    await until(async () => /API listening/.test(api.output()), 120_000, `the API process; so far:\n${api.output()}`);
    const owner = await signedUp('cimd_user');
    context = owner.context;
    const c = await svc.createCollection(owner.key, { name: 'CIMD private', isPublic: false }, [`${TEXT}::slugify`]);
    const url = `${base}/api/mcp/cimd_user/${c.uid}/mcp`;
    const run = await bridge(url, dir, ['--client-metadata-url', host.docUrl], callbackPort);
    client = run.client;
    const authUrl = await waitFor(
      () => /Please authorize this client by visiting:\s*(\S+)/.exec(run.stderr())?.[1],
      "the authorization URL on mcp-remote's stderr",
      { ms: 120_000 },
    );
    t.is(new URL(authUrl).searchParams.get('client_id'), host.docUrl, 'the document URL is the client_id: no registration');

    const page = await context.newPage();
    await decideOnConsentPage(page, authUrl, 'Approve', async () => {
      const shown = await page.locator('main').innerText();
      t.regex(shown, /Metadata document client/, 'the name comes from the document the server fetched');
      t.regex(shown, /CIMD private/);
    });
    await page.getByText('Authorization successful').waitFor({ timeout: 120_000 });
    await run.connected;
    t.deepEqual(
      (await client.listTools()).tools.map((x) => x.name),
      ['slugify'],
    );
    const r = (await client.callTool({ name: 'slugify', arguments: { text: 'By Document' } })) as CallToolResult;
    t.deepEqual(r.structuredContent, { slug: 'by-document', length: 11 });
    t.true(host.fetched.includes('/client.json'), 'the authorization server fetched the document');
    const registered = await svc.api.deps.db('oauth_models').where({ name: 'Client' }).select('payload');
    t.false(JSON.stringify(registered).includes('Metadata document client'), 'nothing was registered');
  } finally {
    await client?.close();
    await context?.close();
    await host.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
});
