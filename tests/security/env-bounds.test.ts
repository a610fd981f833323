/**
 * Issue 21, item 5: the env of a call is bounded (core/executions/env-bounds.ts: 64 variables, 8 KiB of names and values) on
 * every path that takes one, with a 400 naming the field (VALIDATION_ERROR; JSON-RPC Invalid Request on the MCP
 * endpoint) and nothing queued; and redaction of a
 * worst case within the bounds (every value in several encodings, ~900 KB of output) removes every form while the
 * API keeps answering /health. Its cost is measured by `npm run bench:redaction`, not here.
 */
import test from 'ava';
import crypto from 'node:crypto';
import path from 'node:path';
import { FIXTURES_DIR, startService, type Service } from '../helpers/service.js';
import { MAX_ENV_BYTES, MAX_ENV_ENTRIES } from '../../core/executions/env-bounds.js';

const TOOL = '/api/tools/execute/@fixtures/env-flood-tools/echoAllForms';
let svc: Service;
test.before(async () => {
  svc = await startService();
  const res = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'security', 'env-flood-tools')}`);
  if (res.status !== 201) throw new Error(res.text);
});
test.after.always(() => svc?.close());

/** The most variables the bounds allow, filling the byte bound: random values a tool could echo. */
function envAtTheBounds(): Record<string, string> {
  const names = Array.from({ length: MAX_ENV_ENTRIES }, (_, i) => `V${String(i).padStart(2, '0')}`);
  const perValue = Math.floor((MAX_ENV_BYTES - names.join('').length) / MAX_ENV_ENTRIES);
  return Object.fromEntries(names.map((n) => [n, crypto.randomBytes(perValue).toString('base64url').slice(0, perValue)]));
}

test.serial('an env over the bounds is a 400 VALIDATION_ERROR naming env, on both REST forms, and queues nothing', async (t) => {
  const tooMany = Object.fromEntries(Array.from({ length: MAX_ENV_ENTRIES + 1 }, (_, i) => [`V${i}`, `value-${i}`]));
  const tooBig = { A: 'x'.repeat(MAX_ENV_BYTES / 2), B: 'y'.repeat(MAX_ENV_BYTES / 2) };
  const count = async () => Number((await svc.api.deps.db('executions').count('* as n').first())!.n);
  const before = await count();
  for (const [what, env] of [
    ['entries', tooMany],
    ['bytes', tooBig],
  ] as const) {
    for (const body of [
      { params: {}, env },
      { prompt: 'echo all forms', env },
    ]) {
      const res = await svc.request('POST', TOOL, { body });
      t.is(res.status, 400, `${what}: ${res.text}`);
      t.is(res.body.success, false);
      t.is(res.body.error.code, 'VALIDATION_ERROR');
      t.true(
        res.body.error.details.some((d: { path: string }) => d.path === 'body.env'),
        `${what}: the field is named: ${res.text}`,
      );
      t.regex(res.body.error.message, what === 'entries' ? /at most 64 variables/ : /at most 8192 bytes/);
      t.false(res.text.includes('value-1') || res.text.includes('xxxx'), 'no value is echoed');
    }
  }
  t.is(await count(), before, 'nothing was queued');
});

test.serial('MCP: X-Tool-Env-* headers over the bounds are a 400 (JSON-RPC Invalid Request) naming the headers', async (t) => {
  const alice = await svc.createUser();
  const c = await svc.createCollection(alice.key, { name: 'Flood' }, ['@fixtures/env-flood-tools/echoAllForms']);
  const headers = Object.fromEntries(Array.from({ length: MAX_ENV_ENTRIES + 1 }, (_, i) => [`X-Tool-Env-V${i}`, `value-${i}`]));
  const res = await svc.request('POST', `/api/mcp/${alice.username}/${c.uid}/http`, {
    headers: { ...headers, accept: 'application/json, text/event-stream' },
    body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echoAllForms', arguments: {} } },
  });
  // The MCP endpoint answers its 400s as JSON-RPC Invalid Request (api/middleware/errors.ts), naming the headers.
  t.is(res.status, 400, res.text);
  t.is(res.body.error.code, -32600);
  t.regex(res.body.error.message, /X-Tool-Env-\* headers: must have at most 64 variables/);
  t.false(res.text.includes('value-1'), 'no value is echoed');
});

test.serial('the worst case within the bounds is fully redacted, and /health answers while it is processed', async (t) => {
  const env = envAtTheBounds();
  const pending = svc.request('POST', TOOL, { body: { params: {}, env } });
  let done = false;
  void pending.finally(() => (done = true));
  let healthAnswers = 0;
  while (!done) {
    const health = await svc.request('GET', '/health');
    t.is(health.status, 200, health.text);
    healthAnswers++;
  }
  const res = await pending;
  t.is(res.status, 200, res.text);
  t.true(res.body.success, res.text);
  t.true(healthAnswers > 0);
  const output = res.body.result as string[];
  t.true(output.length > 1000, `a long output (${output.length} strings)`);
  t.true(
    output.every((s) => s === '<[redacted]>'),
    `every string is redacted whole (first left: ${output.find((s) => s !== '<[redacted]>')})`,
  );
  for (const v of Object.values(env)) {
    const bytes = Buffer.from(v);
    for (const form of [v, bytes.toString('base64'), bytes.toString('hex')]) t.false(res.text.includes(form));
  }
});
