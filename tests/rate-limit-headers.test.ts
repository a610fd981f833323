/**
 * SPEC.md "Rate limits": every response (API, MCP, registry, /health, web pages and assets) carries X-RateLimit-Limit,
 * X-RateLimit-Remaining and X-RateLimit-Reset, always as integers; a response that spends no budget still reports the
 * caller's, without spending. Unlimited callers (the admin token, an enterprise key with no limit configured) get
 * 2147483647 as limit and remaining (docs/api.md).
 *
 * Each test is its own anonymous caller (X-Forwarded-For, with TRUST_PROXY=1) or its own user, and opens its minute
 * window with a charged request first, so that the window cannot roll over between the requests it compares.
 */
import test from 'ava';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startService, type Service } from './helpers/service.js';

const LIMIT = 1000;
/** The web app's own reads (signed in by the session cookie) have a budget of their own. */
const SESSION_LIMIT = 2000;
const UNLIMITED = '2147483647';
const ASSET = '/assets/app-3f2a9c.js';
let svc: Service;
let webDir: string;
let collection: { username: string; uid: string };

test.before(async () => {
  // A web app folder of the shape web/build.ts writes: index.html and hashed assets.
  webDir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolshed-web-'));
  await fs.mkdir(path.join(webDir, 'assets'));
  await fs.writeFile(path.join(webDir, 'index.html'), '<!doctype html><title>Toolshed</title><script src="/assets/app-3f2a9c.js"></script>\n');
  await fs.writeFile(path.join(webDir, 'assets', 'app-3f2a9c.js'), 'console.log("toolshed");\n');
  svc = await startService({
    worker: false,
    env: {
      WEB_DIR: webDir,
      TRUST_PROXY: '1',
      RATE_LIMIT_FREE_MINUTE: String(LIMIT),
      RATE_LIMIT_FREE_DAY: '100000',
      RATE_LIMIT_SESSION_READ_MINUTE: String(SESSION_LIMIT),
      SIGNUP: 'open',
    },
  });
  const owner = await svc.createUser({ tier: 'enterprise' });
  const c = await svc.createCollection(owner.key, { name: 'Headers' });
  collection = { username: owner.username, uid: c.uid };
});
test.after.always(async () => {
  await svc?.close();
  if (webDir) await fs.rm(webDir, { recursive: true, force: true });
});

let addresses = 0;
/** A client address of its own (a fresh anonymous budget). */
const newAddress = () => `203.0.113.${++addresses}`;

interface Budget {
  status: number;
  limit: string | null;
  remaining: string | null;
  reset: string | null;
}
async function send(method: string, p: string, headers: Record<string, string> = {}, body?: unknown): Promise<Budget> {
  const res = await fetch(svc.url + p, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  await res.arrayBuffer();
  return {
    status: res.status,
    limit: res.headers.get('x-ratelimit-limit'),
    remaining: res.headers.get('x-ratelimit-remaining'),
    reset: res.headers.get('x-ratelimit-reset'),
  };
}
const get = (p: string, headers: Record<string, string> = {}) => send('GET', p, headers);
const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'headers-test', version: '1.0.0' } },
};

/** Every route family, as a caller with `headers`. */
function everyKind(headers: Record<string, string>): [string, () => Promise<Budget>][] {
  return [
    ['API', () => get('/api/tools?limit=1', headers)],
    ['MCP', () => send('POST', `/api/mcp/${collection.username}/${collection.uid}/http`, headers, initialize)],
    ['registry', () => get('/v0.1/servers?limit=1', headers)],
    ['/health', () => get('/health', headers)],
    ['web page', () => get('/', headers)],
    ['web page (a route of the app)', () => get('/search', headers)],
    ['asset', () => get(ASSET, headers)],
    ['unknown route', () => get('/api/no-such-route', headers)],
    ['refused before routing', () => get('/api/tools?q=%00', headers)],
  ];
}

function assertIntegers(t: import('ava').ExecutionContext, b: Budget, what: string) {
  for (const [name, v] of [
    ['X-RateLimit-Limit', b.limit],
    ['X-RateLimit-Remaining', b.remaining],
    ['X-RateLimit-Reset', b.reset],
  ] as const) {
    t.regex(v ?? 'missing', /^\d+$/, `${what} (${b.status}): ${name} is an integer`);
  }
  const reset = Number(b.reset);
  t.true(reset >= Math.floor(Date.now() / 1000) && reset <= Date.now() / 1000 + 61, `${what}: Reset within the minute`);
}

test('every response carries the three headers as integers: API, MCP, registry, /health, web pages, an asset, errors', async (t) => {
  const anonymous = { 'x-forwarded-for': newAddress() };
  const user = await svc.createUser();
  for (const [who, headers] of [
    ['anonymous', anonymous],
    ['a key', { authorization: `Bearer ${user.key}` }],
  ] as const) {
    for (const [what, call] of everyKind(headers)) {
      const b = await call();
      t.true(b.status < 500, `${who}, ${what}: ${b.status}`);
      assertIntegers(t, b, `${who}, ${what}`);
      t.is(b.limit, String(LIMIT), `${who}, ${what}: the free tier's limit`);
    }
  }
  const page = await fetch(`${svc.url}/`);
  t.regex(page.headers.get('content-type') ?? '', /text\/html/, 'the page is the web app');
  const asset = await fetch(svc.url + ASSET);
  t.is(asset.status, 200, 'the asset is served');
});

test("a response that spends no budget reports the caller's as it stands, and spends nothing", async (t) => {
  const user = await svc.createUser();
  for (const [who, headers] of [
    ['anonymous', { 'x-forwarded-for': newAddress() }],
    ['a key', { authorization: `Bearer ${user.key}` }],
  ] as const) {
    const opened = await get('/api/tools?limit=1', headers);
    t.is(opened.remaining, String(LIMIT - 1), `${who}: the first charged request opens the window`);
    for (const [what, call] of [
      ['/health', () => get('/health', headers)],
      ['web page', () => get('/', headers)],
      ['web page (a route of the app)', () => get('/tools/x/y', headers)],
      ['asset', () => get(ASSET, headers)],
      ['HEAD of an asset', () => send('HEAD', ASSET, headers)],
      ['refused before routing', () => get('/api/tools?q=%00', headers)],
    ] as const) {
      const b = await call();
      t.like(b, { limit: String(LIMIT), remaining: String(LIMIT - 1), reset: opened.reset }, `${who}, ${what}`);
    }
    const next = await get('/api/tools?limit=1', headers);
    t.like(next, { remaining: String(LIMIT - 2), reset: opened.reset }, `${who}: none of those spent a point`);
  }
});

test("a signed-in browser's page and assets report the budget its reads spend (the app's own), not its address's", async (t) => {
  const address = newAddress();
  const signup = await fetch(`${svc.url}/api/auth/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
    body: JSON.stringify({ username: `browser_${addresses}`, password: 'correct horse battery' }),
  });
  t.is(signup.status, 201);
  const cookie = signup.headers
    .getSetCookie()
    .find((c) => c.startsWith('toolshed_session='))!
    .split(';')[0]!;
  const headers = { cookie, 'x-forwarded-for': address };
  // The session's read window: three charged reads. The address spent one point (the sign-up).
  let opened: Budget | undefined;
  for (let i = 0; i < 3; i++) opened = await get('/api/auth/me', headers);
  t.like(opened, { limit: String(SESSION_LIMIT), remaining: String(SESSION_LIMIT - 3) });
  for (const p of ['/', '/collections', ASSET, '/health']) {
    t.like(await get(p, headers), { limit: String(SESSION_LIMIT), remaining: String(SESSION_LIMIT - 3), reset: opened!.reset }, p);
  }
});

test('unlimited callers get 2147483647: the admin token on admin and other routes, an enterprise key with no limit', async (t) => {
  const admin = { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` };
  const enterprise = await svc.createUser({ tier: 'enterprise' });
  const cases: [string, () => Promise<Budget>][] = [
    ['admin route', () => send('POST', '/api/admin/users', admin, { username: `made_${addresses++}` })],
    ['admin token, API', () => get('/api/tools?limit=1', admin)],
    ['admin token, /health', () => get('/health', admin)],
    ['admin token, web page', () => get('/', admin)],
    ['admin token, asset', () => get(ASSET, admin)],
    ...everyKind({ authorization: `Bearer ${enterprise.key}` }).map(([what, call]): [string, () => Promise<Budget>] => [`enterprise, ${what}`, call]),
  ];
  for (const [what, call] of cases) {
    const b = await call();
    t.true(b.status < 500, `${what}: ${b.status}`);
    assertIntegers(t, b, what);
    t.like(b, { limit: UNLIMITED, remaining: UNLIMITED }, what);
  }
});
