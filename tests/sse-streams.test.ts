/**
 * The SSE helper (api/streams/sse.ts, on sse-channel) with the real worker and sandbox: a client that reconnects with
 * Last-Event-ID gets only the later events, with the same ids as everyone else (execution and run streams), and a
 * client that leaves mid-stream gives back its slot, and the last one to leave a row's channel its subscription.
 */
import test from 'ava';
import path from 'node:path';
import { streamStats } from '../api/streams/sse.js';
import { EXAMPLES_DIR, FIXTURES_DIR, startService, type Service } from './helpers/service.js';
import { openLiveSse, readSse } from './helpers/sse.js';
import { settle } from './helpers/wait.js';

const PER_CALLER = 2;

let svc: Service;
let owner: { key: string };
let collectionId: string;

test.before(async () => {
  svc = await startService({ sandbox: 'process', env: { SSE_MAX_STREAMS_PER_CALLER: String(PER_CALLER), EXECUTION_TIMEOUT_MS: '60000' } });
  const echo = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'packages', 'echo-tools')}`);
  if (echo.status !== 201) throw new Error(echo.text);
  const text = await svc.importPackage(`path:${path.join(EXAMPLES_DIR, 'text-tools')}`);
  if (text.status !== 201) throw new Error(text.text);
  owner = await svc.createUser({ tier: 'pro' });
  const c = await svc.request('POST', '/api/collections', { key: owner.key, body: { name: 'Stream tests' } });
  collectionId = c.body.data.id;
  for (const tool of text.body.data.tools) await svc.request('POST', `/api/collections/${collectionId}/tools`, { key: owner.key, body: { toolId: tool.id } });
});
test.after.always(() => svc?.close());

/** A queued anonymous execution of `sleepy` (anyone may stream it). */
async function sleepy(ms: number): Promise<string> {
  const res = await svc.request('POST', '/api/tools/execute/@fixtures/echo-tools/sleepy?wait=false', { body: { params: { ms }, env: { ECHO_SECRET: 'x' } } });
  if (res.status !== 202) throw new Error(res.text);
  return res.body.data.executionId;
}

/** A bounded poll for the helper's counts (the server sees a client leave a moment after it leaves). */
async function statsBecome(want: ReturnType<typeof streamStats>): Promise<ReturnType<typeof streamStats>> {
  return settle(
    () => streamStats(svc.config),
    (now) => now.streams === want.streams && now.channels === want.channels && now.subscriptions === want.subscriptions,
    { ms: 60_000, everyMs: 50 },
  );
}
const idle = { streams: 0, channels: 0, subscriptions: 0 };

test.serial('an execution stream resumed with Last-Event-ID sends only the later events, with the same ids', async (t) => {
  const id = await sleepy(3000);
  const url = `${svc.url}/api/executions/${id}/events`;
  const live = await openLiveSse(url);
  t.is(live.status, 200);
  t.is(live.headers.get('content-type'), 'text/event-stream; charset=utf-8');
  t.is(live.headers.get('cache-control'), 'no-cache, no-transform', 'no proxy may compress or buffer it');
  t.is(live.headers.get('x-accel-buffering'), 'no');
  t.truthy(live.headers.get('x-request-id'), "the request's own headers are kept");
  const seen = await live.read(2); // queued, running: the execution is still sleeping
  t.deepEqual(
    seen.map((e) => [e.id, e.data.status]),
    [
      [1, 'queued'],
      [2, 'running'],
    ],
  );
  live.abort();

  const resumed = await readSse(url, { headers: { 'last-event-id': '2' } });
  t.deepEqual(
    resumed.events.map((e) => [e.id, e.event]),
    [
      [3, 'status'],
      [4, 'done'],
    ],
  );
  const full = await readSse(url);
  t.deepEqual(full.events.slice(0, 2), seen, 'the first connection saw what a replay sees');
  t.deepEqual(resumed.events, full.events.slice(2), 'the resumed connection saw the rest, with the same ids');
  t.deepEqual(await statsBecome(idle), idle, 'nothing is left open once the streams have ended');
});

test.serial('a run stream resumed with Last-Event-ID sends only the later events, with the same ids', async (t) => {
  const s = await svc.request('POST', '/api/scenarios', { key: owner.key, body: { collectionId, prompt: 'Slugify "Hello World" with slugify' } });
  t.is(s.status, 201, s.text);
  const run = await svc.request('POST', `/api/scenarios/${s.body.data.id}/run?wait=false`, { key: owner.key });
  t.is(run.status, 202, run.text);
  const url = `${svc.url}/api/scenario-runs/${run.body.data.runId}/events`;
  const live = await openLiveSse(url, { headers: { authorization: `Bearer ${owner.key}` } });
  // The run is quick: the live connection may get more than the first event in one chunk. It leaves after the
  // first, whatever else came with it, and resumes from there.
  const seen = (await live.read(1)).slice(0, 1);
  t.deepEqual(
    seen.map((e) => [e.id, e.event]),
    [[1, 'step']],
  );
  live.abort();

  const auth = { authorization: `Bearer ${owner.key}` };
  const resumed = await readSse(url, { headers: { ...auth, 'last-event-id': '1' } });
  t.deepEqual(
    resumed.events.map((e) => [e.id, e.event]),
    [
      [2, 'tool.completed'],
      [3, 'verdict'],
      [4, 'done'],
    ],
  );
  const full = await readSse(url, { headers: auth });
  t.deepEqual(full.events.slice(0, 1), seen);
  t.deepEqual(resumed.events, full.events.slice(1), 'the same events with the same ids');
  t.deepEqual(await statsBecome(idle), idle);
});

test.serial('a client that leaves mid-stream frees its slot; the last to leave a row frees its channel and subscription', async (t) => {
  t.deepEqual(await statsBecome(idle), idle);
  const id = await sleepy(20_000);
  const url = `${svc.url}/api/executions/${id}/events`;
  const headers = { authorization: `Bearer ${owner.key}` };
  const first = await openLiveSse(url, { headers });
  const second = await openLiveSse(url, { headers });
  t.deepEqual([first.status, second.status], [200, 200]);
  t.is((await first.read(1))[0]?.id, 1);
  t.is((await second.read(1))[0]?.id, 1, 'a client joining a shared channel gets the row from its start');
  t.deepEqual(streamStats(svc.config), { streams: 2, channels: 1, subscriptions: 1 }, 'two clients of one row share one channel');
  const refused = await fetch(url, { headers });
  t.is(refused.status, 429, 'the caller is at its bound');
  await refused.text();

  first.abort();
  t.deepEqual(await statsBecome({ streams: 1, channels: 1, subscriptions: 1 }), { streams: 1, channels: 1, subscriptions: 1 });
  const third = await openLiveSse(url, { headers });
  t.is(third.status, 200, 'the slot of the client that left is free again');
  t.is((await third.read(1))[0]?.id, 1);

  second.abort();
  third.abort();
  t.deepEqual(await statsBecome(idle), idle, 'no slot, channel or LISTEN handler outlives its clients');
});
