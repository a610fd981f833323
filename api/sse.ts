/**
 * The one server-sent-events helper: headers, an `id:` on every event, replay after `Last-Event-ID`, heartbeats,
 * no compression, cleanup when the client goes away. After the first byte an error is an `error` event, never a
 * status code.
 */
import type { Context } from 'koa';

const HEARTBEAT_MS = 15_000;

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

export function openSse(ctx: Context): SseStream {
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
    clearInterval(heartbeat);
    controller.abort();
    resolveDone();
  };
  ctx.req.on('close', finish);
  res.on('close', finish);

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
