/**
 * How a worker learns that an execution it is running was cancelled (core/executions/cancel.ts): one LISTEN on the
 * cancel channel for the whole process, dispatching to the executions held here; each held execution's signal aborts
 * when its cancel arrives, which stops its sandbox (the same path as a shutdown's abort). A NOTIFY sent while the
 * listening connection was down is lost, so the flag the cancel leaves on the row is read when an execution is taken
 * and re-read every RECHECK_MS while any is held.
 */
import type { Knex } from 'knex';
import type { Logger } from '../core/infra/logger.js';
import type { Notifier } from '../core/infra/notify.js';
import { CANCEL_CHANNEL, findCancelRequested } from '../core/repos/executions.js';

const RECHECK_MS = 5_000;

export interface CancelHold {
  /** Aborts when a cancel reaches the execution. */
  signal: AbortSignal;
  release(): void;
}

export interface CancelWatch {
  hold(executionId: string): Promise<CancelHold>;
  close(): void;
}

export function createCancelWatch(db: Knex, notifier: Notifier, logger: Logger, recheckMs = RECHECK_MS): CancelWatch {
  const held = new Map<string, AbortController>();
  let subscribed: Promise<unknown> | undefined;
  const cancel = (id: string) => {
    const c = held.get(id);
    if (c && !c.signal.aborted) {
      logger.info({ executionId: id }, 'execution cancelled by its caller; stopping it');
      c.abort();
    }
  };
  const subscribe = () =>
    (subscribed ??= notifier.subscribe(CANCEL_CHANNEL, cancel).catch((err: Error) => {
      // Retried by the next hold; the recheck covers the meantime.
      subscribed = undefined;
      logger.warn({ err: err.message }, 'could not listen for cancels; rechecking the records instead');
    }));
  const recheck = async (ids: string[]) => {
    for (const id of await findCancelRequested(db, ids)) cancel(id);
  };
  const timer = setInterval(() => {
    if (held.size > 0) recheck([...held.keys()]).catch((err: Error) => logger.warn({ err: err.message }, 'cancel recheck failed'));
  }, recheckMs);
  timer.unref();
  return {
    async hold(executionId) {
      const controller = new AbortController();
      held.set(executionId, controller);
      await subscribe();
      // A cancel that came before the LISTEN (or before this hold) left its flag: read it once now.
      await recheck([executionId]).catch((err: Error) => logger.warn({ err: err.message }, 'cancel check failed'));
      return {
        signal: controller.signal,
        release: () => {
          if (held.get(executionId) === controller) held.delete(executionId);
        },
      };
    },
    close() {
      clearInterval(timer);
      held.clear();
    },
  };
}
