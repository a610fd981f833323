/**
 * An imported MCP server's `notifications/progress`, from the worker that calls it (sandbox/mcp-client.ts) to the API
 * process whose MCP client asked for them with a `progressToken` (api/mcp/call.ts): Postgres NOTIFY on a channel of
 * its own. Payloads are small (the execution id, the numbers, a message cut to MAX_MESSAGE_CHARS) and coalesced per
 * execution: at most one NOTIFY every MIN_INTERVAL_MS, the latest progress winning, and the last one sent before the
 * execution finishes. Progress is only asked of the server when the client asked for it (the job's `progress` flag).
 */
import type { Knex } from 'knex';
import type { Notifier } from '../infra/notify.js';

export const PROGRESS_CHANNEL = 'toolshed_progress';
export const MIN_INTERVAL_MS = 100;
export const MAX_MESSAGE_CHARS = 500;

export interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

interface Wire {
  e: string;
  p?: number;
  t?: number;
  m?: string;
  /** The last one of the execution: nothing follows (sent before it is finished). */
  d?: 1;
}

/** A progress notification's params as the server sent them, checked (undefined when it is not one). */
export function progressOf(raw: { progress?: unknown; total?: unknown; message?: unknown }): Progress | undefined {
  if (typeof raw.progress !== 'number' || !Number.isFinite(raw.progress)) return undefined;
  return {
    progress: raw.progress,
    ...(typeof raw.total === 'number' && Number.isFinite(raw.total) ? { total: raw.total } : {}),
    ...(typeof raw.message === 'string' && raw.message !== '' ? { message: raw.message.slice(0, MAX_MESSAGE_CHARS) } : {}),
  };
}

/**
 * Worker side: a sink for one execution's progress that NOTIFYs at most every MIN_INTERVAL_MS (the latest wins);
 * `flush` sends what is pending, marked as the last (before the execution is finished: the API waits for that mark
 * before it answers, so that the progress arrives before the result).
 * `redact` removes the execution's env values from a message.
 */
export function progressPublisher(db: Knex, executionId: string, redact: (s: string) => string): { push(p: Progress): void; flush(): Promise<void> } {
  let pending: Progress | undefined;
  let lastSent = 0;
  let timer: NodeJS.Timeout | undefined;
  let sending: Promise<void> = Promise.resolve();
  let done = false;
  const send = (last = false) => {
    clearTimeout(timer);
    timer = undefined;
    const p = pending;
    pending = undefined;
    if ((!p && !last) || done) return sending;
    if (last) done = true;
    lastSent = Date.now();
    const wire: Wire = {
      e: executionId,
      ...(p ? { p: p.progress } : {}),
      ...(p?.total !== undefined ? { t: p.total } : {}),
      ...(p?.message ? { m: redact(p.message) } : {}),
      ...(last ? { d: 1 as const } : {}),
    };
    sending = sending.then(() =>
      db.raw('select pg_notify(?, ?)', [PROGRESS_CHANNEL, JSON.stringify(wire)]).then(
        () => undefined,
        () => undefined,
      ),
    );
    return sending;
  };
  return {
    push(p) {
      pending = p;
      const wait = MIN_INTERVAL_MS - (Date.now() - lastSent);
      if (wait <= 0) void send();
      else timer ??= setTimeout(() => void send(), wait).unref();
    },
    flush: () => send(true),
  };
}

/**
 * API side: calls `on` with each progress of the execution that `idOf` names (once it is known: the id is chosen at
 * enqueue, after the subscription is made so that nothing is missed). Resolves once LISTEN is active; returns the
 * unsubscribe.
 */
export async function subscribeProgress(
  notifier: Notifier,
  idOf: () => string | undefined,
  on: (p: Progress | undefined, last: boolean) => void,
): Promise<() => void> {
  return notifier.subscribe(PROGRESS_CHANNEL, (payload) => {
    const id = idOf();
    if (!id || !payload.includes(id)) return;
    let w: Wire;
    try {
      w = JSON.parse(payload) as Wire;
    } catch {
      return;
    }
    if (w.e !== id) return;
    on(progressOf({ progress: w.p, total: w.t, message: w.m }), w.d === 1);
  });
}
