/**
 * Accounts for people: sign-up modes, sign-in, the session cookie and its CSRF token, sign-out (here and everywhere),
 * sign-in limits, and that a session is the same caller as a key to the rest of the API.
 */
import test from 'ava';
import { startService, type Service } from './helpers/service.js';
import { settle } from './helpers/wait.js';

let open: Service;
let invite: Service;
let closed: Service;
test.before(async () => {
  [open, invite, closed] = await Promise.all([
    startService({ worker: false, env: { LOGIN_ATTEMPTS_PER_ACCOUNT: '5', LOGIN_ATTEMPTS_PER_IP: '40' } }),
    startService({ worker: false, env: { SIGNUP: 'invite' } }),
    startService({ worker: false, env: { NODE_ENV: 'production' } }),
  ]);
});
test.after.always(() => Promise.all([open, invite, closed].map((s) => s?.close())));

const PASSWORD = 'correct horse battery';

/** The session cookie (name=value) from a response, if one was set. */
function cookieOf(res: { headers: Headers }): string | undefined {
  const set = res.headers.getSetCookie().find((c) => c.startsWith('toolshed_session='));
  return set?.split(';')[0];
}

async function signUp(svc: Service, username: string, extra: Record<string, unknown> = {}) {
  const res = await svc.request('POST', '/api/auth/signup', { body: { username, password: PASSWORD, ...extra } });
  return { res, cookie: cookieOf(res), csrf: res.body?.data?.csrfToken as string | undefined };
}

test('open sign-up makes a session cookie: HttpOnly, SameSite=Lax, not Secure over plain HTTP; only its hash is stored', async (t) => {
  const { res, cookie, csrf } = await signUp(open, 'alice');
  t.is(res.status, 201);
  t.like(res.body.data.user, { username: 'alice', tier: 'free' });
  t.truthy(csrf);
  const raw = res.headers.getSetCookie().find((c) => c.startsWith('toolshed_session='))!;
  t.regex(raw, /httponly/i);
  t.regex(raw, /samesite=lax/i);
  t.notRegex(raw, /secure/i);
  const token = cookie!.split('=')[1];
  const rows = await open.api.deps.db('sessions').select('*');
  t.false(JSON.stringify(rows).includes(token));
  const user = await open.api.deps.db('users').where({ username: 'alice' }).first('password_hash');
  t.regex(user.password_hash, /^scrypt\$32768\$8\$1\$/);
  t.false(user.password_hash.includes(PASSWORD));
  const me = await open.request('GET', '/api/auth/me', { headers: { cookie: cookie! } });
  t.is(me.status, 200);
  t.like(me.body.data, { via: 'session', csrfToken: csrf, user: { username: 'alice' } });
  t.is(me.body.data.scenarioQuota.limit, 50);
});

test('the cookie is Secure when the request came over TLS through a trusted proxy', async (t) => {
  const svc = await startService({ worker: false, env: { TRUST_PROXY: '1' } });
  try {
    const res = await svc.request('POST', '/api/auth/signup', {
      body: { username: 'tls', password: PASSWORD },
      headers: { 'x-forwarded-proto': 'https', 'x-forwarded-for': '203.0.113.5' },
    });
    t.is(res.status, 201);
    t.regex(res.headers.getSetCookie().join('\n'), /toolshed_session=[^\n]*secure/i);
  } finally {
    await svc.close();
  }
});

test('a session is the same caller as a key: writes need the CSRF token, API keys never do', async (t) => {
  const { cookie, csrf } = await signUp(open, 'bob');
  const headers = { cookie: cookie! };
  const noCsrf = await open.request('POST', '/api/keys', { headers, body: { name: 'cli' } });
  t.is(noCsrf.status, 403);
  t.is(noCsrf.body.error.code, 'FORBIDDEN');
  const wrong = await open.request('POST', '/api/keys', { headers: { ...headers, 'x-csrf-token': 'nope' }, body: { name: 'cli' } });
  t.is(wrong.status, 403);
  // Refusals cost the user's budget like any request, and say so.
  const remaining = [noCsrf, wrong].map((r) => Number(r.headers.get('x-ratelimit-remaining')));
  t.true(
    remaining.every((n) => Number.isInteger(n)),
    String(remaining),
  );
  t.is(remaining[1], remaining[0]! - 1);
  t.truthy(wrong.headers.get('x-ratelimit-limit'));
  const made = await open.request('POST', '/api/keys', { headers: { ...headers, 'x-csrf-token': csrf! }, body: { name: 'cli' } });
  t.is(made.status, 201);
  const key = made.body.data.key as string;
  // The key works without any CSRF token, and is the same user.
  const viaKey = await open.request('POST', '/api/collections', { key, body: { name: 'By key', isPublic: false } });
  t.is(viaKey.status, 201);
  const mine = await open.request('GET', '/api/auth/me/collections', { headers });
  t.deepEqual(
    mine.body.data.map((c: { uid: string }) => c.uid),
    ['by-key'],
  );
  t.is((await open.request('GET', '/api/collections/by-key', { headers })).status, 200, 'the owner sees the private collection');
  // Another user's session does not.
  const other = await signUp(open, 'mallory');
  t.is((await open.request('GET', '/api/collections/by-key', { headers: { cookie: other.cookie! } })).status, 404);
  const patch = await open.request('PATCH', '/api/collections/by-key', {
    headers: { cookie: other.cookie!, 'x-csrf-token': other.csrf! },
    body: { isPublic: true },
  });
  t.true([403, 404].includes(patch.status));
  // A key in the Authorization header wins over any cookie.
  const both = await open.request('GET', '/api/auth/me', { key, headers });
  t.is(both.body.data.via, 'key');
});

test('sign-in: right password gives a fresh session; wrong password and unknown users are the same 401', async (t) => {
  await signUp(open, 'carol');
  const ok = await open.request('POST', '/api/auth/login', { body: { username: 'CAROL', password: PASSWORD } });
  t.is(ok.status, 200);
  t.truthy(cookieOf(ok));
  const wrong = await open.request('POST', '/api/auth/login', { body: { username: 'carol', password: 'not the password' } });
  const unknown = await open.request('POST', '/api/auth/login', { body: { username: 'nobody-here', password: 'not the password' } });
  t.is(wrong.status, 401);
  t.is(unknown.status, 401);
  t.deepEqual(wrong.body, unknown.body);
  const bad = await open.request('POST', '/api/auth/login', { body: { username: 'carol' } });
  t.is(bad.status, 400);
  t.is(bad.body.error.code, 'VALIDATION_ERROR');
  const short = await open.request('POST', '/api/auth/signup', { body: { username: 'dave', password: 'short' } });
  t.is(short.status, 400);
  t.deepEqual(
    short.body.error.details.map((d: { path: string }) => d.path),
    ['body.password'],
  );
  const taken = await signUp(open, 'Carol');
  t.is(taken.res.status, 409);
});

test('users made by the admin endpoint have no password and cannot sign in', async (t) => {
  const u = await open.createUser({ username: 'keyonly' });
  const res = await open.request('POST', '/api/auth/login', { body: { username: u.username, password: PASSWORD } });
  t.is(res.status, 401);
});

test('sign-in attempts are limited per account (429 with Retry-After), even with the right password', async (t) => {
  await signUp(open, 'erin');
  for (let i = 0; i < 5; i++) {
    t.is((await open.request('POST', '/api/auth/login', { body: { username: 'erin', password: `guess-number-${i}` } })).status, 401);
  }
  const blocked = await open.request('POST', '/api/auth/login', { body: { username: 'erin', password: PASSWORD } });
  t.is(blocked.status, 429);
  t.is(blocked.body.error.code, 'RATE_LIMITED');
  t.truthy(blocked.headers.get('retry-after'));
  // Another account from the same address is not blocked by erin's count.
  await signUp(open, 'frank');
  t.is((await open.request('POST', '/api/auth/login', { body: { username: 'frank', password: PASSWORD } })).status, 200);
});

test('sign-out ends this session; sign-out everywhere ends them all', async (t) => {
  await signUp(open, 'grace');
  const login = async () => {
    const res = await open.request('POST', '/api/auth/login', { body: { username: 'grace', password: PASSWORD } });
    return { cookie: cookieOf(res)!, csrf: res.body.data.csrfToken as string };
  };
  const a = await login();
  const b = await login();
  const c = await login();
  const noCsrf = await open.request('POST', '/api/auth/logout', { headers: { cookie: a.cookie } });
  t.is(noCsrf.status, 403, 'sign-out is a write too');
  const out = await open.request('POST', '/api/auth/logout', { headers: { cookie: a.cookie, 'x-csrf-token': a.csrf } });
  t.is(out.status, 200);
  t.regex(out.headers.getSetCookie().join(''), /toolshed_session=;/);
  t.is((await open.request('GET', '/api/auth/me', { headers: { cookie: a.cookie } })).status, 401);
  t.is((await open.request('GET', '/api/auth/me', { headers: { cookie: b.cookie } })).status, 200);
  const all = await open.request('POST', '/api/auth/logout-all', { headers: { cookie: b.cookie, 'x-csrf-token': b.csrf } });
  t.is(all.status, 200);
  t.is((await open.request('GET', '/api/auth/me', { headers: { cookie: b.cookie } })).status, 401);
  t.is((await open.request('GET', '/api/auth/me', { headers: { cookie: c.cookie } })).status, 401);
  t.is((await open.request('POST', '/api/keys', { headers: { cookie: c.cookie, 'x-csrf-token': c.csrf }, body: {} })).status, 401);
});

test('SIGNUP=invite: sign-up needs an unused invitation from the admin endpoint; each works once', async (t) => {
  t.is((await signUp(invite, 'ivan')).res.status, 403);
  t.is((await invite.request('POST', '/api/admin/invitations', { body: {} })).status, 401);
  const inv = await invite.request('POST', '/api/admin/invitations', {
    headers: { authorization: `Bearer ${invite.config.ADMIN_TOKEN}` },
    body: { note: 'for ivan' },
  });
  t.is(inv.status, 201);
  t.regex(inv.body.data.url, /\/signup\?invite=tsi_/);
  const token = inv.body.data.token as string;
  t.is((await signUp(invite, 'ivan', { invitation: 'tsi_' + 'x'.repeat(32) })).res.status, 403);
  t.is((await invite.api.deps.db('users').where({ username: 'ivan' })).length, 0, 'a refused sign-up leaves no user');
  t.is((await signUp(invite, 'ivan', { invitation: token })).res.status, 201);
  t.is((await signUp(invite, 'judy', { invitation: token })).res.status, 403, 'single use');
  const opts = await invite.request('GET', '/api/auth/options');
  t.is(opts.body.data.signup, 'invite');
});

test('NODE_ENV=production closes sign-up by default', async (t) => {
  t.is(closed.config.SIGNUP, 'closed');
  const res = await signUp(closed, 'kate');
  t.is(res.res.status, 403);
  t.is(res.res.body.error.code, 'FORBIDDEN');
});

test('an unknown or expired session cookie is anonymous and is cleared', async (t) => {
  const { cookie } = await signUp(open, 'heidi');
  const heidi = await open.api.deps.db('users').where({ username: 'heidi' }).first('id');
  await open.api.deps
    .db('sessions')
    .where({ user_id: heidi.id })
    .update({ expires_at: new Date(Date.now() - 1000) });
  const me = await open.request('GET', '/api/auth/me', { headers: { cookie: cookie! } });
  t.is(me.status, 401);
  t.regex(me.headers.getSetCookie().join(''), /toolshed_session=;/);
  const tools = await open.request('GET', '/api/tools', { headers: { cookie: 'toolshed_session=tss_garbage' } });
  t.is(tools.status, 200);
});

test("a key's use is recorded: GET /api/keys shows lastUsedAt once the key has authenticated", async (t) => {
  const { cookie, csrf } = await signUp(open, 'ursula');
  const made = await open.request('POST', '/api/keys', { headers: { cookie: cookie!, 'x-csrf-token': csrf! }, body: { name: 'used' } });
  t.is(made.body.data.lastUsedAt, null);
  const key = made.body.data.key as string;
  const before = Date.now();
  t.is((await open.request('GET', '/api/auth/me', { key })).status, 200);
  // The UPDATE is not awaited by the request: wait for it, bounded.
  const lastUsedAt = await settle(
    async () => {
      const keys = await open.request('GET', '/api/keys', { headers: { cookie: cookie! } });
      return keys.body.data.find((k: { id: string }) => k.id === made.body.data.id).lastUsedAt as string | null;
    },
    (at) => !!at,
    { ms: 60_000 },
  );
  t.truthy(lastUsedAt);
  t.true(Date.parse(lastUsedAt!) >= before - 5_000);
  // Throttled: a second use within the minute writes nothing (an absence cannot be polled for; a short wait it is).
  const row = await open.api.deps.db('api_keys').where({ id: made.body.data.id }).first('last_used_at');
  await open.request('GET', '/api/auth/me', { key });
  await new Promise((r) => setTimeout(r, 200));
  const again = await open.api.deps.db('api_keys').where({ id: made.body.data.id }).first('last_used_at');
  t.deepEqual(again.last_used_at, row.last_used_at);
});
