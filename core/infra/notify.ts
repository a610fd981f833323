/**
 * Postgres LISTEN/NOTIFY, shared by a process: one dedicated connection listens; callers subscribe by channel.
 * Used to wait for job completion without polling and to keep in-process search indexes current.
 */
import pg from 'pg';
import type { Logger } from './logger.js';

export type NotifyHandler = (payload: string) => void;

export interface Waiter {
  /** The first matching payload, or undefined after timeoutMs (or on abort). */
  wait(timeoutMs: number, signal?: AbortSignal): Promise<string | undefined>;
  cancel(): void;
}

export interface Notifier {
  subscribe(channel: string, handler: NotifyHandler): Promise<() => void>;
  /**
   * Subscribes now (LISTEN is active when this resolves), so that a caller can check the current state and then wait
   * without missing a notification sent in between.
   */
  waiter(channel: string, match: (payload: string) => boolean): Promise<Waiter>;
  close(): Promise<void>;
}

export const CHANNELS = {
  /** payload: JSON { kind: 'execution'|'package_import'|'scenario_run'|'scenario_batch', id, status } */
  jobs: 'toolshed_jobs',
  /**
   * payload: tool id (insert, or an update of a field the list order or the search index sees, or of its package),
   * `~<id>` (an update of other fields only: counters, health check time and error, …) or `-<id>` (delete)
   */
  tools: 'toolshed_tools',
  /** payload: the key hash of a revoked or deleted key, or `*` (a user changed: drop every cached caller) */
  keys: 'toolshed_keys',
} as const;

export function createNotifier(connectionString: string, logger?: Logger): Notifier {
  const handlers = new Map<string, Set<NotifyHandler>>();
  let client: pg.Client | undefined;
  let connecting: Promise<pg.Client> | undefined;
  let closed = false;
  /** The LISTEN of each channel on the current connection (a reconnect LISTENs every channel again in connect()). */
  const listening = new Map<string, Promise<unknown>>();

  const connect = (): Promise<pg.Client> => {
    if (closed) return Promise.reject(new Error('notifier closed'));
    if (client) return Promise.resolve(client);
    connecting ??= (async () => {
      const c = new pg.Client({ connectionString, application_name: 'toolshed-notify' });
      c.on('notification', (msg) => {
        for (const h of handlers.get(msg.channel) ?? []) {
          try {
            h(msg.payload ?? '');
          } catch (err) {
            logger?.error({ err }, 'notify handler failed');
          }
        }
      });
      c.on('error', (err) => {
        logger?.warn({ err: err.message }, 'notify connection lost; reconnecting');
        client = undefined;
        connecting = undefined;
        if (!closed) setTimeout(() => void resubscribe(), 500).unref();
      });
      try {
        await c.connect();
        for (const channel of handlers.keys()) await c.query(`LISTEN "${channel}"`);
        // close() ran while this connection was being made: it must not outlive the notifier (a subscribe racing a
        // shutdown otherwise left an idle LISTEN connection open, which a test's forced drop of its database then
        // terminated: 'terminating connection due to administrator command').
        if (closed) throw new Error('notifier closed');
      } catch (err) {
        // A failed attempt must not be remembered: the next subscribe or resubscribe tries afresh (a database that
        // was down during one attempt would otherwise leave every later LISTEN failing with the same error).
        connecting = undefined;
        await c.end().catch(() => undefined);
        throw err;
      }
      client = c;
      return c;
    })();
    return connecting;
  };

  const resubscribe = async () => {
    try {
      await connect();
    } catch (err) {
      logger?.warn({ err: (err as Error).message }, 'notify reconnect failed');
      if (!closed) setTimeout(() => void resubscribe(), 1000).unref();
    }
  };

  return {
    async subscribe(channel, handler) {
      let set = handlers.get(channel);
      const fresh = !set;
      if (!set) handlers.set(channel, (set = new Set()));
      set.add(handler);
      const c = await connect();
      // Every subscriber of a channel waits for its one LISTEN, not only the first: a second one arriving while the
      // first's LISTEN was on its way used to return before it was active, and could miss what came next.
      let listen = listening.get(channel);
      if (fresh || !listen) {
        listen = c.query(`LISTEN "${channel}"`);
        listening.set(channel, listen);
        listen.catch(() => listening.delete(channel));
      }
      await listen;
      return () => {
        set!.delete(handler);
      };
    },
    async waiter(channel, match) {
      let hit: string | undefined;
      let wake: ((p: string | undefined) => void) | undefined;
      const unsubscribe = await this.subscribe(channel, (p) => {
        if (hit !== undefined || !match(p)) return;
        hit = p;
        wake?.(p);
      });
      return {
        cancel: unsubscribe,
        async wait(timeoutMs, signal) {
          if (hit !== undefined) {
            unsubscribe();
            return hit;
          }
          let timer: NodeJS.Timeout | undefined;
          let onAbort: (() => void) | undefined;
          try {
            return await new Promise<string | undefined>((resolve) => {
              wake = resolve;
              timer = setTimeout(() => resolve(undefined), timeoutMs);
              onAbort = () => resolve(undefined);
              signal?.addEventListener('abort', onAbort, { once: true });
            });
          } finally {
            clearTimeout(timer);
            // The caller's signal outlives this wait (a request's, over several rechecks): leave no listener on it.
            if (onAbort) signal?.removeEventListener('abort', onAbort);
            unsubscribe();
          }
        },
      };
    },
    async close() {
      closed = true;
      const pending = connecting;
      const c = client;
      client = undefined;
      await c?.end().catch(() => undefined);
      // A connection still being made ends itself when it sees `closed` (above); wait for that, so that a closed
      // notifier holds no connection.
      await pending?.catch(() => undefined);
    },
  };
}
