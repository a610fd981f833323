/**
 * Item 10: open SSE streams are bounded per caller (SSE_MAX_STREAMS_PER_CALLER) and per process (SSE_MAX_STREAMS).
 * Over a bound the request is a plain 429 RATE_LIMITED (shape A, Retry-After) with no stream byte; a stream that ends
 * for any reason (client gone, `done`) gives its slot back.
 */
import test from 'ava';
import path from 'node:path';
import { FIXTURES_DIR, startService, type Service } from '../helpers/service.js';
import { settle } from '../helpers/wait.js';

const PER_CALLER = 2;
const TOTAL = 3;

let svc: Service;
let alice: { key: string };
let bob: { key: string };
/** An anonymous execution that sleeps for a minute: anyone may stream it, and its stream stays open meanwhile. */
let longId: string;

test.before(async () => {
  svc = await startService({
    sandbox: 'process',
    env: { SSE_MAX_STREAMS_PER_CALLER: String(PER_CALLER), SSE_MAX_STREAMS: String(TOTAL), EXECUTION_TIMEOUT_MS: '120000' },
  });
  const res = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'packages', 'echo-tools')}`);
  if (res.status !== 201) throw new Error(res.text);
  alice = await svc.createUser();
  bob = await svc.createUser();
});
test.after.always(() => svc?.close());

interface Opened {
  status: number;
  contentType: string | null;
  retryAfter: string | null;
  /** The JSON body of a refusal. */
  body?: any;
  /** Ends an open stream from the client side (the client goes away). */
  abort: () => void;
}

/** Opens the execution's event stream; for a 200 waits for the first byte, so the server holds the stream open. */
async function open(id: string, key?: string): Promise<Opened> {
  const controller = new AbortController();
  const res = await fetch(`${svc.url}/api/executions/${id}/events`, {
    headers: key ? { authorization: `Bearer ${key}` } : {},
    signal: controller.signal,
  });
  const base = { status: res.status, contentType: res.headers.get('content-type'), retryAfter: res.headers.get('retry-after') };
  if (res.status !== 200) return { ...base, body: await res.json(), abort: () => controller.abort() };
  const reader = res.body!.getReader();
  await reader.read(); // ": stream open"
  return { ...base, abort: () => controller.abort() };
}

/** Retries opening until it is not refused (a closed stream's slot comes back when the server sees the close). */
async function openWhenFree(id: string, key?: string): Promise<Opened> {
  return settle(
    () => open(id, key),
    (o) => o.status !== 429,
    { ms: 60_000, everyMs: 50 },
  );
}

function assertRefused(t: import('ava').ExecutionContext, o: Opened, why: string) {
  t.is(o.status, 429, why);
  t.false(o.contentType?.startsWith('text/event-stream') ?? false, 'no stream was started');
  t.is(o.body?.success, false);
  t.is(o.body?.error?.code, 'RATE_LIMITED');
  t.regex(o.body?.error?.message ?? '', /^Retry after \d+ seconds$/);
  t.regex(o.retryAfter ?? '', /^\d+$/);
}

test.serial('streams that end with `done` give their slot back', async (t) => {
  const quick = await svc.request('POST', '/api/tools/execute/@fixtures/echo-tools/sleepy', {
    key: alice.key,
    body: { params: { ms: 0 }, env: { ECHO_SECRET: 'x' } },
  });
  t.is(quick.status, 200, quick.text);
  for (let i = 0; i < PER_CALLER * 3; i++) {
    const res = await fetch(`${svc.url}/api/executions/${quick.body.executionId}/events`, { headers: { authorization: `Bearer ${alice.key}` } });
    t.is(res.status, 200, `finished stream ${i + 1} of one caller, one after another`);
    t.regex(await res.text(), /event: done/);
  }
});

test.serial('one caller gets at most SSE_MAX_STREAMS_PER_CALLER streams; closing one frees a slot; others are not affected', async (t) => {
  const queued = await svc.request('POST', '/api/tools/execute/@fixtures/echo-tools/sleepy?wait=false', {
    body: { params: { ms: 60000 }, env: { ECHO_SECRET: 'x' } },
  });
  t.is(queued.status, 202, queued.text);
  longId = queued.body.data.executionId;

  const mine: Opened[] = [];
  for (let i = 0; i < PER_CALLER; i++) {
    const o = await open(longId, alice.key);
    t.is(o.status, 200, `stream ${i + 1} of ${PER_CALLER}`);
    mine.push(o);
  }
  assertRefused(t, await open(longId, alice.key), 'one stream too many for the caller');
  const bobStream = await open(longId, bob.key);
  t.is(bobStream.status, 200, 'another caller is not affected');

  mine[0]!.abort();
  const again = await openWhenFree(longId, alice.key);
  t.is(again.status, 200, 'closing a stream frees its slot');
  assertRefused(t, await open(longId, alice.key), 'and only that one');

  for (const o of [mine[1]!, again, bobStream]) o.abort();
});

test.serial('all callers together get at most SSE_MAX_STREAMS streams', async (t) => {
  // Wait for the previous test's streams to be released.
  const a1 = await openWhenFree(longId, alice.key);
  const a2 = await openWhenFree(longId, alice.key);
  const b1 = await openWhenFree(longId, bob.key);
  t.deepEqual([a1.status, a2.status, b1.status], [200, 200, 200]);
  assertRefused(t, await open(longId, bob.key), 'bob is under his own bound, but the process is full');
  assertRefused(t, await open(longId), 'an anonymous caller too');

  a1.abort();
  const b2 = await openWhenFree(longId, bob.key);
  t.is(b2.status, 200, 'a slot freed by anyone can be taken by anyone under their own bound');
  for (const o of [a2, b1, b2]) o.abort();
});
