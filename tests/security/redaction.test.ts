/**
 * Item 11: a hostile tool echoes its env value base64-, hex- and URL-encoded (and inside a Basic auth header and a
 * base64 JSON blob). None of it may reach the execute response, GET /api/executions/:id, the execution's SSE events,
 * the database or the log.
 */
import test from 'ava';
import crypto from 'node:crypto';
import path from 'node:path';
import { FIXTURES_DIR, startService, type Service } from '../helpers/service.js';
import { readSse } from '../helpers/sse.js';
import { dumpDatabase } from '../helpers/dump.js';

const SLUG = '@fixtures/redaction-tools';
let svc: Service;
test.before(async () => {
  svc = await startService({ sandbox: 'process' });
  const res = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'security', 'redaction-tools')}`);
  if (res.status !== 201) throw new Error(res.text);
});
test.after.always(() => svc?.close());

/** A secret whose encodings all differ: standard vs url-safe base64, padded, and with characters URL encoding escapes. */
function makeSecret(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789~?>ÿ';
  for (let i = 0; i < 10_000; i++) {
    const s = `k3y/${Array.from({ length: 20 }, () => alphabet[crypto.randomInt(alphabet.length)]).join('')} é&=`;
    const b64 = Buffer.from(s).toString('base64');
    if (/[+/]/.test(b64) && b64.endsWith('=')) return s;
  }
  throw new Error('no secret with distinct encodings found');
}

/** The whole-value encodings, as the tool computes them. */
function encodings(s: string): string[] {
  const b64 = Buffer.from(s).toString('base64');
  const url = b64.replace(/\+/g, '-').replace(/\//g, '_');
  const hex = Buffer.from(s).toString('hex');
  return [s, JSON.stringify(s).slice(1, -1), b64, b64.replace(/=+$/, ''), url, url.replace(/=+$/, ''), hex, hex.toUpperCase(), encodeURIComponent(s)];
}

/**
 * Whether base64 anywhere in a text decodes (at any alignment) to 4 consecutive bytes of the secret: what someone
 * would try on `Basic …` or a base64 blob whose middle holds the secret.
 */
function decodesToSecret(text: string, secret: string): boolean {
  const bytes = Buffer.from(secret).toString('latin1');
  const windows = new Set<string>();
  for (let i = 0; i + 4 <= bytes.length; i++) windows.add(bytes.slice(i, i + 4));
  for (const fragment of text.split(/\[redacted\]|[^A-Za-z0-9+/_-]+/)) {
    for (let shift = 0; shift < 4 && shift < fragment.length; shift++) {
      const decoded = Buffer.from(fragment.slice(shift), 'base64').toString('latin1');
      for (const w of windows) if (decoded.includes(w)) return true;
    }
  }
  return false;
}

function assertNoLeak(t: import('ava').ExecutionContext, where: string, text: string, secret: string) {
  for (const form of encodings(secret)) t.false(text.includes(form), `${where} holds no form of the secret (${encodings(secret).indexOf(form)})`);
  t.false(decodesToSecret(text, secret), `${where}: no base64 in it decodes to the secret`);
}

test.serial('encoded env values are redacted from the response, the execution, its events, the database and the log', async (t) => {
  const secret = makeSecret();
  const res = await svc.request('POST', `/api/tools/execute/${SLUG}/echoEncoded`, { body: { params: {}, env: { LEAK_SECRET: secret } } });
  t.is(res.status, 200, res.text);
  const r = res.body.result;
  for (const field of ['base64', 'base64NoPadding', 'base64Url', 'base64UrlPadded', 'hexLower', 'hexUpper', 'uriComponent']) {
    t.is(r[field], '[redacted]', `${field} is redacted`);
  }
  t.is(r.inUrl, 'https://example.test/cb?token=[redacted]&x=1', 'a URL-encoded value inside a URL');
  t.true(r.basicAuth.startsWith('Basic ') && r.basicAuth.includes('[redacted]'), 'the base64 of user:secret');
  t.true(r.inJsonBlob.includes('[redacted]'), 'a base64 JSON blob that holds the secret');
  assertNoLeak(t, 'the response', res.text, secret);

  const id = res.body.executionId;
  const stored = await svc.request('GET', `/api/executions/${id}`);
  t.is(stored.body.data.status, 'succeeded');
  assertNoLeak(t, 'GET /api/executions/:id', stored.text, secret);
  const events = await readSse(`${svc.url}/api/executions/${id}/events`, { timeoutMs: 20_000 });
  t.is(events.events.at(-1)?.event, 'done');
  assertNoLeak(t, 'the SSE events', events.text, secret);

  const failed = await svc.request('POST', `/api/tools/execute/${SLUG}/failEncoded`, { body: { params: {}, env: { LEAK_SECRET: secret } } });
  t.is(failed.body.error?.code, 'TOOL_ERROR', failed.text);
  t.regex(failed.body.error.message, /^leak \[redacted\]/);
  assertNoLeak(t, 'an error message', failed.text, secret);

  assertNoLeak(t, 'the database', await dumpDatabase(svc.databaseUrl), secret);
  assertNoLeak(t, 'the log', svc.logs(), secret);
});

test.serial('a value that looks like JSON (digits) is redacted without breaking the result', async (t) => {
  const secret = `${1 + crypto.randomInt(9)}${crypto.randomInt(1e9).toString().padStart(9, '0')}`;
  const res = await svc.request('POST', `/api/tools/execute/${SLUG}/echoAsNumber`, { body: { params: {}, env: { LEAK_SECRET: secret } } });
  t.is(res.status, 200, res.text);
  t.deepEqual(res.body.result, { n: '[redacted]', m: '9[redacted]9', ok: true });
  const stored = await svc.request('GET', `/api/executions/${res.body.executionId}`);
  t.false(stored.text.includes(secret));
});

test.serial('a scenario run and a batch: encoded env values are redacted from the run records, their events, the database and the log', async (t) => {
  const owner = await svc.createUser({ tier: 'pro' });
  const c = await svc.createCollection(owner.key, { name: 'Redaction runs' }, [`${SLUG}::echoEncoded`, `${SLUG}::failEncoded`]);
  const scenarioIds: string[] = [];
  for (const prompt of ['Run echoEncoded', 'Run failEncoded']) {
    const s = await svc.request('POST', '/api/scenarios', { key: owner.key, body: { collectionId: c.id, prompt } });
    t.is(s.status, 201, s.text);
    scenarioIds.push(s.body.data.id);
  }
  const secret = makeSecret();
  const single = await svc.request('POST', `/api/scenarios/${scenarioIds[0]}/run`, { key: owner.key, body: { env: { LEAK_SECRET: secret } } });
  t.is(single.status, 200, single.text);
  const step = single.body.data.steps[0];
  t.is(step.toolName, 'echoEncoded');
  t.is(step.output.base64, '[redacted]', 'the tool got the value, and its echo is redacted');
  assertNoLeak(t, 'the run record', single.text, secret);
  assertNoLeak(t, "the run's events", (await readSse(`${svc.url}/api/scenario-runs/${single.body.data.runId}/events`, { timeoutMs: 20_000 })).text, secret);

  const batch = await svc.request('POST', `/api/collections/${c.id}/scenarios/run-all`, { key: owner.key, headers: { 'X-Tool-Env-LEAK_SECRET': secret } });
  t.is(batch.status, 202, batch.text);
  const events = await readSse(`${svc.url}/api/scenario-batches/${batch.body.data.batchId}/events`, { timeoutMs: 120_000 });
  t.is(events.events.at(-1)?.event, 'done');
  assertNoLeak(t, "the batch's events", events.text, secret);
  const steps: any[] = [];
  for (const id of batch.body.data.runIds) {
    const r = await svc.request('GET', `/api/scenario-runs/${id}`, { key: owner.key });
    t.is(r.body.data.status, 'completed', r.text);
    steps.push(...r.body.data.steps);
    assertNoLeak(t, 'a batch run record', r.text, secret);
  }
  t.regex(steps.find((s) => s.toolName === 'failEncoded').error.message, /^leak \[redacted\]/, "the failing tool's error message is redacted");
  for (const id of scenarioIds) assertNoLeak(t, 'a run history', (await svc.request('GET', `/api/scenarios/${id}/runs`, { key: owner.key })).text, secret);
  assertNoLeak(t, 'the database', await dumpDatabase(svc.databaseUrl), secret);
  assertNoLeak(t, 'the log', svc.logs(), secret);
});
