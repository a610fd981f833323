/**
 * Single sign-on against a real OpenID provider (oidc-provider, on a loopback port, with its development sign-in
 * pages), driven like a browser: fetch, redirects followed by hand, a cookie jar per origin, the provider's forms
 * submitted. Sign-up rules hold for identities no account is linked to.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import Provider from 'oidc-provider';
import { startService, type Service } from './helpers/service.js';

const CLIENT = { client_id: 'toolshed', client_secret: 'a-client-secret-for-tests' };

let server: http.Server;
let issuer: string;
let open: Service;
let closed: Service;
let invite: Service;

test.before(async () => {
  // The provider's port first (the services need the issuer), its configuration after (it needs their callbacks).
  server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const env = { OIDC_ISSUER: issuer, OIDC_CLIENT_ID: CLIENT.client_id, OIDC_CLIENT_SECRET: CLIENT.client_secret, OIDC_LABEL: 'Test SSO' };
  [open, closed, invite] = await Promise.all([
    startService({ worker: false, env }),
    startService({ worker: false, env: { ...env, SIGNUP: 'closed' } }),
    startService({ worker: false, env: { ...env, SIGNUP: 'invite' } }),
  ]);
  const provider = new Provider(issuer, {
    clients: [{ ...CLIENT, redirect_uris: [open, closed, invite].map((s) => `${s.url}/api/auth/oidc/callback`) }],
    cookies: { keys: ['cookie-key-for-tests'] },
    features: { devInteractions: { enabled: true } },
    // Profile claims come from userinfo (the ID token holds only `sub`): the service must ask for them.
    claims: { openid: ['sub'], profile: ['name', 'preferred_username'], email: ['email'] },
    findAccount: async (_ctx: unknown, sub: string) => ({
      accountId: sub,
      claims: async () => ({ sub, preferred_username: sub, name: `${sub[0]!.toUpperCase()}${sub.slice(1)} Lovelace` }),
    }),
  });
  server.on('request', provider.callback());
});
test.after.always(async () => {
  await Promise.all([open, closed, invite].map((s) => s?.close()));
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

type Jar = Map<string, Map<string, string>>;

function keep(jar: Jar, url: URL, res: Response) {
  const cookies = jar.get(url.host) ?? new Map<string, string>();
  jar.set(url.host, cookies);
  for (const c of res.headers.getSetCookie()) {
    const [pair, ...attrs] = c.split(';');
    const i = pair!.indexOf('=');
    const [name, value] = [pair!.slice(0, i).trim(), pair!.slice(i + 1).trim()];
    const gone = !value || attrs.some((a) => /max-age=0\b/i.test(a.trim()) || /expires=thu, 01 jan 1970/i.test(a.trim()));
    if (gone) cookies.delete(name);
    else cookies.set(name, value);
  }
}
const cookieHeader = (jar: Jar, url: URL) => [...(jar.get(url.host) ?? new Map()).entries()].map(([k, v]) => `${k}=${v}`).join('; ');

/**
 * Goes to `start` like a browser: follows redirects, signs in as `login` at the provider and consents; stops at the
 * first page of the service that is not under /api/. Returns that URL and the jar.
 */
async function signInThroughProvider(svc: Service, start: string, login: string, jar: Jar = new Map()): Promise<{ landed: URL; jar: Jar }> {
  let url = new URL(start, svc.url);
  let init: { method: string; body?: string; headers?: Record<string, string> } = { method: 'GET' };
  for (let hop = 0; hop < 25; hop++) {
    if (url.origin === svc.url && !url.pathname.startsWith('/api/')) return { landed: url, jar };
    const res = await fetch(url, { ...init, redirect: 'manual', headers: { ...init.headers, cookie: cookieHeader(jar, url) } });
    keep(jar, url, res);
    if (res.status >= 300 && res.status < 400) {
      url = new URL(res.headers.get('location')!, url);
      init = { method: 'GET' };
      continue;
    }
    const html = await res.text();
    const form = /<form[^>]*action="([^"]+)"[^>]*method="post"/i.exec(html);
    const prompt = /name="prompt" value="([^"]+)"/.exec(html)?.[1];
    if (res.status !== 200 || !form || !prompt) throw new Error(`unexpected page at ${url}: ${res.status} ${html.slice(0, 300)}`);
    url = new URL(form[1]!.replace(/&amp;/g, '&'), url);
    const fields: Record<string, string> = prompt === 'login' ? { prompt, login, password: 'anything' } : { prompt };
    init = { method: 'POST', body: new URLSearchParams(fields).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } };
  }
  throw new Error('too many hops');
}

async function ssoStart(svc: Service): Promise<string> {
  const options = await svc.request('GET', '/api/auth/options');
  return options.body.data.oidc.startUrl;
}

const sessionCookie = (jar: Jar, svc: Service) => {
  const value = jar.get(new URL(svc.url).host)?.get('toolshed_session');
  return value ? `toolshed_session=${value}` : undefined;
};

test('the sign-in page offers single sign-on; the provider signs in a new user (open sign-up), then the same one again', async (t) => {
  const options = await open.request('GET', '/api/auth/options');
  t.deepEqual(options.body.data.oidc, { label: 'Test SSO', startUrl: '/api/auth/oidc/start' });
  const first = await signInThroughProvider(open, await ssoStart(open), 'ada');
  t.is(first.landed.pathname, '/');
  const cookie = sessionCookie(first.jar, open);
  t.truthy(cookie);
  const me = await open.request('GET', '/api/auth/me', { headers: { cookie: cookie! } });
  t.is(me.status, 200);
  t.like(me.body.data, { via: 'session', user: { username: 'ada', name: 'Ada Lovelace', tier: 'free' } });
  const row = await open.api.deps.db('users').where({ username: 'ada' }).first('oidc_issuer', 'oidc_subject', 'password_hash');
  t.deepEqual(row, { oidc_issuer: issuer, oidc_subject: 'ada', password_hash: null });

  // Again, in a fresh browser: the same user, not a new one.
  const second = await signInThroughProvider(open, await ssoStart(open), 'ada');
  const again = await open.request('GET', '/api/auth/me', { headers: { cookie: sessionCookie(second.jar, open)! } });
  t.is(again.body.data.user.id, me.body.data.user.id);
  t.is((await open.api.deps.db('users').whereILike('username', 'ada%')).length, 1);
});

test('a new identity whose preferred username is taken gets a free one', async (t) => {
  await open.request('POST', '/api/auth/signup', { body: { username: 'grace', password: 'correct horse battery' } });
  const { jar } = await signInThroughProvider(open, await ssoStart(open), 'grace');
  const me = await open.request('GET', '/api/auth/me', { headers: { cookie: sessionCookie(jar, open)! } });
  t.is(me.body.data.user.username, 'grace-2');
});

test('SIGNUP=closed: an unknown identity is refused; a linked user signs in', async (t) => {
  const refused = await signInThroughProvider(closed, await ssoStart(closed), 'mallory');
  t.is(refused.landed.pathname + refused.landed.search, '/login?sso=closed');
  t.falsy(sessionCookie(refused.jar, closed));
  t.is((await closed.api.deps.db('users').where({ oidc_subject: 'mallory' })).length, 0);

  const linked = await closed.createUser({ username: 'linked' });
  await closed.api.deps.db('users').where({ id: linked.id }).update({ oidc_issuer: issuer, oidc_subject: 'linda' });
  const ok = await signInThroughProvider(closed, await ssoStart(closed), 'linda');
  t.is(ok.landed.pathname, '/');
  const me = await closed.request('GET', '/api/auth/me', { headers: { cookie: sessionCookie(ok.jar, closed)! } });
  t.is(me.body.data.user.username, 'linked');
});

test('SIGNUP=invite: an unknown identity is refused; signed in with a password, the same browser links it', async (t) => {
  const refused = await signInThroughProvider(invite, await ssoStart(invite), 'ivan');
  t.is(refused.landed.search, '?sso=invite');
  t.is((await invite.api.deps.db('users').where({ oidc_subject: 'ivan' })).length, 0);

  const inv = await invite.request('POST', '/api/admin/invitations', { headers: { authorization: `Bearer ${invite.config.ADMIN_TOKEN}` }, body: {} });
  const signup = await invite.request('POST', '/api/auth/signup', {
    body: { username: 'ivan', password: 'correct horse battery', invitation: inv.body.data.token },
  });
  t.is(signup.status, 201);
  const jar: Jar = new Map();
  keep(jar, new URL(invite.url), new Response(null, { headers: [['set-cookie', signup.headers.getSetCookie()[0]!]] }));
  const linked = await signInThroughProvider(invite, await ssoStart(invite), 'ivan-at-provider', jar);
  t.is(linked.landed.pathname, '/');
  const row = await invite.api.deps.db('users').where({ username: 'ivan' }).first('oidc_subject');
  t.is(row.oidc_subject, 'ivan-at-provider');
  // From now on the identity alone signs in, in a fresh browser.
  const fresh = await signInThroughProvider(invite, await ssoStart(invite), 'ivan-at-provider');
  const me = await invite.request('GET', '/api/auth/me', { headers: { cookie: sessionCookie(fresh.jar, invite)! } });
  t.is(me.body.data.user.username, 'ivan');
});

test('a callback that this browser did not start, or a replayed one, makes no session', async (t) => {
  const none = await fetch(`${open.url}/api/auth/oidc/callback?code=x&state=y`, { redirect: 'manual' });
  t.is(none.status, 302);
  t.is(none.headers.get('location'), '/login?sso=expired');
  t.false(none.headers.getSetCookie().some((c) => c.startsWith('toolshed_session=tss_')));

  // Stop at the callback, use it once, then replay it with the same flow cookie.
  const jar: Jar = new Map();
  let url = new URL(await ssoStart(open), open.url);
  const res = await fetch(url, { redirect: 'manual' });
  keep(jar, url, res);
  const flowCookie = cookieHeader(jar, url);
  const { landed } = await signInThroughProvider(open, res.headers.get('location')!, 'replayer', jar);
  t.is(landed.pathname, '/');
  url = new URL(`${open.url}/api/auth/oidc/callback?code=x&state=y`);
  const replay = await fetch(url, { redirect: 'manual', headers: { cookie: flowCookie } });
  t.is(replay.headers.get('location'), '/login?sso=expired');
});

test('without OIDC settings there is no single sign-on', async (t) => {
  const svc = await startService({ worker: false });
  try {
    t.is((await svc.request('GET', '/api/auth/options')).body.data.oidc, null);
    const res = await svc.request('GET', '/api/auth/oidc/start');
    t.is(res.status, 404);
  } finally {
    await svc.close();
  }
});
