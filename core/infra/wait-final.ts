/**
 * Waiting for a record to become final: woken by its NOTIFY, and re-reading the row every RECHECK_MS as well, since
 * a NOTIFY sent while the listening connection was down (a database restart) is lost for good. A database that is
 * unreachable for a while is waited out (up to the deadline) rather than turned into an error. Used by the waits of
 * executions, scenario runs and imports.
 */
import { isConnectionError } from './db.js';
import { CHANNELS, type Notifier, type Waiter } from './notify.js';

const RECHECK_MS = 3_000;

export async function waitForFinal<T>(
  notifier: Notifier,
  o: { match: (payload: string) => boolean; read: () => Promise<T>; isFinal: (row: T) => boolean; waitMs: number; signal?: AbortSignal },
): Promise<T> {
  const deadline = Date.now() + o.waitMs;
  let last: T | undefined;
  for (;;) {
    let waiter: Waiter | undefined;
    try {
      waiter = await notifier.waiter(CHANNELS.jobs, o.match);
      last = await o.read();
      const left = deadline - Date.now();
      if (o.isFinal(last) || left <= 0 || o.signal?.aborted) return last;
      if ((await waiter.wait(Math.min(left, RECHECK_MS), o.signal)) !== undefined) return await o.read();
    } catch (err) {
      if (!isConnectionError(err) || Date.now() >= deadline || o.signal?.aborted) {
        if (last !== undefined && isConnectionError(err)) return last;
        throw err;
      }
      await new Promise((r) => setTimeout(r, Math.min(RECHECK_MS, Math.max(0, deadline - Date.now()))));
    } finally {
      waiter?.cancel();
    }
  }
}
