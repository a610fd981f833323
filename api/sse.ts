/**
 * The one server-sent-events helper: headers, an `id:` on every event, replay after `Last-Event-ID`, heartbeats,
 * no compression, cleanup when the client goes away. After the first byte an error is an `error` event, never a
 * status code.
 *
 * Every open stream holds a socket, a LISTEN subscription and a timer until its client leaves, so open streams are
 * bounded per caller and per process; over a bound the request is a 429 before any byte of the stream is written.
 */
import type { Context } from 'koa';
import type { Config } from '../core/config.js';
import { errors } from '../core/errors.js';
import { callerIdentity } from './middleware/identity.js';

const HEARTBEAT_MS = 15_000;
/** What a refused client is told to wait: streams last seconds to minutes, so a retry soon may find a free slot. */
const RETRY_AFTER_SECONDS = 5;

export type SseLimits = Pick<Config, 'SSE_MAX_STREAMS_PER_CALLER' | 'SSE_MAX_STREAMS'>;

/** Open streams, in total and per caller identity. */
interface Slots {
  total: number;
  byCaller: Map<string, number>;
}

/**
 * One count per configuration object, i.e. per app: one per API process in production, and separate apps in one
 * test process (each with its own limits) do not share counts.
 */
const slotsByConfig = new WeakMap<SseLimits, Slots>();

/** Takes a stream slot for the caller, or throws RATE_LIMITED; returns the release (safe to call more than once). */
function acquireSlot(limits: SseLimits, caller: string): () => void {
  let slots = slotsByConfig.get(limits);
  if (!slots) slotsByConfig.set(limits, (slots = { total: 0, byCaller: new Map() }));
  const mine = slots.byCaller.get(caller) ?? 0;
  // 0 means "no bound", as for the rate limits.
  const overCaller = limits.SSE_MAX_STREAMS_PER_CALLER > 0 && mine >= limits.SSE_MAX_STREAMS_PER_CALLER;
  const overTotal = limits.SSE_MAX_STREAMS > 0 && slots.total >= limits.SSE_MAX_STREAMS;
  if (overCaller || overTotal) throw errors.rateLimited(RETRY_AFTER_SECONDS);
  slots.total += 1;
  slots.byCaller.set(caller, mine + 1);
  let released = false;
  const s = slots;
  return () => {
    if (released) return;
    released = true;
    s.total -= 1;
    const left = (s.byCaller.get(caller) ?? 1) - 1;
    if (left > 0) s.byCaller.set(caller, left);
    else s.byCaller.delete(caller);
  };
}

export interface SseStream {
  /** Sends an event with the given sequence id unless the client already has it (Last-Event-ID). */
  send(event: string, data: unknown, id?: number): void;
  /** The last id sent (or replayed past). */
  readonly lastId: number;
  readonly closed: boolean;
  /** Resolves when the client disconnects or close() is called. */
  readonly done: Promise<void>;
  /** An AbortSignal that fires when the stream ends. */
  readonly signal: AbortSignal;
  close(): void;
}

/** Opens the stream, or throws RATE_LIMITED (before anything is written) when the caller or the process is at its bound. */
export function openSse(ctx: Context, limits: SseLimits): SseStream {
  const release = acquireSlot(limits, callerIdentity(ctx));
  const resumeAfter = Number.parseInt(ctx.get('last-event-id') || '0', 10) || 0;
  ctx.req.socket.setTimeout(0);
  ctx.req.socket.setNoDelay(true);
  ctx.respond = false;
  const res = ctx.res;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    'x-request-id': String(ctx.state.requestId ?? ''),
  });
  res.write(': stream open\n\n');
  const controller = new AbortController();
  let lastId = resumeAfter;
  let closed = false;
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));
  const heartbeat = setInterval(() => res.write(': ping\n\n'), HEARTBEAT_MS);
  const finish = () => {
    if (closed) return;
    closed = true;
    release();
    clearInterval(heartbeat);
    controller.abort();
    resolveDone();
  };
  // The slot is released in finish(), when the stream ends for any reason: the client leaves, close(), a socket error.
  ctx.req.on('close', finish);
  res.on('close', finish);
  // A client that left while the route was still loading has no 'close' to come: end (and release) at once.
  if (res.destroyed || ctx.req.socket.destroyed) finish();

  return {
    send(event, data, id) {
      if (closed) return;
      const seq = id ?? lastId + 1;
      if (seq <= lastId) return; // the client has it already
      lastId = seq;
      res.write(`id: ${seq}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    },
    get lastId() {
      return lastId;
    },
    get closed() {
      return closed;
    },
    done,
    signal: controller.signal,
    close() {
      if (!closed) res.end();
      finish();
    },
  };
}
