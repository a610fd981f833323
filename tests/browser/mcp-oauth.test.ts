/**
 * MCP authorization (OAuth 2.1; issue 44 item 1), driven by the MCP TypeScript SDK's own OAuth client
 * (@modelcontextprotocol/sdk/client/auth.js, through its Streamable HTTP transport): discovery from a 401, dynamic
 * registration, authorization with PKCE through the web app's consent page in Chromium, the token, then `tools/list`
 * on the private collection. The token is refused on another collection; a refresh rotates; revoking the grant in the
 * account settings makes the next request 401.
 */
import test from 'ava';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BrowserContext, Page } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { checkAccessibility, decideOnConsentPage, startWebService, watchPage } from './helpers.js';
import type { Service } from '../helpers/service.js';
import type { Browser } from 'playwright-core';

let svc: Service;
let browser: Browser;
/**
 * The client's redirect URI: a loopback server of the test's own, as a native MCP client listens for its callback
 * (mcp-remote does). A page route in its place is not seen by Chromium's headless shell on a redirect.
 */
let callbackServer: http.Server;
let CALLBACK: string;

test.before(async () => {
  callbackServer = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('back at the client'));
  await new Promise<void>((resolve) => callbackServer.listen(0, '127.0.0.1', resolve));
  CALLBACK = `http://127.0.0.1:${(callbackServer.address() as AddressInfo).port}/oauth-callback`;
  ({ svc, browser } = await startWebService());
});
test.after.always(async () => {
  await browser?.close();
  await svc?.close();
  callbackServer?.close();
});

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const post = (url: string, headers: Record<string, string> = {}, body: unknown = INIT) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });

/** A browser signed up as `username`, and an API key of theirs (made through the session, as the settings page does). */
async function signedUp(username: string): Promise<{ context: BrowserContext; key: string }> {
  const context = await browser.newContext();
  const res = await context.request.post(`${svc.url}/api/auth/signup`, { data: { username, password: 'a long enough password' } });
  if (res.status() !== 201) throw new Error(await res.text());
  const csrf = (await res.json()).data.csrfToken as string;
  const k = await context.request.post(`${svc.url}/api/keys`, { data: { name: 'setup' }, headers: { 'x-csrf-token': csrf } });
  if (k.status() !== 201) throw new Error(await k.text());
  return { context, key: (await k.json()).data.key };
}

/** The SDK's OAuth client side, kept in memory; the authorization URL it would open is handed to the test. */
class TestProvider implements OAuthClientProvider {
  info?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = '';
  authorizationUrl?: URL;
  get redirectUrl() {
    return CALLBACK;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Test MCP client',
      redirect_uris: [CALLBACK],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** Opens the authorization URL in the signed-in browser, approves or denies on the consent page; the callback's query. */
async function consent(page: Page, url: URL, approve: boolean, look?: () => Promise<void>): Promise<URLSearchParams> {
  await decideOnConsentPage(page, url.href, approve ? 'Approve' : 'Deny', look);
  await page.getByText('back at the client').waitFor();
  const callback = new URL(page.url());
  if (`${callback.origin}${callback.pathname}` !== CALLBACK) throw new Error(`the browser ended at ${page.url()}, not the client's callback`);
  return callback.searchParams;
}

test.serial(
  'without credentials: 401 with the challenge; metadata names the authorization server, which offers PKCE S256, CIMD and registration',
  async (t) => {
    const { key } = await signedUp('meta');
    const priv = await svc.createCollection(key, { name: 'Secret', isPublic: false });
    const pub = await svc.createCollection(key, { name: 'Open', isPublic: true });
    const url = (uid: string, form = 'http') => `${svc.url}/api/mcp/meta/${uid}/${form}`;

    for (const target of [url(priv.uid), url('no-such-collection')]) {
      const res = await post(target);
      t.is(res.status, 401, target);
      t.is(
        res.headers.get('www-authenticate')?.split(',')[0],
        `Bearer resource_metadata="${svc.url}/.well-known/oauth-protected-resource${new URL(target).pathname}"`,
      );
    }
    const bad = await post(url(priv.uid), { authorization: 'Bearer not-a-real-token-0123456789abcdef' });
    t.is(bad.status, 401);
    t.regex(bad.headers.get('www-authenticate') ?? '', /^Bearer resource_metadata="[^"]+", .*error="invalid_token"/);
    t.is((await post(url(pub.uid))).status, 200, 'a public collection stays open');
    // Someone signed in who may not see it: 404, as before.
    const other = await svc.createUser({ username: 'outsider' });
    t.is((await post(url(priv.uid), { authorization: `Bearer ${other.key}` })).status, 404);

    const prm = await (await fetch(`${svc.url}/.well-known/oauth-protected-resource/api/mcp/meta/${priv.uid}/mcp`)).json();
    t.is(prm.resource, url(priv.uid, 'mcp'));
    t.deepEqual(prm.authorization_servers, [svc.url]);
    const root = await (await fetch(`${svc.url}/.well-known/oauth-protected-resource`)).json();
    t.deepEqual(root.authorization_servers, [svc.url]);
    const as = await (await fetch(`${svc.url}/.well-known/oauth-authorization-server`)).json();
    t.is(as.issuer, svc.url);
    t.deepEqual(as.code_challenge_methods_supported, ['S256']);
    t.true(as.client_id_metadata_document_supported);
    t.true(as.authorization_response_iss_parameter_supported);
    t.truthy(as.registration_endpoint);
    t.true(as.grant_types_supported.includes('authorization_code') && as.grant_types_supported.includes('refresh_token'));
  },
);

test.serial(
  'the SDK OAuth client signs in through the consent page; the token works on its collection only; refresh rotates; revoking in settings ends it',
  async (t) => {
    const { context, key } = await signedUp('alice');
    const a = await svc.createCollection(key, { name: 'Alpha tools', isPublic: false });
    const b = await svc.createCollection(key, { name: 'Beta tools', isPublic: false });
    const urlA = `${svc.url}/api/mcp/alice/${a.uid}/http`;
    const urlB = `${svc.url}/api/mcp/alice/${b.uid}/http`;
    const page = await context.newPage();
    const problems = watchPage(page);

    // Discovery from the 401, dynamic registration, then the authorization URL the client would open.
    const provider = new TestProvider();
    const first = new Client({ name: 'oauth-test', version: '1' });
    await t.throwsAsync(first.connect(new StreamableHTTPClientTransport(new URL(urlA), { authProvider: provider })), { instanceOf: UnauthorizedError });
    t.truthy(provider.info?.client_id, 'registered dynamically');
    const authUrl = provider.authorizationUrl!;
    t.is(authUrl.searchParams.get('code_challenge_method'), 'S256');
    t.is(authUrl.searchParams.get('resource'), urlA);

    // The consent page says who asks and for what; approving sends the browser back to the client with a code and `iss`.
    let seen = '';
    const callback = await consent(page, authUrl, true, async () => {
      seen = await page.locator('main').innerText();
      await checkAccessibility(t, page, 'consent');
    });
    t.regex(seen, /Test MCP client/);
    t.regex(seen, /Alpha tools/);
    t.is(callback.get('iss'), svc.url, 'RFC 9207: iss in the authorization response');
    const code = callback.get('code');
    t.truthy(code);

    const transport = new StreamableHTTPClientTransport(new URL(urlA), { authProvider: provider });
    await transport.finishAuth(code!);
    t.truthy(provider.saved?.access_token);
    t.truthy(provider.saved?.refresh_token);
    const client = new Client({ name: 'oauth-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(urlA), { authProvider: provider }));
    t.deepEqual((await client.listTools()).tools, []);
    await client.close();

    // The same token on another collection of the same user: refused, with the challenge.
    const access = provider.saved!.access_token;
    // The tokens are stored by their hash only, as API keys are: a read of the table gives no usable token.
    const stored = JSON.stringify(await svc.api.deps.db('oauth_models').select('id', 'payload'));
    t.false(stored.includes(access), 'the access token is not stored as it is');
    t.false(stored.includes(provider.saved!.refresh_token!), 'nor the refresh token');
    const onB = await post(urlB, { authorization: `Bearer ${access}` });
    t.is(onB.status, 401);
    t.regex(onB.headers.get('www-authenticate') ?? '', /resource_metadata=/);
    // And not an API key elsewhere in the API.
    t.is((await svc.request('GET', '/api/keys', { key: access })).status, 401);

    // Refresh: a new pair (rotation: a new refresh token each time).
    const as = await (await fetch(`${svc.url}/.well-known/oauth-authorization-server`)).json();
    const refresh = (token: string) =>
      fetch(as.token_endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token, client_id: provider.info!.client_id, resource: urlA }),
      });
    const old = provider.saved!.refresh_token!;
    const r1 = await refresh(old);
    t.is(r1.status, 200);
    const fresh = (await r1.json()) as OAuthTokens;
    t.not(fresh.refresh_token, old);
    t.is((await post(urlA, { authorization: `Bearer ${fresh.access_token}` })).status, 200);

    // Settings list the grant; revoking it ends the tokens at once.
    page.on('dialog', (d) => void d.accept());
    await page.goto(`${svc.url}/settings`);
    const grants = page.getByRole('table', { name: 'MCP clients signed in' });
    await grants.waitFor();
    t.regex(await grants.innerText(), /Test MCP client[\s\S]*\/api\/mcp\/alice\//);
    await grants.getByRole('button', { name: 'Revoke client Test MCP client' }).click();
    await page.getByText('None.').waitFor();
    t.is((await post(urlA, { authorization: `Bearer ${fresh.access_token}` })).status, 401);
    t.is((await refresh(fresh.refresh_token!)).status, 400);
    t.deepEqual(problems, []);
    await context.close();
  },
);

test.serial('denying on the consent page gives the client access_denied and no grant; the consent link is worthless in another browser', async (t) => {
  const { context, key } = await signedUp('denier');
  const c = await svc.createCollection(key, { name: 'Kept', isPublic: false });
  const provider = new TestProvider();
  await t.throwsAsync(
    new Client({ name: 'x', version: '1' }).connect(
      new StreamableHTTPClientTransport(new URL(`${svc.url}/api/mcp/denier/${c.uid}/http`), { authProvider: provider }),
    ),
    { instanceOf: UnauthorizedError },
  );
  const page = await context.newPage();
  // The consent link is bound to the browser that started the request: someone else signed in gets 404.
  const { context: elsewhere } = await signedUp('forwarded-to');
  const back = await consent(page, provider.authorizationUrl!, false, async () => {
    const uid = new URL(page.url()).pathname.split('/').at(-1)!;
    t.is((await elsewhere.request.get(`${svc.url}/api/auth/oauth/interactions/${uid}/details`)).status(), 404);
    t.is((await elsewhere.request.get(`${svc.url}/api/auth/oauth/interactions/${uid}`, { maxRedirects: 0 })).status(), 404);
  });
  t.is(back.get('error'), 'access_denied');
  t.is(back.get('code'), null);
  const list = await context.request.get(`${svc.url}/api/auth/me/oauth-grants`);
  t.deepEqual((await list.json()).data, []);
  await context.close();
});
