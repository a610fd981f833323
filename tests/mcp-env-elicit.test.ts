/**
 * A tool's env without headers (issue 44 item 3): a call whose tool needs env the client did not send is answered the
 * protocol's way — URL elicitation (-32042) for the 1.x SDK client at 2025-11-25 that declared it, `input_required` for
 * the 2.x client at 2026-07-28 — pointing at our page, where the signed-in caller (Chromium) enters the value for that
 * one call; the client's retry gets the result of the tool run with it. The value is in no table and no log afterwards.
 */
import test from 'ava';
import path from 'node:path';
import pg from 'pg';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, UrlElicitationRequiredError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { checkAccessibility, startWebService, watchPage } from './browser/helpers.js';
import { dumpDatabase } from './helpers/dump.js';
import { FIXTURES_DIR, type Service } from './helpers/service.js';

let svc: Service;
let browser: Browser;
let owner: { context: BrowserContext; key: string; username: string };
let url: URL;
let publicUrl: URL;
const SECRETS: string[] = [];

/** A browser signed up as `username`, and an API key of theirs (made through the session, as the settings page does). */
async function signedUp(username: string): Promise<{ context: BrowserContext; key: string; username: string }> {
  const context = await browser.newContext();
  const res = await context.request.post(`${svc.url}/api/auth/signup`, { data: { username, password: 'a long enough password' } });
  if (res.status() !== 201) throw new Error(await res.text());
  const csrf = (await res.json()).data.csrfToken as string;
  const k = await context.request.post(`${svc.url}/api/keys`, { data: { name: 'mcp' }, headers: { 'x-csrf-token': csrf } });
  if (k.status() !== 201) throw new Error(await k.text());
  return { context, key: (await k.json()).data.key, username };
}

test.before(async () => {
  ({ svc, browser } = await startWebService({ packages: [path.join(FIXTURES_DIR, 'packages', 'env-length')] }));
  owner = await signedUp('envowner');
  const c = await svc.createCollection(owner.key, { name: 'Tokens', isPublic: false }, ['@fixtures/env-length::tokenLength']);
  url = new URL(`${svc.url}/api/mcp/${owner.username}/${c.uid}/mcp`);
  const p = await svc.createCollection(owner.key, { name: 'Open tokens', isPublic: true }, ['@fixtures/env-length::tokenLength']);
  publicUrl = new URL(`${svc.url}/api/mcp/${owner.username}/${p.uid}/mcp`);
});
test.after.always(async () => {
  await browser?.close();
  await svc?.close();
});

const auth = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });

async function legacyClient(target: URL, capabilities: Record<string, unknown>, key?: string) {
  const client = new LegacyClient({ name: 'toolshed-tests-2025', version: '1.0.0' }, { capabilities });
  await client.connect(new LegacyTransport(target, key ? { requestInit: auth(key) } : {}));
  return client;
}

/** The JSON-RPC bodies a client sent and got, in order. */
type Exchange = { sent: any; got: any };
function recordingFetch(log: Exchange[]): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    const text = await res.clone().text();
    let got: unknown = text;
    try {
      got = JSON.parse(text);
    } catch {
      /* SSE or empty */
    }
    log.push({ sent: typeof init?.body === 'string' ? JSON.parse(init.body) : undefined, got });
    return res;
  };
}

async function modernClient(target: URL, key: string, onUrl: (url: string, message: string) => Promise<'accept' | 'decline'>, log: Exchange[] = []) {
  const client = new ModernClient(
    { name: 'toolshed-tests-2026', version: '1.0.0' },
    { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  client.setRequestHandler('elicitation/create', async (req) => {
    const p = req.params as { mode?: string; url?: string; message: string };
    if (p.mode !== 'url' || !p.url) throw new Error(`expected a URL elicitation, got ${JSON.stringify(p)}`);
    return { action: await onUrl(p.url, p.message) };
  });
  await client.connect(new ModernTransport(target, { requestInit: auth(key), fetch: recordingFetch(log) }));
  return client;
}

/** Opens the page in the signed-in browser, checks what it says, enters the value and sends it. */
async function enterOnPage(t: import('ava').ExecutionContext, link: string, value: string, label: string): Promise<void> {
  const page: Page = await owner.context.newPage();
  const problems = watchPage(page);
  try {
    await page.goto(link);
    await page.getByRole('heading', { level: 1, name: 'Env for a tool call' }).waitFor();
    await page.getByRole('heading', { level: 2, name: /tokenLength of Tokens needs a variable/ }).waitFor();
    t.is(await page.getByTestId('env-params').textContent(), JSON.stringify({ label }));
    t.truthy(await page.getByText('The token of the service the tool calls').count());
    await checkAccessibility(t, page, 'env request page');
    await page.getByLabel('API_TOKEN').fill(value);
    await page.getByRole('button', { name: 'Run the call with these values' }).click();
    await page.getByTestId('env-done').waitFor();
    t.deepEqual(problems, []);
  } finally {
    await page.close();
  }
}

const structured = (r: CallToolResult) => r.structuredContent as { label: string; set: boolean; length: number };

async function assertStoredNowhere(t: import('ava').ExecutionContext) {
  const dump = await dumpDatabase(svc.databaseUrl);
  const logs = svc.logs();
  for (const s of SECRETS) {
    t.false(dump.includes(s), 'the value is in no table');
    t.false(logs.includes(s), 'the value is in no log');
  }
}

test.serial('2025-11-25 with URL elicitation: -32042 names our page; the value entered there runs the call the client retries', async (t) => {
  const secret = `tok-2025-${'x'.repeat(23)}`;
  SECRETS.push(secret);
  const client = await legacyClient(url, { elicitation: { url: {} } }, owner.key);
  const call = () => client.callTool({ name: 'tokenLength', arguments: { label: 'first' } });
  const err = await t.throwsAsync(call(), { instanceOf: UrlElicitationRequiredError });
  const [asked] = (err as UrlElicitationRequiredError).elicitations;
  t.is(asked.mode, 'url');
  t.true(asked.url.startsWith(`${svc.url}/env/`), asked.url);
  t.regex(asked.message, /needs env API_TOKEN.*X-Tool-Env-API_TOKEN/s);

  await enterOnPage(t, asked.url, secret, 'first');
  const result = (await call()) as CallToolResult;
  t.falsy(result.isError, JSON.stringify(result));
  t.deepEqual(structured(result), { label: 'first', set: true, length: secret.length });
  // Single use: the next call is asked again.
  await t.throwsAsync(call(), { instanceOf: UrlElicitationRequiredError });
  await client.close();
  await assertStoredNowhere(t);
});

test.serial('2026-07-28: input_required points at the page; the 2.x client re-sends the call and gets the result with the value', async (t) => {
  const secret = `tok-2026-${'y'.repeat(31)}`;
  SECRETS.push(secret);
  const asked: string[] = [];
  const log: Exchange[] = [];
  const client = await modernClient(
    url,
    owner.key,
    async (link, message) => {
      asked.push(message);
      t.true(link.startsWith(`${svc.url}/env/`), link);
      await enterOnPage(t, link, secret, 'modern');
      return 'accept';
    },
    log,
  );
  const result = (await client.callTool({ name: 'tokenLength', arguments: { label: 'modern' } })) as CallToolResult;
  t.falsy(result.isError, JSON.stringify(result));
  t.deepEqual(structured(result), { label: 'modern', set: true, length: secret.length });
  t.is(asked.length, 1);
  t.regex(asked[0], /needs env API_TOKEN/);
  // On the wire: the first call answered input_required with our state; the retry carried it and the answer back.
  const calls = log.filter((e) => e.sent?.method === 'tools/call');
  t.is(calls.length, 2);
  const first = calls[0].got.result;
  t.is(first.resultType, 'input_required');
  t.is(first.inputRequests['toolshed/env'].params.mode, 'url');
  t.is(calls[1].sent.params.requestState, first.requestState);
  t.deepEqual(calls[1].sent.params.inputResponses['toolshed/env'], { action: 'accept' });
  t.is(calls[1].got.result.resultType, 'complete');
  await client.close();
  await assertStoredNowhere(t);
});

test.serial('2026-07-28: declining on the client gives the error naming the header', async (t) => {
  const client = await modernClient(url, owner.key, async () => 'decline');
  const result = (await client.callTool({ name: 'tokenLength', arguments: { label: 'no' } })) as CallToolResult;
  t.true(result.isError);
  t.regex((result.content[0] as { text: string }).text, /Missing required env: API_TOKEN \(send the header X-Tool-Env-API_TOKEN/);
  await client.close();
});

test.serial("clients that cannot take it, and anonymous calls, get today's error with the way out (headers)", async (t) => {
  const plain = await legacyClient(url, {}, owner.key);
  const anonymous = await legacyClient(publicUrl, { elicitation: { url: {} } });
  for (const client of [plain, anonymous]) {
    const result = (await client.callTool({ name: 'tokenLength', arguments: { label: 'h' } })) as CallToolResult;
    t.true(result.isError);
    t.regex((result.content[0] as { text: string }).text, /Missing required env: API_TOKEN \(send the header X-Tool-Env-API_TOKEN/);
    await client.close();
  }
  // Invalid params are refused as before, without asking.
  const asking = await legacyClient(url, { elicitation: { url: {} } }, owner.key);
  const bad = (await asking.callTool({ name: 'tokenLength', arguments: { label: 5 } })) as CallToolResult;
  t.true(bad.isError);
  t.regex((bad.content[0] as { text: string }).text, /Invalid params/);
  await asking.close();
});

test.serial('the page: another user, a used, expired or made-up link, and wrong names are clear 4xx; nothing runs', async (t) => {
  const client = await legacyClient(url, { elicitation: { url: {} } }, owner.key);
  const linkOf = async (label: string) => {
    const err = await t.throwsAsync(client.callTool({ name: 'tokenLength', arguments: { label } }));
    t.true(err instanceof McpError && err.code === ErrorCode.UrlElicitationRequired);
    return (err as UrlElicitationRequiredError).elicitations[0].url;
  };
  const tokenOf = (link: string) => new URL(link).pathname.split('/').pop()!;
  const csrfOf = async (who: BrowserContext) => (await (await who.request.get(`${svc.url}/api/auth/me`)).json()).data.csrfToken as string;
  const submit = async (who: BrowserContext, token: string, env: Record<string, string>) =>
    who.request.post(`${svc.url}/api/mcp-env/${token}`, { data: { env }, headers: { 'x-csrf-token': await csrfOf(who) } });

  const executions = async () => {
    const c = new pg.Client({ connectionString: svc.databaseUrl });
    await c.connect();
    try {
      return Number((await c.query('select count(*) from executions')).rows[0].count);
    } finally {
      await c.end();
    }
  };
  const before = await executions();

  const token = tokenOf(await linkOf('page'));
  const other = await signedUp('envoutsider');
  const seen = await other.context.request.get(`${svc.url}/api/mcp-env/${token}`);
  t.is(seen.status(), 404);
  t.is((await seen.json()).error.code, 'NOT_FOUND');
  t.is((await submit(other.context, token, { API_TOKEN: 'theirs' })).status(), 404);
  const made = await owner.context.request.get(`${svc.url}/api/mcp-env/${'A'.repeat(43)}`);
  t.is(made.status(), 404);
  const unknown = await submit(owner.context, token, { API_TOKEN: 'v', OTHER: 'w' });
  t.is(unknown.status(), 400);
  t.deepEqual(
    (await unknown.json()).error.details.map((d: { path: string }) => d.path),
    ['env.OTHER'],
  );
  const empty = await submit(owner.context, token, {});
  t.is(empty.status(), 400);
  t.is(await executions(), before, 'nothing ran');

  const ok = await submit(owner.context, token, { API_TOKEN: 'once' });
  t.is(ok.status(), 200);
  t.false((await ok.text()).includes('once'), 'the value is not echoed');
  const again = await submit(owner.context, token, { API_TOKEN: 'twice' });
  t.is(again.status(), 409);
  t.is((await again.json()).error.code, 'CONFLICT');

  const stale = tokenOf(await linkOf('stale'));
  const db = new pg.Client({ connectionString: svc.databaseUrl });
  await db.connect();
  await db.query("update mcp_env_requests set expires_at = now() - interval '1 second' where submitted_at is null");
  await db.end();
  const expired = await submit(owner.context, stale, { API_TOKEN: 'late' });
  t.is(expired.status(), 410);
  t.is((await expired.json()).error.code, 'GONE');
  // The page says so.
  const page = await owner.context.newPage();
  await page.goto(`${svc.url}/env/${stale}`);
  await page
    .getByRole('alert')
    .getByText(/expired/)
    .waitFor();
  await page.close();
  await client.close();
});
