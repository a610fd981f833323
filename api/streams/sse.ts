/**
 * The one server-sent-events helper. Every stream goes through sse-channel (the library the design names): it writes
 * the framing (`event:`/`id:`/`data:`), pings every connection so proxies keep it open, replays its history after a
 * client's `Last-Event-ID`, and drops a client that goes away. This module adds what a channel does not know about:
 * Koa, the bounds on open streams, and when a channel ends.
 *
 * Which channel a client joins follows sse-channel's model (one channel broadcasts one sequence of events, with its
 * history, to all its clients):
 * - A derived stream (an execution's, a run's, a batch's events; `streamShared`) has one channel per row per process,
 *   shared by every client watching that row. Its events are derived from the row and its ids are list positions,
 *   so the channel's history *is* the row's event list: it is refreshed from the row before a client joins (so a
 *   client that resumes with an id from another process or an earlier connection is never ahead of it), and again on
 *   every NOTIFY that names the row. One LISTEN handler and one load per change serve all of the row's clients. The
 *   channel ends after `done` (or a failure, sent as an `error` event) or when its last client leaves; ending it
 *   drops its subscription, its ping timer and its entry here, so nothing outlives its clients.
 * - An agent stream (prompt execution, agent chat; `openSse`) is one request's conversation: a channel of its own
 *   with one client and no useful history. It cannot be resumed (reconnecting would run the agent again), so its
 *   ids simply count from 1.
 *
 * Every open stream holds a socket, and possibly a subscription and a timer, until its client leaves, so open streams
 * are bounded per caller and per process; over a bound the request is a 429 before any byte of the stream is written.
 * After the first byte an error is an `error` event, never a status code. There is no compression on these routes;
 * `no-transform` asks proxies not to add any.
 */
import type { ServerResponse } from 'node:http';
import type { Context } from 'koa';
import SseChannel from 'sse-channel';
import type { Config } from '../../core/infra/config.js';
import { errors } from '../../core/infra/errors.js';
import { callerIdentity } from '../middleware/identity.js';

const HEARTBEAT_MS = 15_000;
/** What a refused client is told to wait: streams last seconds to minutes, so a retry soon may find a free slot. */
const RETRY_AFTER_SECONDS = 5;
/** Replaces sse-channel's own head (same fields, our spelling of the content type, and no proxy transforms). */
const STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

export type SseLimits = Pick<Config, 'SSE_MAX_STREAMS_PER_CALLER' | 'SSE_MAX_STREAMS'>;

export interface StreamEvent {
  event: string;
  data: unknown;
}

/** One derived stream's channel, shared by the clients of one row. */
interface Shared {
  key: string;
  source: DerivedSource;
  channel: SseChannel;
  /** The id of the last event sent, i.e. how much of the row's list the channel's history holds. */
  lastId: number;
  ended: boolean;
  /** Clients joined or waiting to join; the channel ends when this drops to 0. */
  refs: number;
  /** Loads and joins, one at a time, so that every client sees the list in order and exactly once. */
  chain: Promise<unknown>;
  /**
   * A refresh for a change is queued and has not started: further changes need no refresh of their own (that one
   * reads the row after them). A batch of 150 runs sends ~600 notifications; each used to reload the whole batch.
   */
  changePending: boolean;
  subscription: Promise<() => void>;
}

/** Everything open in one app: one per configuration object, so separate apps in one test process do not share. */
interface Streams {
  total: number;
  byCaller: Map<string, number>;
  shared: Map<string, Shared>;
  subscriptions: number;
}
const streamsByConfig = new WeakMap<SseLimits, Streams>();

function streamsOf(limits: SseLimits): Streams {
  let s = streamsByConfig.get(limits);
  if (!s) streamsByConfig.set(limits, (s = { total: 0, byCaller: new Map(), shared: new Map(), subscriptions: 0 }));
  return s;
}

/** Open streams, shared channels and their subscriptions (for tests and metrics). */
export function streamStats(limits: SseLimits): { streams: number; channels: number; subscriptions: number } {
  const s = streamsOf(limits);
  return { streams: s.total, channels: s.shared.size, subscriptions: s.subscriptions };
}

/** Takes a stream slot for the caller, or throws RATE_LIMITED; returns the release (safe to call more than once). */
function acquireSlot(limits: SseLimits, caller: string): () => void {
  const slots = streamsOf(limits);
  const mine = slots.byCaller.get(caller) ?? 0;
  // 0 means "no bound", as for the rate limits.
  const overCaller = limits.SSE_MAX_STREAMS_PER_CALLER > 0 && mine >= limits.SSE_MAX_STREAMS_PER_CALLER;
  const overTotal = limits.SSE_MAX_STREAMS > 0 && slots.total >= limits.SSE_MAX_STREAMS;
  if (overCaller || overTotal) throw errors.rateLimited(RETRY_AFTER_SECONDS);
  slots.total += 1;
  slots.byCaller.set(caller, mine + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    slots.total -= 1;
    const left = (slots.byCaller.get(caller) ?? 1) - 1;
    if (left > 0) slots.byCaller.set(caller, left);
    else slots.byCaller.delete(caller);
  };
}

/** A client admitted to a stream: it holds a slot until its response closes, for whatever reason. */
interface Client {
  ctx: Context;
  left: boolean;
  /** Resolves when the client has gone (and its slot is free). */
  gone: Promise<void>;
  /** What to undo when the client goes (leave its channel). */
  onLeave?: () => void;
}

/** Takes the slot (429 before any byte), takes the response away from Koa, and tracks when the client goes. */
function admit(ctx: Context, limits: SseLimits): Client {
  const release = acquireSlot(limits, callerIdentity(ctx));
  ctx.respond = false;
  const res = ctx.res;
  keepOurHead(res);
  let resolveGone!: () => void;
  const client: Client = { ctx, left: false, gone: new Promise<void>((r) => (resolveGone = r)) };
  const leave = () => {
    if (client.left) return;
    client.left = true;
    release();
    client.onLeave?.();
    resolveGone();
  };
  // 'close' comes when the client disconnects and after the stream is ended by us, so this is the one release path.
  res.once('close', leave);
  // A client that left while the route was still loading has no 'close' to come.
  if (res.destroyed || ctx.req.socket.destroyed) leave();
  return client;
}

/** sse-channel writes a fixed head; ours has the same fields, plus the request's own headers (request id, CORS). */
function keepOurHead(res: ServerResponse): void {
  const writeHead = res.writeHead;
  res.writeHead = ((statusCode: number) => {
    res.writeHead = writeHead;
    for (const [name, value] of Object.entries(STREAM_HEADERS)) res.setHeader(name, value);
    return writeHead.call(res, statusCode);
  }) as typeof res.writeHead;
}

/** The client's last event id: what it already has (0: nothing). */
function lastEventId(ctx: Context): number {
  return Number.parseInt(ctx.get('last-event-id') || '0', 10) || 0;
}

/**
 * Adds the client to the channel, which writes the head and replays its history after the client's last id.
 * sse-channel replays only when the request names an id, so a client without one is told it has "0" (everything).
 */
function attach(channel: SseChannel, client: Client): void {
  client.ctx.req.headers['last-event-id'] = String(lastEventId(client.ctx));
  channel.addClient(client.ctx.req, client.ctx.res);
}

function createChannel(historySize: number): SseChannel {
  const channel = new SseChannel({ pingInterval: HEARTBEAT_MS, historySize, jsonEncode: true });
  channel.timer.unref(); // a ping timer never keeps the process alive; close() clears it
  return channel;
}

export interface SseStream {
  /** Sends an event; ids count from 1. */
  send(event: string, data: unknown): void;
  /** The last id sent. */
  readonly lastId: number;
  readonly closed: boolean;
  /** Resolves when the client has gone (after close(), or when it disconnects). */
  readonly done: Promise<void>;
  /** An AbortSignal that fires when the stream ends. */
  readonly signal: AbortSignal;
  close(): void;
}

/** Opens a stream of its own for one client, or throws RATE_LIMITED (before anything is written). */
export function openSse(ctx: Context, limits: SseLimits): SseStream {
  const client = admit(ctx, limits);
  const channel = createChannel(1);
  const controller = new AbortController();
  let lastId = 0;
  let closed = false;
  const finish = () => {
    if (closed) return;
    closed = true;
    channel.close(); // ends the response and the ping timer
    controller.abort();
  };
  client.onLeave = finish;
  if (client.left) finish();
  else attach(channel, client);
  return {
    send(event, data) {
      if (closed) return;
      lastId += 1;
      channel.send({ id: lastId, event, data });
    },
    get lastId() {
      return lastId;
    },
    get closed() {
      return closed;
    },
    done: client.gone,
    signal: controller.signal,
    close: finish,
  };
}

/** Where a derived stream's events come from. */
export interface DerivedSource {
  /** Every event of the row so far, in order (a later list extends an earlier one); event ids are positions. */
  load(): Promise<StreamEvent[]>;
  /** Calls `changed` whenever the row may have new events; resolves, once listening, to the unsubscribe. */
  watch(changed: () => void): Promise<() => void>;
  /** Told when loading fails (the clients get an `error` event and the stream ends). */
  failed(err: unknown): void;
}

/**
 * Streams a row's derived events to this client through the row's shared channel: everything after its
 * Last-Event-ID, then each new event as the row changes, and ends after `done`. Throws RATE_LIMITED before any byte
 * when over a bound; resolves when the client has gone.
 */
export async function streamShared(ctx: Context, limits: SseLimits, key: string, source: DerivedSource): Promise<void> {
  const client = admit(ctx, limits);
  const streams = streamsOf(limits);
  while (!client.left) {
    const s = sharedChannel(streams, key, source);
    s.refs += 1;
    client.onLeave = () => unref(streams, s);
    if ((await enqueue(s, () => refresh(streams, s, client))) === 'joined') break;
    // That channel ended (after `done`) before this client was added: a fresh one replays the whole list.
    client.onLeave = undefined;
    if (!client.left) unref(streams, s); // (a client that left has been unref'd by leaving)
  }
  await client.gone;
}

function sharedChannel(streams: Streams, key: string, source: DerivedSource): Shared {
  const existing = streams.shared.get(key);
  if (existing) return existing;
  const s: Shared = {
    key,
    source,
    channel: createChannel(Number.MAX_SAFE_INTEGER), // the history is the row's list, bounded by the row
    lastId: 0,
    ended: false,
    refs: 0,
    chain: Promise.resolve(),
    changePending: false,
    subscription: Promise.resolve(() => undefined),
  };
  const changed = () => {
    if (s.changePending) return;
    s.changePending = true;
    void enqueue(s, () => {
      s.changePending = false;
      return refresh(streams, s);
    }).catch((err) => source.failed(err));
  };
  s.subscription = source.watch(changed).then((unsubscribe) => {
    streams.subscriptions += 1;
    let dropped = false;
    return () => {
      if (dropped) return;
      dropped = true;
      streams.subscriptions -= 1;
      unsubscribe();
    };
  });
  s.subscription.catch(() => undefined); // a failed watch is reported by the refresh that awaits it
  streams.shared.set(key, s);
  return s;
}

function enqueue<T>(s: Shared, step: () => Promise<T>): Promise<T> {
  const next = s.chain.then(step);
  s.chain = next.catch(() => undefined);
  return next;
}

/** Brings the channel up to the row (sending the new events to its clients), then adds the joining client if any. */
async function refresh(streams: Streams, s: Shared, joining?: Client): Promise<'joined' | 'ended'> {
  if (s.ended) return 'ended';
  let events: StreamEvent[];
  try {
    await s.subscription;
    events = await s.source.load();
  } catch (err) {
    if (s.ended) return 'ended';
    s.source.failed(err);
    if (joining && !joining.left) attach(s.channel, joining);
    s.channel.send({ id: s.lastId + 1, event: 'error', data: { code: 'INTERNAL', message: 'The stream failed' } });
    end(streams, s);
    return 'joined';
  }
  if (s.ended) return 'ended';
  for (let i = s.lastId; i < events.length; i++) s.channel.send({ id: i + 1, event: events[i].event, data: events[i].data });
  s.lastId = Math.max(s.lastId, events.length);
  if (joining && !joining.left) attach(s.channel, joining);
  if (events.at(-1)?.event === 'done') end(streams, s);
  return 'joined';
}

function unref(streams: Streams, s: Shared): void {
  s.refs -= 1;
  if (s.refs <= 0) end(streams, s);
}

/** Ends the channel: its clients' responses, its ping timer, its subscription and its entry. */
function end(streams: Streams, s: Shared): void {
  if (s.ended) return;
  s.ended = true;
  if (streams.shared.get(s.key) === s) streams.shared.delete(s.key);
  void s.subscription.then(
    (unsubscribe) => unsubscribe(),
    () => undefined,
  );
  s.channel.close();
}
